"""The public tests as a student runs them: `pytest` inside the assignment folder."""

import re

import pytest

from autograder.build import write_reference_submission
from autograder.engine.registry import load_config
from student_folders import CORPUS, REFERENCE, run_in_folder

FUNCTIONS = [item.id for item in load_config("lec01_codesign").items_of("function")]


def _pytest(folder, *, plugins=False):
    """pytest as a student runs it; plugins=True also loads what a student's environment has installed.
    (How long it takes is measured in benchmarks/bench_student_folder.py, not asserted here.)"""
    proc = run_in_folder(folder, "-m", "pytest", "-p", "no:cacheprovider", plugins=plugins)
    return proc, proc.stdout + proc.stderr


def _summary(output):
    """function -> status text, from the one-line-per-function summary."""
    lines = output.split("公开测试小结", 1)[1].splitlines()
    return {line.split()[0]: line.split(maxsplit=1)[1] for line in lines if line.startswith("  ")}


def test_the_skeleton_shows_every_function_as_not_implemented_without_tracebacks(student_folder):
    proc, output = _pytest(student_folder, plugins=True)
    assert proc.returncode == 1, output
    summary = _summary(output)
    assert {f: summary[f] for f in FUNCTIONS} == {f: "未实现" for f in FUNCTIONS}
    assert "Traceback" not in output and "raise NotImplementedError" not in output
    # pytest's own last line agrees with the exit status: nothing unfinished is counted as "skipped"
    last = [line for line in output.splitlines() if line.startswith("=")][-1]
    assert "skipped" not in last and re.search(r" \d+ 未实现 in ", last), last


@pytest.mark.parametrize("implementation", ["reference", "correct_loops", "correct_ml_dtypes"])
def test_every_correct_implementation_passes(student_folder, implementation):
    if implementation == "reference":
        write_reference_submission("lec01_codesign", student_folder)
    else:
        (student_folder / "codesign.py").write_text((CORPUS / implementation / "codesign.py").read_text())
    proc, output = _pytest(student_folder, plugins=implementation == "reference")
    assert proc.returncode == 0, output
    assert all(_summary(output)[f].startswith("通过") for f in FUNCTIONS)
    assert "公开测试全部通过" in output


def test_a_wrong_tie_rule_is_explained_in_chinese(student_folder):
    wrong = REFERENCE.read_text().replace("q = np.minimum(np.rint(a / step) * step, E2M1_MAX)",
                                          "q = np.minimum(np.ceil(a / step - 0.5) * step, E2M1_MAX)")
    assert wrong != REFERENCE.read_text()
    (student_folder / "codesign.py").write_text(wrong)
    proc, output = _pytest(student_folder)
    assert proc.returncode == 1
    summary = _summary(output)
    assert summary["to_e2m1"].startswith("不通过") and summary["round_e4m3"].startswith("通过")
    # names the function, the input, what came back, what was expected, and why
    assert "to_e2m1([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]) 返回 [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0]" in output
    assert "期望 [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0]" in output and "平局取尾数为偶数" in output
    assert "Traceback" not in output


def test_a_syntax_error_gets_one_clear_message(student_folder):
    source = (student_folder / "codesign.py").read_text().replace("def to_e2m1(y):", "def to_e2m1(y)")
    (student_folder / "codesign.py").write_text(source)
    proc, output = _pytest(student_folder)
    assert proc.returncode != 0
    assert "codesign.py 第" in output and "语法错误" in output and "def to_e2m1(y)" in output
    assert "Traceback" not in output


def test_a_missing_function_is_named(student_folder):
    write_reference_submission("lec01_codesign", student_folder)
    path = student_folder / "codesign.py"
    path.write_text(path.read_text().replace("def trend_row(", "def trend_row_v2("))
    proc, output = _pytest(student_folder)
    assert proc.returncode == 1
    assert "codesign.py 里找不到函数 trend_row" in output
    assert _summary(output)["trend_row"].startswith("不通过")


def test_a_notebook_that_is_not_json_is_reported_plainly(student_folder):
    path = student_folder / "handout.ipynb"
    path.write_text(path.read_text()[:5000])
    proc, output = _pytest(student_folder)
    assert proc.returncode == 1
    assert "handout.ipynb 不是合法的 JSON" in output
    assert "Traceback" not in output and "JSONDecodeError" not in output
