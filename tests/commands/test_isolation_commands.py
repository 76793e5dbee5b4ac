"""Isolation fails closed in every grading verb, and every output says how a result was isolated.

Without bubblewrap the grader used to warn and grade anyway: the bundled cheater `eve` then read
the reference from disk and scored full marks (7.49 under bubblewrap). Now every verb refuses
with exit status 2 and one line saying how to install bubblewrap, unless isolation is lowered
explicitly; the lowered mode (rlimits) grades only where the project stays private, else it
refuses too."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rlimits_machine import PYTHON, machine_problem, run_in_machine

from autograder.build import write_reference_submission
from autograder.engine.registry import REPO_ROOT, load_config
from autograder.sandbox import rlimits_problem
from engine.corpus import (ASSIGNMENT, CORPUS_DIR, EXAMPLES_DIR, corpus_cases, items_answered_without_the_student_module,
                           materialize)

# A PATH with this environment's interpreter and nothing else: no bwrap on it.
NO_BWRAP_PATH = str(Path(sys.executable).parent)
RLIMITS_PROBLEM = rlimits_problem()
# Corpus cases that go after the project's files from inside the sandbox.
SNOOPS = ("imports_solutions", "reads_reference", "peeks_at_grader")
VERBS = {
    "grade": ["grade", ASSIGNMENT, EXAMPLES_DIR, "--out", "{out}"],
    "pregrade": ["pregrade", ASSIGNMENT],  # reconcile and nbgrader's autograde grade nothing themselves
}


def autograder(*args, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_without_bubblewrap_every_grading_verb_refuses_naming_bubblewrap(verb, tmp_path):
    out = tmp_path / "out"
    run = autograder(*(str(a).format(out=out) for a in VERBS[verb]), env={"PATH": NO_BWRAP_PATH})
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{verb}: "), run.stderr
    assert "bwrap is not installed" in lines[0] and "apt-get install bubblewrap" in lines[0]
    assert "--isolation rlimits" in lines[0]
    assert not out.exists()          # eve is refused, not graded (she used to get 91 / 91 here)


def test_a_misspelt_isolation_is_a_usage_error(tmp_path):
    run = autograder("grade", ASSIGNMENT, EXAMPLES_DIR, "--out", tmp_path / "o", "--isolation", "none")
    assert run.returncode == 2 and "--isolation" in run.stderr and not (tmp_path / "o").exists()


@pytest.mark.skipif(RLIMITS_PROBLEM is None, reason="the fallback can keep the project private here")
def test_rlimits_refuses_where_the_project_cannot_be_kept_private(tmp_path):
    out = tmp_path / "out"
    run = autograder("grade", ASSIGNMENT, EXAMPLES_DIR, "--out", out, "--isolation", "rlimits",
                     env={"PATH": NO_BWRAP_PATH})
    assert run.returncode == 2
    assert run.stderr.strip() == f"grade: isolation 'rlimits' refused: {RLIMITS_PROBLEM}"
    assert "bubblewrap" in RLIMITS_PROBLEM and not out.exists()
    nbgrader = autograder("pregrade", ASSIGNMENT, env={"CS349E_ISOLATION": "rlimits"})
    assert nbgrader.returncode == 2 and "isolation 'rlimits' refused" in nbgrader.stderr


needs_machine = pytest.mark.skipif(machine_problem() is not None, reason=f"no machine: {machine_problem()}")


@pytest.fixture(scope="module")
def class_graded_under_rlimits(tmp_path_factory):
    """eve and alice from the examples and the corpus's snoops, graded with --isolation rlimits
    where the fallback can keep the project private (here: inside tests/rlimits_machine.py's)."""
    if machine_problem() is not None and RLIMITS_PROBLEM is not None:
        pytest.skip(f"the fallback refuses here and no machine for it: {machine_problem()}")
    io = tmp_path_factory.mktemp("rlimits_class")
    submissions = io / "submissions"
    reference = io / "reference"
    write_reference_submission(ASSIGNMENT, reference)
    materialize([c for c in corpus_cases() if c.name in SNOOPS], submissions, reference)
    for student in ("alice", "eve"):
        shutil.copytree(EXAMPLES_DIR / student, submissions / student)
    command = (PYTHON, "-m", "autograder", "grade", ASSIGNMENT, str(submissions), "--out", str(io / "out"),
               "--isolation", "rlimits", "-j", "2")
    if RLIMITS_PROBLEM is None:
        run = subprocess.run([sys.executable, *command[1:]], cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=600)
    else:
        run = run_in_machine(*command, binds=(io,), timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run, io / "out"


def test_explicit_rlimits_grades_and_the_snoops_get_nothing(class_graded_under_rlimits):
    _, out = class_graded_under_rlimits
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    auto = sum(item.points for item in load_config(ASSIGNMENT).items if item.kind != "text")
    assert float(rows["alice"]["score"]) == auto                   # honest: full marks
    independent = items_answered_without_the_student_module()  # answers that need none of the functions
    for snoop in SNOOPS:
        earned = {i["id"]: i["score"] for i in json.loads((out / "results" / f"{snoop}.json").read_text(
            encoding="utf-8"))["extra_data"]["submission"]["items"]}
        assert sum(s for i, s in earned.items() if i not in independent) == 0, snoop  # no reference, no hidden tests
        expected = next(case.feedback for case in corpus_cases() if case.name == snoop)
        feedback = (out / "feedback" / f"{snoop}.md").read_text(encoding="utf-8")
        assert all(text in feedback for text in expected), snoop
    functions = [item.id for item in load_config(ASSIGNMENT).items if item.kind == "function"]
    eve = json.loads((out / "results" / "eve.json").read_text(encoding="utf-8"))["extra_data"]["submission"]
    # eve's own functions are wrong: reading the reference from disk would have given them all.
    assert sum(item["score"] for item in eve["items"] if item["id"] in functions) < 0.1 * sum(
        item["max_score"] for item in eve["items"] if item["id"] in functions)


def test_every_output_says_the_class_was_graded_under_rlimits(class_graded_under_rlimits):
    run, out = class_graded_under_rlimits
    with (out / "grades.csv").open(encoding="utf-8") as table:
        header, *rows = list(csv.reader(table))
    assert header[:6] == ["student", "score", "max_score", "isolation", "late_penalty", "quotas"]
    assert {row[3] for row in rows} == {"rlimits"}
    (quotas,) = {row[5] for row in rows}   # one mechanism for the whole run, and it is named
    assert quotas in ("cgroup v1", "cgroup v2", "cgroup v2 (delegated)", "rlimits")
    for results_file in (out / "results").glob("*.json"):
        results = json.loads(results_file.read_text(encoding="utf-8"))
        assert results["extra_data"]["submission"]["isolation"] == "rlimits"
        assert results["extra_data"]["submission"]["quotas"] == quotas
        assert "隔离方式：rlimits" in results["output"]
        student = results_file.stem
        head = (out / "feedback" / f"{student}.md").read_text(encoding="utf-8").splitlines()[:4]
        assert any("隔离方式：rlimits" in line for line in head), head
    assert f"(isolation: rlimits + {quotas})" in run.stdout
    assert "isolation 'rlimits', asked explicitly" in run.stderr


@needs_machine
@pytest.mark.skipif(RLIMITS_PROBLEM is None, reason="covered by the in-process nbgrader tests")
def test_the_nbgrader_path_lowers_isolation_only_with_its_variable(tmp_path):
    """What pregrade uses (the sandbox's isolation_from_env): bubblewrap by default, rlimits with
    CS349E_ISOLATION=rlimits, in the machine where the fallback can work."""
    write_reference_submission(ASSIGNMENT, tmp_path / "submitted" / "ann" / ASSIGNMENT)
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from autograder.engine.grader import grade_submission\n"
        "from autograder.sandbox import isolation_from_env, resolve_isolation\n"
        f"folder = Path({str(tmp_path)!r}) / 'submitted' / 'ann'\n"
        f"result = grade_submission({ASSIGNMENT!r}, folder, isolation=resolve_isolation(isolation_from_env()))\n"
        "print(result.isolation, result.score == result.auto_max_score)\n")
    lowered = run_in_machine(PYTHON, "-c", script, binds=(tmp_path,), env={"CS349E_ISOLATION": "rlimits"})
    assert lowered.returncode == 0 and lowered.stdout.split() == ["rlimits", "True"], lowered.stderr[-2000:]
    default = run_in_machine(PYTHON, "-c", script, binds=(tmp_path,), env={"PATH": str(Path(PYTHON).parent)})
    assert default.returncode != 0 and "bwrap is not installed" in default.stderr


def test_corpus_snoops_exist():
    assert all((CORPUS_DIR / name / "case.toml").is_file() for name in SNOOPS)
