"""`python -m autograder grade` and `reference`: outputs, and exit status 0 whatever the scores,
non-zero only for usage or configuration errors."""

import csv
import json
import shutil
import subprocess
import sys

from autograder.engine.feedback import QUOTA_WORDS
from autograder.engine.registry import REPO_ROOT
from autograder.sandbox import confinement
from engine.corpus import ASSIGNMENT, CORPUS_DIR


def autograder(*args, cwd=REPO_ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_grade_writes_gradebook_feedback_and_results(tmp_path):
    submissions = tmp_path / "subs"
    for student, case in (("ann", "partial"), ("ben", "syntax_error")):
        (submissions / student).mkdir(parents=True)
        shutil.copyfile(CORPUS_DIR / case / "codesign.py", submissions / student / "codesign.py")
    out = tmp_path / "out"
    run = autograder("grade", ASSIGNMENT, submissions, "--out", out, "-j", "2")
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert [r["student"] for r in rows] == ["ann", "ben"]
    assert float(rows[0]["score"]) > 0 and float(rows[1]["score"]) == 0
    assert json.loads((out / "results" / "ben.json").read_text())["score"] == 0
    assert "语法错误" in (out / "feedback" / "ben.md").read_text()
    assert "gradebook" in run.stdout and "ann" in run.stdout
    # Every output says how the class was isolated and how its sandboxes' resources were bounded.
    quotas = confinement.quotas().name   # the grader chose the same way
    assert {(r["isolation"], r["quotas"]) for r in rows} == {("bubblewrap", quotas)}
    ann = json.loads((out / "results" / "ann.json").read_text())
    assert ann["extra_data"]["submission"]["quotas"] == quotas and QUOTA_WORDS[quotas] in ann["output"]
    assert QUOTA_WORDS[quotas] in (out / "feedback" / "ann.md").read_text().splitlines()[2]
    assert f"(isolation: bubblewrap + {quotas})" in run.stdout

    rerun = autograder("grade", ASSIGNMENT, submissions, "--out", out)
    assert rerun.returncode == 0 and "skipping 2 student(s)" in rerun.stderr


def test_usage_and_configuration_errors_exit_non_zero(tmp_path):
    (tmp_path / "subs").mkdir()
    assert autograder("grade", ASSIGNMENT, tmp_path / "nowhere", "--out", tmp_path / "o").returncode == 2
    assert autograder("grade", "no_such_assignment", tmp_path / "subs", "--out", tmp_path / "o").returncode == 2
    assert autograder("grade", ASSIGNMENT, tmp_path / "subs", "--out", tmp_path / "o", "-j", "0").returncode == 2
    assert autograder("grade", ASSIGNMENT, tmp_path / "subs").returncode == 2  # --out is required


def test_reference_writes_a_complete_submission(tmp_path):
    run = autograder("reference", ASSIGNMENT, tmp_path / "ref")
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "ref").iterdir()) == ["codesign.py", "handout.ipynb"]
    assert autograder("reference", "no_such_assignment", tmp_path / "x").returncode == 2
