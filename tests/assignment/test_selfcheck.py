"""check() and `python selfcheck.py`: well-formedness only, in Chinese, never the key; silent or
failing loudly under the graders."""

import re
import importlib
import json
import math
import sys
import tomllib

import numpy as np
import pytest

from autograder.build import write_reference_submission
from autograder.engine.vocabulary import TEXT_STUB
from autograder.engine.registry import load_config
from student_folders import run_in_folder, type_student_id
from solutions.lec01_codesign.answers import answer_key

CONFIG = load_config("lec01_codesign")
QUESTIONS = [item.id for item in CONFIG.items_of("number", "choice", "text")]


@pytest.fixture
def load_selfcheck(monkeypatch):
    """Import the selfcheck module of a given student folder, fresh, under the given environment."""
    def load(folder, **env):
        monkeypatch.setattr(sys, "path", [str(folder), *sys.path])
        for name in ("NBGRADER_EXECUTION", "CS349E_TRUSTED_GRADING"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        for name in ("selfcheck", "public_checks", "public_cases"):
            sys.modules.pop(name, None)
        return importlib.import_module("selfcheck")

    yield load
    for name in ("selfcheck", "public_checks", "public_cases"):
        sys.modules.pop(name, None)


def _notebook_run(selfcheck, code):
    """Run `code` the way a notebook cell does: in a namespace where check() was imported."""
    namespace = {"check": selfcheck.check}
    # the notebook's first code cell: a student on the roster types their id and gets VARIANT
    from autograder.engine.variants import variant_token

    exec(f'STUDENT_ID = "alice"\nVARIANT_TOKEN = "{variant_token("lec01_codesign", "alice")}"\n'
         'from variant import variant_for\nVARIANT = variant_for(STUDENT_ID, VARIANT_TOKEN)', namespace)
    exec(code, namespace)
    return namespace


# --- modes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("env, mode", [
    ({}, "student"),
    ({"CS349E_TRUSTED_GRADING": "1"}, "trusted"),
    ({"NBGRADER_EXECUTION": "autograde"}, "autograde"),
    ({"NBGRADER_EXECUTION": "autograde", "CS349E_TRUSTED_GRADING": "1"}, "autograde"),
    ({"NBGRADER_EXECUTION": "validate"}, "student"),
])
def test_the_mode_comes_from_the_environment(student_folder, load_selfcheck, env, mode):
    assert load_selfcheck(student_folder).detect_mode(env) == mode


def test_trusted_mode_does_nothing(student_folder, load_selfcheck, capsys):
    selfcheck = load_selfcheck(student_folder, CS349E_TRUSTED_GRADING="1")
    assert _notebook_run(selfcheck, 'result = check("q01_compute_headline")')["result"] is None
    assert capsys.readouterr().out == ""


def test_autograde_mode_does_nothing(student_folder, load_selfcheck, capsys):
    """nbgrader's autograde pipeline writes the pinned score and explanation into every grade cell."""
    selfcheck = load_selfcheck(student_folder, NBGRADER_EXECUTION="autograde")
    assert _notebook_run(selfcheck, 'result = check("q01_compute_headline")')["result"] is None
    assert capsys.readouterr().out == ""


def test_the_mode_is_fixed_at_import(student_folder, load_selfcheck, monkeypatch, capsys):
    selfcheck = load_selfcheck(student_folder)
    monkeypatch.setenv("CS349E_TRUSTED_GRADING", "1")  # a later cell editing os.environ
    _notebook_run(selfcheck, 'check("q01_compute_headline")')
    assert "还没有作答" in capsys.readouterr().out


# --- student mode: report questions ------------------------------------------------------------
def test_student_mode_reads_the_answer_from_the_notebook_namespace(student_folder, load_selfcheck, capsys):
    selfcheck = load_selfcheck(student_folder)
    _notebook_run(selfcheck, 'check("q01_compute_headline")\nq01_compute_headline = 7\ncheck("q01_compute_headline")')
    unanswered, answered = capsys.readouterr().out.strip().splitlines()
    assert unanswered.startswith("✗ q01_compute_headline：还没有作答")
    assert answered.startswith("✓ q01_compute_headline = 7：格式正确")


@pytest.mark.parametrize("item_id, value, message", [
    ("q01_compute_headline", True, "是布尔值"),
    ("q01_compute_headline", "7.6", "是字符串 '7.6'，应该是一个数"),
    ("q01_compute_headline", np.array([7.6]), "应该是一个数"),
    ("q01_compute_headline", float("nan"), "有限的数"),
    ("q08_decode_tokens_per_s", 4.7e13, "不在这题很宽的合理范围"),
    ("q03_least_grown", 3, "应该是一个字符串"),
    ("q03_least_grown", "E", "不是选项之一"),
    ("q03_least_grown", "e ", "不是选项之一"),
    ("q14_mla_effect", "D", "不是选项之一"),
])
def test_malformed_answers_are_explained(student_folder, load_selfcheck, item_id, value, message):
    verdict = load_selfcheck(student_folder).verdict(item_id, {"VARIANT": {}, item_id: value})
    assert verdict.startswith(f"✗ {item_id}：") and message in verdict


def _plausible_wrong(item_id: str, right: float) -> float:
    """A wrong number inside the item's plausible range (a share near 100 % has no room above it)."""
    low, high = _PLAUSIBLE.get(item_id, (-math.inf, math.inf))
    return next(v for v in (right * 1.37, right / 1.37) if low <= v <= high)


_PLAUSIBLE = {entry["id"]: tuple(entry["plausible"]) for entry in
              tomllib.loads((CONFIG.folder / "grading.toml").read_text(encoding="utf-8"))["items"]
              if "plausible" in entry}


def test_well_formed_answers_pass_whatever_their_value(student_folder, load_selfcheck):
    selfcheck = load_selfcheck(student_folder)
    key = answer_key()
    for item in CONFIG.items_of("number", "choice"):
        if item.id not in key:  # a measured item: its key is a check, and any plausible value is right
            continue
        right = key[item.id]
        wrong = _plausible_wrong(item.id, right) if item.kind == "number" else next(c for c in item.choices if c != right)
        verdicts = [selfcheck.verdict(item.id, {"VARIANT": {}, item.id: v}).replace(repr(v), "<v>") for v in (right, wrong)]
        assert verdicts[0] == verdicts[1], item.id  # the same words for a right and a wrong answer
        assert verdicts[0].startswith(f"✓ {item.id}")


@pytest.mark.parametrize("answer", ["d", " D", "d "])
def test_a_choice_letter_in_any_case_is_well_formed_as_the_grader_accepts_it(student_folder, load_selfcheck, answer):
    """One rule for selfcheck and grader: letters are compared case-insensitively, blanks ignored."""
    from autograder.engine.report_items import grade_report
    from autograder.sandbox import NotebookOutcome

    verdict = load_selfcheck(student_folder).verdict("q03_least_grown", {"VARIANT": {}, "q03_least_grown": answer})
    assert verdict.startswith("✓ q03_least_grown"), verdict
    item = next(i for i in CONFIG.items_of("choice") if i.id == "q03_least_grown")
    [graded] = grade_report([item], {item.id: "D"}, NotebookOutcome("ok", {item.id: answer}, (), ""), "handout.ipynb")
    assert graded.score == item.points


def test_a_percent_question_reminds_about_fractions_without_judging(student_folder, load_selfcheck):
    """The reminder is the same for every value: q17c's right answer can be 0.73 %, and a note for
    values below 1 alone told its author to write 73."""
    selfcheck = load_selfcheck(student_folder)
    verdicts = [selfcheck.verdict("q16_software_exp_share", {"VARIANT": {}, "q16_software_exp_share": v}).replace(repr(v), "<v>")
                for v in (0.49, 49.0)]
    assert verdicts[0] == verdicts[1] and verdicts[0].startswith("✓") and "12% 写成 12，不写 0.12" in verdicts[0]
    plain = selfcheck.verdict("q18_model_speedup", {"VARIANT": {}, "q18_model_speedup": 0.49})
    assert "12%" not in plain   # only where the unit is %


def test_text_and_unknown_items(student_folder, load_selfcheck):
    selfcheck = load_selfcheck(student_folder)
    assert "人工评分" in selfcheck.verdict("q20_explain_scaling", {"VARIANT": {}})
    unknown = selfcheck.verdict("q99", {"VARIANT": {}})
    assert unknown.startswith("✗ 未知的评分项 'q99'") and "round_e4m3" in unknown and "q21_explain_codesign" in unknown


# --- student mode: functions -----------------------------------------------------------------
def test_function_items_run_the_public_checks(student_folder, load_selfcheck):
    selfcheck = load_selfcheck(student_folder)
    assert "未实现" in selfcheck.verdict("quantize", {"VARIANT": {}})
    write_reference_submission("lec01_codesign", student_folder)
    type_student_id(student_folder)
    n = len(selfcheck.public_checks.cases_of("quantize")) if hasattr(selfcheck, "public_checks") else None
    assert re.match(r"✓ quantize：公开检查 (\d+)/\1 通过", selfcheck.verdict("quantize", {"VARIANT": {}}))
    assert n is None or f"{n}/{n}" in selfcheck.verdict("quantize", {"VARIANT": {}})


def test_a_broken_codesign_gets_a_message_not_a_traceback(student_folder, load_selfcheck, capsys):
    (student_folder / "codesign.py").write_text("import numpy as np\ndef round_e4m3(x:\n")
    selfcheck = load_selfcheck(student_folder)
    _notebook_run(selfcheck, 'check("round_e4m3")')
    out = capsys.readouterr().out
    assert out.startswith("✗ round_e4m3：codesign.py 第 2 行有语法错误") and "Traceback" not in out


# --- the notebook file -----------------------------------------------------------------------
def test_the_released_notebook_is_intact_and_wholly_unanswered(student_folder, load_selfcheck):
    selfcheck = load_selfcheck(student_folder)
    assert selfcheck.notebook_problems() == []
    assert selfcheck.unanswered() == QUESTIONS


def test_the_reference_notebook_is_wholly_answered(student_folder, load_selfcheck):
    write_reference_submission("lec01_codesign", student_folder)
    type_student_id(student_folder)
    assert load_selfcheck(student_folder).unanswered() == []


def test_deleted_and_duplicated_grade_cells_are_named(student_folder, load_selfcheck):
    path = student_folder / "handout.ipynb"
    nb = json.loads(path.read_text())
    grade_id = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb["cells"]]
    duplicate = nb["cells"][grade_id.index("quantize")]
    nb["cells"].pop(grade_id.index("q02_format_gain"))
    nb["cells"].append(duplicate)
    path.write_text(json.dumps(nb))
    problems = load_selfcheck(student_folder).notebook_problems()
    assert any("评分格 q02_format_gain 不见了" in p for p in problems)
    assert any("评分格 quantize 出现了 2 次" in p for p in problems)


def test_the_text_stub_is_the_one_the_build_writes(student_folder, load_selfcheck):
    assert load_selfcheck(student_folder).TEXT_STUB == TEXT_STUB


def test_the_command_line_self_check(student_folder):
    type_student_id(student_folder)  # the released notebook with only the id filled in
    proc = run_in_folder(student_folder, "selfcheck.py")
    assert proc.returncode == 1 and "未实现" in proc.stdout and "还没作答的题" in proc.stdout
    write_reference_submission("lec01_codesign", student_folder)
    type_student_id(student_folder)
    proc = run_in_folder(student_folder, "selfcheck.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the functions, the file, the answers, and (per-student variants) the student's parameters
    assert proc.stdout.count("✓") == len(CONFIG.items_of("function")) + 3
    (student_folder / "handout.ipynb").write_text("{not json")
    proc = run_in_folder(student_folder, "selfcheck.py")
    assert proc.returncode == 1 and "不是合法的 JSON" in proc.stdout and "Traceback" not in proc.stderr


def test_public_functions_follow_grading_toml(student_folder, load_selfcheck):
    functions = tuple(i.id for i in CONFIG.items_of("function"))
    assert tuple(load_selfcheck(student_folder).functions()) == functions
    assert {case.function for case in importlib.import_module("public_cases").CASES} == set(functions)
    readme = (CONFIG.folder / "README.md").read_text(encoding="utf-8")
    assert f"满分 {CONFIG.total_points:g} 分" in readme  # the total students read is grading.toml's


def test_a_grade_id_that_is_not_a_string_is_a_problem_not_a_crash(student_folder, load_selfcheck):
    """A hand-edited notebook may hold any JSON in its metadata: named, never a traceback."""
    path = student_folder / "handout.ipynb"
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "q01_compute_headline")
    cell["metadata"]["nbgrader"]["grade_id"] = ["q01_compute_headline"]
    path.write_text(json.dumps(nb))
    problems = load_selfcheck(student_folder).notebook_problems()
    assert any("q01_compute_headline" in p for p in problems)


def test_the_parameters_are_shown_as_a_small_table(student_folder):
    """Each parameter once, by name, in lines a terminal of 80 columns shows whole (not 28 on one line)."""
    from autograder.engine.variants import params_for

    type_student_id(student_folder, "alice")
    proc = run_in_folder(student_folder, "selfcheck.py")
    params = params_for("lec01_codesign", "alice")
    block = proc.stdout.split("你的参数", 1)[1].split("✓ 文件完好", 1)[0]
    lines = block.splitlines()[1:]
    assert all(len(line) <= 80 for line in lines), lines
    shown = re.findall(r"(\w+) = ", "\n".join(lines))   # below the header line, one table
    assert sorted(shown) == sorted(params), shown
    assert max(len(re.findall(r"\w+ = ", line)) for line in lines) <= 3
