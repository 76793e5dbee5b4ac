"""The README, run as written. In a fresh clone of this checkout, with the Quick start's .venv
inside it, every command of README.md runs verbatim in the order the README gives it (except
the few in ELSEWHERE, each run by the test it names); then, in the released folder, every
command of the student README. A command added to either README is run here without a word, so
one that does not work as written fails this test.

Expected values come from the grader's own outputs and grading.toml, never typed in: nbgrader's
export must equal `python -m autograder grade`'s scores, alice (the reference) the automatic
maximum, reconcile must find 0 differences.

pip installs offline from a wheelhouse (tests/readme/wheelhouse.py) through pip's environment
configuration; the commands are not changed.
"""

from __future__ import annotations

import csv
import hashlib
import os
import select
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

import process_groups
from autograder.engine.registry import load_config
from autograder.engine.roster import read_roster, roster_path
from autograder.engine.variants import variant_token
from autograder.sandbox import launcher
from clone_run import ROOT, Shell, clone_checkout, make_shell
from readme_text import readme_commands, student_readme_commands
from student_id_cell import type_student_id
from wheelhouse import offline_pip_env, wheelhouse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ASSIGNMENT = "lec01_codesign"
CONFIG = load_config(ASSIGNMENT)
AUTO_MAX = sum(item.points for item in CONFIG.items if item.kind != "text")
EXAMPLES = ROOT / "examples" / ASSIGNMENT / "submissions"
STUDENTS = ("alice", "bob", "dave")   # handed in through nbgrader's exchange before `nbgrader collect`
ACTIVATE = ". .venv/bin/activate"
WHEELHOUSE_INSIDE = "wheelhouse"      # where the shell sees the wheelhouse, below its base folder

# README commands this test does not run, each with the test that does (checked by
# test_every_readme_command_is_run.py). Anything else in the README runs here.
ELSEWHERE = {
    "python3 -m venv .venv && .venv/bin/pip install '.[instructor,test,cluster,hub]' && .venv/bin/python -m pytest":
        ".ci/run",   # the suite itself: CI sets up and runs exactly this
    '.venv/bin/python -m pytest -m "not slow"': "tests/suite/test_fast_lane.py::test_the_fast_lane_is_the_in_process_tests",
    "pip install .": "tests/readme/test_readme_paths.py::test_the_quick_start_grades_the_examples",
    'pip install ".[instructor]"': "tests/readme/test_readme_paths.py::test_the_quick_start_grades_the_examples",
    "nbgrader zip_collect lec01_codesign --force":
        "tests/nbgrader/test_workflow.py::test_zip_collect_puts_an_lms_download_in_the_submitted_folder",
    ".venv/bin/python -m autograder new lec02_roofline": "tests/authoring/test_new_and_check.py",
    ".venv/bin/python -m autograder check lec02_roofline": "tests/authoring/test_new_and_check.py",
    ".venv/bin/python -m autograder new lec02_roofline --variants":
        "tests/authoring/test_new_variants.py::test_new_with_variants_scaffolds_an_assignment_that_passes_check",
    ".venv/bin/python -m autograder variant lec02_roofline 2026001 --keys":
        "tests/build/test_variant_build.py::test_the_variant_command_prints_a_students_parameters_and_keys",
    ".venv/bin/python -m autograder variant lec01_codesign --tokens":
        "tests/build/test_variant_build.py::test_the_variant_command_lists_every_roster_students_token",
    "python selfcheck.py --zip": "tests/readme/test_readme_paths.py::test_the_student_readme_runs_in_the_released_folder",
    # the released solutions' demo, in the released folder of a scaffolded assignment
    "python demo.py": "tests/authoring/test_new_and_check.py::test_the_scaffold_releases_its_solutions_with_a_demo_that_runs",
    # a cluster's scheduler address: a real scheduler and workers on loopback
    ".venv/bin/python -m autograder grade lec01_codesign SUBMISSIONS --out OUT --scheduler tcp://head:8786":
        "tests/cluster/test_cluster_grading.py::test_the_cluster_grades_the_example_class_exactly_as_a_local_run",
    ".venv/bin/python -m autograder pregrade lec01_codesign --scheduler tcp://head:8786":
        "tests/cluster/test_cluster_grading.py::test_pregrade_pins_what_a_local_grade_gives",
    **{command: "tests/benchmarks/test_benchmark_smoke.py::test_each_readme_benchmark_runs_at_a_tiny_size"
       for command in readme_commands() if command.startswith("python benchmarks/")},
}
# Exit status other than 0 that the README itself promises for a command as written.
EXPECTED_STATUS = {
    # step 8: the due date of step 1 is in 2030, so the release is refused (exit 1) ...
    "python -m autograder release-solutions lec01_codesign": 1,
}
# Student README: the skeleton as released fails its public tests and self-check.
STUDENT_EXPECTED_STATUS = {"pytest": 1, "python selfcheck.py": 1, "python selfcheck.py --zip": 1}


def _digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _csv(path: Path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return {row.get("student") or row["student_id"]: row for row in csv.DictReader(f)}


class Run:
    """Every command run so far: command -> CompletedProcess (the first run of each)."""

    def __init__(self, shell: Shell):
        self.shell = shell
        self.done: dict[str, subprocess.CompletedProcess] = {}
        self.activated = False

    def __call__(self, command: str, expect: int = 0, *, cwd: Path | None = None, activate: str | None = None):
        prefix = f"{activate} && " if activate else ""
        started = time.monotonic()
        done = self.shell.run(prefix + command, cwd=cwd)
        done.seconds = time.monotonic() - started
        self.done.setdefault(command, done)
        if done.returncode != expect:
            raise AssertionError(f"`{command}` exited {done.returncode}, expected {expect}\n"
                                 f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-6000:]}")
        return done


# ---------------------------------------------------------------------------------------------
# what the test does around some commands (the students' side, which the README leaves to them)
# ---------------------------------------------------------------------------------------------
def students_hand_in(run: Run) -> None:
    """Before `nbgrader collect`: the assignment released to the exchange, and each example
    student submitting their two files from a folder of their own, as `nbgrader submit` does."""
    run("nbgrader release_assignment lec01_codesign --force", activate=ACTIVATE)
    for student in STUDENTS:
        home = run.shell.base / "students" / student
        shutil.copytree(EXAMPLES / student, home / ASSIGNMENT)
        run.shell.give(home)
        # --student: every student here is the same account (nbgrader takes the login name).
        done = run.shell.run(f"{run.shell.course}/.venv/bin/nbgrader submit {ASSIGNMENT} --course cs349e "
                             f"--student {student}", cwd=home, env={"HOME": str(home)})
        assert done.returncode == 0, done.stderr[-3000:]


def submissions_folder(run: Run) -> None:
    """Before `grade … SUBMISSIONS`: the README's placeholder is a folder of that name, holding
    the reference just written to /tmp/ref/alice and an example student."""
    folder = run.shell.course / "SUBMISSIONS"
    shutil.copytree(run.shell.base / "tmp" / "ref" / "alice", folder / "ref")
    shutil.copytree(EXAMPLES / "eve", folder / "eve")
    run.shell.give(folder)


def snapshot_generated(run: Run) -> None:
    """Before `build lec01_codesign`: what the build would regenerate, to compare after."""
    run.before_build = _digest(run.shell.course / "assignments" / ASSIGNMENT)


BEFORE = {
    "nbgrader collect lec01_codesign": students_hand_in,
    ".venv/bin/python -m autograder grade lec01_codesign SUBMISSIONS --out OUT -j 2": submissions_folder,
    "python -m autograder build lec01_codesign": snapshot_generated,
}
AFTER = {
    # ... and releases with the override step 8 names.
    "python -m autograder release-solutions lec01_codesign":
        lambda run: run("python -m autograder release-solutions lec01_codesign --force", activate=ACTIVATE),
}


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def readme_run():
    if os.geteuid() != 0:
        pytest.skip("runs the README in a mount namespace of its own as an instructor account it creates: needs root")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail(f"{ROOT} is not a git checkout with git installed: the README test clones it")
    if launcher.bubblewrap_problem() is not None:
        pytest.skip(f"bubblewrap does not work here: {launcher.bubblewrap_problem()}")
    base = Path(tempfile.mkdtemp(prefix="cs349e-readme-"))
    try:
        clone_checkout(base / "course")
        shell = make_shell(base, offline_pip_env(base / WHEELHOUSE_INSIDE), [])
        shell.binds.append((wheelhouse(shell.python3()), base / WHEELHOUSE_INSIDE))
        run = Run(shell)
        started = time.monotonic()
        activate = None
        for command in readme_commands():
            if command in ELSEWHERE:
                continue
            BEFORE.get(command, lambda _: None)(run)
            run(command, EXPECTED_STATUS.get(command, 0), activate=activate)
            if command == ACTIVATE:
                activate = ACTIVATE   # the README's shell stays activated from here on
            AFTER.get(command, lambda _: None)(run)
        run.instructor_seconds = time.monotonic() - started
        for command, done in run.done.items():   # shown with -s, or on a failure
            print(f"{done.seconds:6.1f} s  {command}")
        yield run
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_quick_start_grades_the_examples(readme_run):
    quick_start = readme_commands()[0]
    assert quick_start.startswith("python3 -m venv .venv && .venv/bin/pip install")
    assert (readme_run.shell.course / ".venv" / "bin" / "nbgrader").is_file()   # the README's venv, in the clone
    grades = _csv(readme_run.shell.course / "build" / "grades" / "grades.csv")
    assert set(grades) == {p.name for p in EXAMPLES.iterdir()}
    assert float(grades["alice"]["score"]) == AUTO_MAX
    assert float(grades["carol"]["score"]) == 0
    assert all(row["isolation"] == "bubblewrap" for row in grades.values())


def test_the_lecture_demo_and_the_chip_table_print(readme_run):
    demo = readme_run.done[".venv/bin/python -m solutions.lec01_codesign"]
    table = readme_run.done[".venv/bin/python hw_specs.py"]
    assert len(demo.stdout.splitlines()) > 10 and "B300" in demo.stdout
    assert "B300" in table.stdout and "H100" in table.stdout


def test_collect_takes_what_the_students_submitted(readme_run):
    for student in STUDENTS:
        folder = readme_run.shell.course / "submitted" / student / ASSIGNMENT
        assert (folder / "timestamp.txt").is_file()
        assert (folder / "codesign.py").read_bytes() == (EXAMPLES / student / "codesign.py").read_bytes()


def test_nbgrader_export_equals_the_trusted_grader(readme_run):
    exported = _csv(readme_run.shell.course / "grades.csv")
    trusted = _csv(readme_run.shell.course / "OUT" / "grades.csv")
    roster = read_roster(roster_path(readme_run.shell.course))
    assert set(STUDENTS) < set(roster) and set(exported) == set(roster)
    for student in set(roster) - set(STUDENTS):   # never handed in: a row of 0, not a blank in the LMS
        assert float(exported[student]["raw_score"]) == 0, student
    for student in STUDENTS:
        assert float(exported[student]["raw_score"]) == pytest.approx(float(trusted[student]["score"]), abs=0.005), student
        assert float(exported[student]["max_score"]) == float(trusted[student]["max_score"])
    assert float(exported["alice"]["raw_score"]) == AUTO_MAX
    assert float(exported["bob"]["raw_score"]) < AUTO_MAX and float(exported["dave"]["raw_score"]) < AUTO_MAX


def test_autograde_graded_every_student_and_reconcile_finds_no_difference(readme_run):
    autograde = readme_run.done["nbgrader autograde lec01_codesign --force"]
    assert "Kernel died" not in autograde.stderr and "execvp" not in autograde.stderr
    reconcile = readme_run.done["python -m autograder reconcile lec01_codesign"]
    assert reconcile.stdout.strip() == ""
    assert f"0 of {len(STUDENTS)} student(s) differ" in reconcile.stderr


def test_feedback_is_written_for_every_student(readme_run):
    for student in STUDENTS:
        page = readme_run.shell.course / "feedback" / student / ASSIGNMENT / "handout.html"
        assert page.is_file() and page.stat().st_size > 10_000, student


def test_solutions_are_released_with_the_override(readme_run):
    refused = readme_run.done["python -m autograder release-solutions lec01_codesign"]
    assert "release-solutions" in refused.stdout + refused.stderr
    released = readme_run.shell.course / "released_solutions" / ASSIGNMENT
    assert {"codesign.py", "handout.ipynb", "demo.py"} <= {p.name for p in released.iterdir()}


def test_similarity_compares_every_pair(readme_run):
    pairs = list(csv.DictReader(open(readme_run.shell.course / "similarity" / "pairs.csv", encoding="utf-8")))
    assert len(pairs) == len(STUDENTS) * (len(STUDENTS) - 1) // 2
    assert (readme_run.shell.course / "similarity" / "report.html").is_file()


def test_the_trusted_grader_section_runs(readme_run):
    reference = readme_run.shell.base / "tmp" / "ref" / "alice"
    assert {p.name for p in reference.iterdir()} == set(CONFIG.student_files)
    from engine.corpus import LOW_FRACTION, items_answered_without_the_student_module

    grades = _csv(readme_run.shell.course / "OUT" / "grades.csv")
    assert float(grades["ref"]["score"]) == AUTO_MAX
    # eve cheats: she keeps next to nothing of what her functions decide (a byte count or a figure
    # of the chip table needs none of them, and she may answer those honestly)
    judged = [item for item in CONFIG.items if item.kind != "text"
              and item.id not in items_answered_without_the_student_module()]
    eve = sum(float(grades["eve"][item.id] or 0) for item in judged)
    assert eve <= LOW_FRACTION * sum(item.points for item in judged), grades["eve"]


def test_the_gradescope_bundle_is_built(readme_run):
    with zipfile.ZipFile(readme_run.shell.course / "autograder.zip") as bundle:
        assert {"setup.sh", "run_autograder"} <= set(bundle.namelist())


def test_build_finds_nothing_to_regenerate(readme_run):
    assert _digest(readme_run.shell.course / "assignments" / ASSIGNMENT) == readme_run.before_build


# ---------------------------------------------------------------------------------------------
# the student README, in the folder nbgrader released
# ---------------------------------------------------------------------------------------------
def _jupyter_lab_serves(run: Run, command: str, cwd: Path, activate: str) -> None:
    """`jupyter lab handout.ipynb` runs until stopped: it must print the address it serves."""
    popen_args = run.shell.popen_args(f"{activate} && exec {command}", cwd)
    proc = process_groups.start(popen_args.pop("args"), **popen_args, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    seen, deadline = "", time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                seen += proc.stdout.readline()
                if "http://" in seen and "/lab" in seen:
                    break
    finally:
        process_groups.end(proc, grace=30)
    assert "http://" in seen and "/lab" in seen, f"`{command}` did not start serving:\n{seen[-3000:]}"


def test_the_student_readme_runs_in_the_released_folder(readme_run):
    # The folder nbgrader released, as a student receives it: a copy outside the course.
    released = readme_run.shell.base / "students" / "released" / ASSIGNMENT
    shutil.copytree(readme_run.shell.course / "release" / ASSIGNMENT, released)
    readme_run.shell.give(released.parent)
    readme = (released / "README.md").read_text(encoding="utf-8")
    assert readme == (ROOT / "assignments" / ASSIGNMENT / "README.md").read_text(encoding="utf-8")
    commands = student_readme_commands()
    activate = None
    for command in commands:
        if command.startswith("jupyter lab"):
            _jupyter_lab_serves(readme_run, command, released, activate)
            continue
        done = readme_run(command, STUDENT_EXPECTED_STATUS.get(command, 0), cwd=released, activate=activate)
        if command.startswith("source .venv/bin/activate"):
            activate = command.split("  #")[0].strip()
        if command == "pytest":
            assert "未实现" in done.stdout
    # The same folder, answered: the public tests pass and the hand-in zip holds exactly the two files.
    for name in CONFIG.student_files:
        shutil.copyfile(readme_run.shell.base / "tmp" / "ref" / "alice" / name, released / name)
    # alice fills in her id (she is on the roster) and the personal token she was given, as the first cell asks
    type_student_id(released / CONFIG.notebook, "alice", variant_token(ASSIGNMENT, "alice"))
    for command in ("pytest", "python selfcheck.py", "python selfcheck.py --zip"):
        assert command in commands
        done = readme_run.shell.run(f"{activate} && {command}", cwd=released)
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    with zipfile.ZipFile(released / f"{ASSIGNMENT}_submission.zip") as handed_in:
        assert sorted(handed_in.namelist()) == sorted(CONFIG.student_files)
