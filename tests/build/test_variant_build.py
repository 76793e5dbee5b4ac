"""What the build releases for an assignment with per-student variants (fixture fx_intensity): the
parameter table of the roster (parameters only), the helper that reads it, the notebook's
STUDENT_ID cell — and never the seed or any variant's key."""

from __future__ import annotations

import json
import re

import pytest

from course_copy import clean_env, run
from variant_course import NAME, ROSTER, evaluate, ok, variant_course

pytestmark = pytest.mark.slow  # a course copy built, nbgrader's generate_assignment, release-solutions
USE = ("from autograder.engine.variants import params_for, table_key, variant_token, lecture_params, keys_for, "
       "samples")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return variant_course(tmp_path_factory.mktemp("course"))


def _helper(course, expression: str, **env) -> object:
    """`expression` evaluated by the released helper in the student folder (no course on the path)."""
    folder = course / "assignments" / NAME
    code = f"import json, variant\ntry:\n    print(json.dumps({expression}))\nexcept variant.StudentIdError as e:\n" \
           f"    print(json.dumps({{'error': str(e)}}))"
    environ = {k: v for k, v in clean_env().items() if k not in ("JUPYTERHUB_USER",)} | env
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, env=environ, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_table_lists_every_student_of_the_roster_with_their_parameters_only(course):
    table = json.loads((course / "assignments" / NAME / "variants.json").read_text(encoding="utf-8"))
    expected = evaluate(course, f"{{table_key({NAME!r}, s, variant_token({NAME!r}, s)): params_for({NAME!r}, s) "
                                f"for s in {list(ROSTER)!r}}}", USE)
    assert table == {"assignment": NAME, "by_key": expected}
    names = set(evaluate(course, f"lecture_params({NAME!r})", USE))
    assert all(set(params) == names for params in table["by_key"].values())
    text = json.dumps(table)
    assert not any(sid in text for sid in ROSTER)  # the class list itself is not released


def _tokens(course) -> list[str]:
    return evaluate(course, f"[variant_token({NAME!r}, s) for s in {list(ROSTER)!r}]", USE)


def test_the_helper_gives_each_student_their_own_parameters_with_their_token(course):
    expected = evaluate(course, f"[params_for({NAME!r}, s) for s in {list(ROSTER)!r}]", USE)
    tokens = _tokens(course)
    assert _helper(course, f"[variant.variant_for(s, t) for s, t in zip({list(ROSTER)!r}, {tokens!r})]") == expected
    # typed loosely: spaces around the id, the token in lower case without its dashes
    loose = tokens[1].replace("-", "").lower()
    assert _helper(course, f"variant.variant_for('  {ROSTER[1]} ', {loose!r})") == expected[1]
    # JupyterHub: the login name and a token the spawner put in the environment
    assert _helper(course, "variant.variant_for('', '')", JUPYTERHUB_USER=ROSTER[2],
                   CS349E_VARIANT_TOKEN=tokens[2]) == expected[2]


def test_an_id_alone_opens_no_entry_not_even_with_a_classmates_token(course):
    """What a student can compute from the released folder: not a classmate's parameters from the id
    (the old table keyed entries by sha256 of the id, which any student could compute)."""
    import hashlib

    tokens = _tokens(course)
    table = json.loads((course / "assignments" / NAME / "variants.json").read_text(encoding="utf-8"))["by_key"]
    for sid in ROSTER:
        assert hashlib.sha256(f"{NAME}:{sid}".encode()).hexdigest()[:16] not in table
        assert _helper(course, f"variant.variant_for({sid!r})").get("error", "").startswith("还没有填个人口令")
    wrong = _helper(course, f"variant.variant_for({ROSTER[0]!r}, {tokens[1]!r})")   # bob's token, alice's id
    assert "对不上参数表里的任何一条" in wrong["error"]


def test_the_helper_refuses_an_empty_or_unknown_id_in_words_a_student_can_act_on(course):
    assert "还没有填学号" in _helper(course, "variant.variant_for('')")["error"]
    assert _helper(course, "variant.variant_for('mallory', 'AAAA-BBBB-CCCC-DDDD')")["error"] == \
        "学号 mallory 和这个口令对不上参数表里的任何一条：请检查学号和口令的拼写（口令是助教发给你本人的），或联系助教。"


def test_the_notebooks_first_code_cell_asks_for_the_student_id_and_is_left_alone_by_nbgrader(course):
    nb = json.loads((course / "assignments" / NAME / "handout.ipynb").read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = "".join(code[0]["source"])
    assert first.startswith('STUDENT_ID = ""') and "VARIANT = variant_for(STUDENT_ID, VARIANT_TOKEN)" in first
    assert 'VARIANT_TOKEN = ""' in first
    assert "nbgrader" not in code[0]["metadata"]  # not a cell ClearSolutions or OverwriteCells rewrites
    ok(run(course, "-m", "nbgrader", "generate_assignment", NAME, "--force"))
    released = json.loads((course / "release" / NAME / "handout.ipynb").read_text(encoding="utf-8"))
    assert "".join(next(c for c in released["cells"] if c["cell_type"] == "code")["source"]) == first
    assert {"variant.py", "variants.json"} <= {p.name for p in (course / "release" / NAME).iterdir()}


def test_no_released_file_holds_the_seed_or_a_key_and_the_leak_check_says_so(course):
    seed = (course / "autograder" / NAME / "variant_seed").read_text().strip()
    ok(run(course, "-m", "autograder", "release-solutions", NAME, "--force", "--out", "released"))
    if not (course / "release" / NAME).is_dir():  # (the notebook test releases it too)
        ok(run(course, "-m", "nbgrader", "generate_assignment", NAME, "--force"))
    for folder in (course / "assignments" / NAME, course / "release" / NAME, course / "released"):
        assert (folder / "variants.json").is_file()
        for path in folder.rglob("*"):
            if path.is_file():
                assert seed not in path.read_text(encoding="utf-8", errors="replace"), path
    check = f"find_leaks({NAME!r}, dict(load_assignment({NAME!r}).answer_key))"
    setup = "from autograder.build.leaks import find_leaks\nfrom autograder.engine.assignment import load_assignment"
    assert evaluate(course, check, setup) == []
    # planted: the seed in a released file, a sampled variant's key in the notebook's prose
    key = evaluate(course, f"dict(keys_for({NAME!r}, 'check-3'))['q01_intensity']", USE)
    readme, notebook = course / "assignments" / NAME / "README.md", course / "assignments" / NAME / "handout.ipynb"
    kept = readme.read_text(encoding="utf-8"), notebook.read_text(encoding="utf-8")
    try:
        readme.write_text(kept[0] + f"\n{seed}\n", encoding="utf-8")
        nb = json.loads(kept[1])
        nb["cells"][0]["source"] += f"\n例如 {key:.2f} FLOP/B"
        notebook.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
        leaks = evaluate(course, check, setup)
    finally:
        readme.write_text(kept[0], encoding="utf-8")
        notebook.write_text(kept[1], encoding="utf-8")
    assert any("README.md contains the secret seed" in leak for leak in leaks), leaks
    assert any(re.search(r"variant \S+'s key of q01_intensity as " + re.escape(f"{key:.2f}"), leak)
               for leak in leaks), leaks


def test_a_roster_change_is_drift_of_the_table(course):
    roster = course / "roster.txt"
    kept = roster.read_text(encoding="utf-8")
    try:
        roster.write_text(kept + "ivan\n", encoding="utf-8")
        drift = run(course, "-m", "autograder", "build", NAME, "--check")
    finally:
        roster.write_text(kept, encoding="utf-8")
    assert drift.returncode == 1 and f"drift: assignments/{NAME}/variants.json" in drift.stdout
    assert ok(run(course, "-m", "autograder", "build", NAME, "--check")).strip().endswith("no drift")


def test_the_variant_command_prints_a_students_parameters_and_keys(course):
    out = json.loads(ok(run(course, "-m", "autograder", "variant", NAME, ROSTER[3], "--keys")))
    params, key = evaluate(course, f"[params_for({NAME!r}, {ROSTER[3]!r}), dict(keys_for({NAME!r}, {ROSTER[3]!r}))]",
                           USE)
    assert (out["params"], out["keys"], out["student"]) == (params, key, ROSTER[3])
    assert "keys" not in json.loads(ok(run(course, "-m", "autograder", "variant", NAME, ROSTER[3])))
    assert out["token"] == _tokens(course)[3]


def test_the_variant_command_lists_every_roster_students_token(course):
    lines = ok(run(course, "-m", "autograder", "variant", NAME, "--tokens")).splitlines()
    assert lines == ["student,token", *(f"{s},{t}" for s, t in zip(ROSTER, _tokens(course)))]


@pytest.mark.parametrize("args, message", [
    ((NAME, " "), "bad student id ' ': the student id is empty"),
    (("lec99_none", "alice"), "lec99_none"),
])
def test_the_variant_command_refuses_what_has_no_variant(course, args, message):
    done = run(course, "-m", "autograder", "variant", *args)
    assert done.returncode == 2 and message in done.stderr and not done.stdout
