"""
公开测试：在本文件夹里运行 pytest。

每个例子写明了输入、期望值和理由（见 public_cases.py）；还没实现的函数在最后的小结里显示为"未实现"。
公开测试全部通过不等于满分：评分时还有更多隐藏测试（随机数据、更多边界）。
"""

import pytest

from public_cases import CASES
from public_checks import run_case
from selfcheck import notebook_problems


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_public_case(case, student_module):
    outcome = run_case(student_module, case)
    if outcome.status == "not_implemented":
        pytest.skip(f"未实现：{case.function}")
    if not outcome.ok:
        pytest.fail(outcome.message, pytrace=False)


def test_notebook_is_intact():
    """handout.ipynb 是合法的 notebook，评分格一个不少、没有重复。"""
    problems = notebook_problems()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
