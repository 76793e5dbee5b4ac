"""
pytest 的设置：没实现的函数汇总成"一个函数一行"的小结，而不是满屏的 traceback。

- 还在 raise NotImplementedError 的例子单独记为"未实现"（pytest 最后一行写成"N 未实现"，不写 skipped），
  小结里那个函数显示"未实现"，pytest 的退出码是 1（没做完就不算通过）；
- codesign.py 有语法错误或导入出错时，只打印一条中文说明就停下。
"""

import pytest

from public_checks import StudentFileError, load_student_module
from selfcheck import NOTEBOOK, functions

NOT_IMPLEMENTED = "未实现"

_subject_of: dict[str, str] = {}  # 测试 nodeid -> 函数名（或 notebook）
_outcomes: dict[str, list[str]] = {}  # 函数名 -> 每个例子的结果


def pytest_configure(config):
    if config.option.tbstyle == "auto":
        config.option.tbstyle = "short"


def pytest_collection_modifyitems(items):
    for item in items:
        case = item.callspec.params.get("case") if hasattr(item, "callspec") else None
        _subject_of[item.nodeid] = case.function if case is not None else NOTEBOOK.name


@pytest.fixture(scope="session")
def student_module():
    try:
        return load_student_module()
    except StudentFileError as err:
        pytest.exit(str(err), returncode=1)


def pytest_runtest_logreport(report):
    subject = _subject_of.get(report.nodeid)
    if subject is None or (report.when != "call" and report.passed):
        return
    if report.skipped and NOT_IMPLEMENTED in str(report.longrepr):
        outcome = NOT_IMPLEMENTED
    else:
        outcome = "passed" if report.passed else "failed"
    _outcomes.setdefault(subject, []).append(outcome)


def pytest_report_teststatus(report):
    """未实现的例子不算"跳过"：在进度行里记为 N，在 pytest 最后一行里记为"未实现"。"""
    if report.skipped and NOT_IMPLEMENTED in str(report.longrepr) and report.nodeid in _subject_of:
        return NOT_IMPLEMENTED, "N", NOT_IMPLEMENTED
    return None


def pytest_terminal_summary(terminalreporter):
    if not _outcomes:
        return
    terminalreporter.section("公开测试小结")
    subjects = (*functions(), NOTEBOOK.name)
    width = max(len(s) for s in subjects) + 2
    for subject in subjects:
        outcomes = _outcomes.get(subject)
        if not outcomes:
            continue
        total, passed = len(outcomes), outcomes.count("passed")
        if NOT_IMPLEMENTED in outcomes:
            status = NOT_IMPLEMENTED
        elif passed == total:
            status = f"通过（{passed}/{total}）"
        else:
            status = f"不通过：{total - passed}/{total} 个例子失败（说明见上面的 FAILURES）"
        terminalreporter.write_line(f"  {subject:<{width}} {status}")
    if all(o == "passed" for outcomes in _outcomes.values() for o in outcomes):
        terminalreporter.write_line("公开测试全部通过。评分时还有更多隐藏测试，请确保实现完全符合 docstring。")


def pytest_sessionfinish(session):
    if any(NOT_IMPLEMENTED in outcomes for outcomes in _outcomes.values()) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
