"""The same files get the same per-item scores from every command that grades them: `grade`,
`pregrade` (whose pinned results `nbgrader autograde` writes into the gradebook and `reconcile`
checks, neither grading again) and the Gradescope runner, and `grade` again with every core kept
busy. Each command runs as a user runs it, in a
subprocess, on a copy of the repository (the nbgrader course root), and every result names the
same case set.

Issue 9 item 2: the lecture's ties-toward-smaller `to_e2m1` scored quantize 17.61 under `grade`
and 18.81 under `reconcile`, whose process drew other property examples.

Each command's invocation is one helper in VERBS: adapt the helper when a command changes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.engine.assignment import load_assignment
from autograder.engine.registry import REPO_ROOT
from autograder.sandbox import bubblewrap_problem
from mutants import CODE_MUTATIONS, mutate_submission

ASSIGNMENT = "lec01_codesign"
# The submission, plus bugs in other functions: one student each.
MUTANTS = ("e2m1_ties_to_smaller", "e4m3_ties_away", "mxfp4_scale_off_by_one")
TIMEOUT = 300

Scores = dict[str, dict[str, float]]  # student -> item id -> score

pytestmark = pytest.mark.skipif(bubblewrap_problem() is not None or os.geteuid() != 0,
                                reason="grades in bubblewrap; the Gradescope layout needs root")


def autograder(course: Path, *args: str, ok=(0,)) -> subprocess.CompletedProcess:
    """`python -m autograder ARGS` run from the course's root, as an instructor runs it."""
    done = subprocess.run([sys.executable, "-m", "autograder", *args], cwd=course, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(course)}, timeout=TIMEOUT)
    assert done.returncode in ok, f"{args}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def _submissions(results_dir: Path) -> dict[str, dict]:
    """student -> the SubmissionResult dict stored in each results.json."""
    found = {}
    for path in sorted(results_dir.glob("*.json")):
        submission = json.loads(path.read_text("utf-8"))["extra_data"]["submission"]
        found[submission["student"]] = submission
    return found


def _scores(submissions: dict[str, dict]) -> tuple[Scores, set[str]]:
    scores = {s: {item["id"]: item["score"] for item in d["items"]} for s, d in submissions.items()}
    return scores, {d.get("case_set", "") for d in submissions.values()}


# --- one helper per command -------------------------------------------------------------------
def grade(course: Path, out: Path) -> tuple[Scores, set[str]]:
    autograder(course, "grade", ASSIGNMENT, "submitted", "--out", str(out))
    return _scores(_submissions(out / "results"))


def pregrade(course: Path, out: Path) -> tuple[Scores, set[str]]:
    shutil.rmtree(course / ".pinned_results", ignore_errors=True)
    autograder(course, "pregrade", ASSIGNMENT)
    return _scores(_submissions(course / ".pinned_results" / ASSIGNMENT / "results"))


def gradescope(course: Path, out: Path) -> tuple[Scores, set[str]]:
    """The bundle built from the course, run the way Gradescope runs it (tests/gradescope)."""
    from gradescope.gradescope_container import lay_out, run_autograder

    bundle = out / "autograder.zip"
    autograder(course, "gradescope", ASSIGNMENT, "--out", str(bundle))
    submissions = {}
    for student_dir in sorted((course / "submitted").iterdir()):
        run = run_autograder(lay_out(out / student_dir.name, bundle, student_dir / ASSIGNMENT, student_dir.name))
        assert run.results is not None, run.log[-3000:]
        submissions[student_dir.name] = {**run.results["extra_data"]["submission"], "student": student_dir.name}
    return _scores(submissions)


def grade_under_load(course: Path, out: Path) -> tuple[Scores, set[str]]:
    """`grade` while one busy process per core competes for the CPU."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        return grade(course, out)
    finally:
        for process in busy:
            process.kill()
            process.wait()


VERBS = {"grade": grade, "pregrade": pregrade, "gradescope": gradescope, "grade under load": grade_under_load}


# --- the course: a copy of the repository with nbgrader's submitted/ folder -----------------------
def make_course(root: Path, source: Path = REPO_ROOT) -> Path:
    """A copy of the repository at `source` (tracked and new files) with a gradebook and
    submitted/<mutation>/<assignment>/ for each mutant of the reference submission."""
    course = root / "course"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=source,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (source / rel).is_file():
            (course / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, course / rel)
    reference = root / "reference"
    autograder(course, "reference", ASSIGNMENT, str(reference))
    submitted = course / "submitted"
    for mutation in MUTANTS:
        mutate_submission(reference, submitted / mutation / ASSIGNMENT, (mutation,))
    done = subprocess.run([sys.executable, "-m", "nbgrader", "db", "assignment", "add", ASSIGNMENT], cwd=course,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    return course


def scores_by_verb(root: Path, course: Path) -> dict[str, tuple[Scores, set[str]]]:
    return {name: verb(course, root / name.replace(" ", "_")) for name, verb in VERBS.items()}


def test_every_command_gives_the_same_item_scores(tmp_path):
    course = make_course(tmp_path)
    by_verb = scores_by_verb(tmp_path, course)
    expected_case_set = load_assignment(ASSIGNMENT).case_set

    first, _ = by_verb["grade"]
    assert set(first) == set(MUTANTS)
    for name, (scores, case_sets) in by_verb.items():
        assert scores == first, f"{name} differs from grade: {_differences(first, scores)}"
        assert case_sets == {expected_case_set}, f"{name} results name case sets {case_sets}"
    # the mutants really are graded: each loses points in the function it breaks
    functions = {m.name: m.function for m in CODE_MUTATIONS}
    points = {item.id: item.points for item in load_assignment(ASSIGNMENT).config.items}
    for mutation in MUTANTS:
        assert first[mutation][functions[mutation]] < points[functions[mutation]], mutation


def _differences(expected: Scores, got: Scores) -> list[str]:
    return [f"{student}.{item}: {expected.get(student, {}).get(item)} vs {got.get(student, {}).get(item)}"
            for student in sorted(set(expected) | set(got))
            for item in sorted(set(expected.get(student, {})) | set(got.get(student, {})))
            if expected.get(student, {}).get(item) != got.get(student, {}).get(item)]
