"""A second real assignment, written the way an author writes one: `python -m autograder new` in a
copy of the course, then the author's edits (tests/fixtures/course/, never shipped) inside its three
folders and nowhere else. It then goes through the whole pipeline — build, check, release-solutions,
nbgrader release, trusted grading, pregrade + nbgrader autograde, the hand-in zip and the Gradescope
bundle and runner — with the engine untouched: adding an assignment is adding its three folders.
Two students keep it cheap: the reference and the released skeleton."""

from __future__ import annotations

import csv
import json
import re
import shutil
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.sandbox import bubblewrap_problem
from course_copy import ROOT, copy_course, run, snapshot
from student_id_cell import type_student_id

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NAME = "fx_intensity"
MODULE = "intensity"
FIXTURE = ROOT / "tests" / "fixtures" / "course"
THREE_FOLDERS = tuple(f"{top}/{NAME}/" for top in ("assignments", "solutions", "autograder"))
AUTO_POINTS, TOTAL_POINTS = 8.0, 10.0  # grading.toml of the fixture: 5 + 2 + 1 automatic, 2 by hand


def ok(done) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> SimpleNamespace:
    root = copy_course(tmp_path_factory.mktemp("course"))
    engine_before = {p.relative_to(root): p.read_bytes() for p in (root / "autograder").rglob("*.py")}
    before = snapshot(root)
    new = ok(run(root, "-m", "autograder", "new", NAME, "--module", MODULE, "--variants"))
    scaffolded = re.findall(r"^  (\S+)$", new, flags=re.M)
    authored = sorted(p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*")
                      if p.is_file() and p.relative_to(FIXTURE).as_posix().startswith(THREE_FOLDERS))
    for rel in authored:  # the author's edits: the scaffold's files, rewritten
        shutil.copyfile(FIXTURE / rel, root / rel)
    after = snapshot(root)
    w = SimpleNamespace(root=root, engine_before=engine_before, scaffolded=scaffolded, authored=authored,
                        touched=sorted(rel for rel in after if before.get(rel) != after[rel]))
    # the course's roster (instructor data beside the assignments): the class the variants are drawn for
    (root / "roster.txt").write_text("alice\nbob\ncarol\n", encoding="utf-8")
    w.build = ok(run(root, "-m", "autograder", "build", NAME))
    w.check = ok(run(root, "-m", "autograder", "check", NAME, "--frozen"))
    w.released = root / "released_solutions" / NAME
    ok(run(root, "-m", "autograder", "release-solutions", NAME, "--force"))
    w.demo = run(w.released, "demo.py")
    ok(run(root, "-m", "nbgrader", "generate_assignment", NAME, "--force"))
    release = root / "release" / NAME
    alice, bob = root / "submitted" / "alice" / NAME, root / "submitted" / "bob" / NAME
    ok(run(root, "-m", "autograder", "reference", NAME, str(alice)))
    # as the notebook's first code cell asks: her id, and the token the instructor sent her
    token = json.loads(ok(run(root, "-m", "autograder", "variant", NAME, "alice")))["token"]
    type_student_id(alice / "handout.ipynb", "alice", token)
    shutil.copytree(release, bob)
    # alice hands in with the generated self-check, as the student README says
    hand_in = tmp_path_factory.mktemp("alice") / NAME
    shutil.copytree(release, hand_in)
    for name in ("intensity.py", "handout.ipynb"):
        shutil.copyfile(alice / name, hand_in / name)
    ok(run(hand_in, "selfcheck.py", "--zip"))
    w.zip = hand_in / f"{NAME}_submission.zip"
    w.grade = ok(run(root, "-m", "autograder", "grade", NAME, "submitted", "--out", "out"))
    ok(run(root, "-m", "autograder", "pregrade", NAME))  # pins the trusted results autograde writes
    w.autograde = ok(run(root, "-m", "nbgrader", "autograde", NAME, "--force"))
    ok(run(root, "-m", "nbgrader", "export", "--to", "nbgrader_grades.csv"))
    ok(run(root, "-m", "autograder", "gradescope", NAME, "--out", "bundle.zip"))
    return w


def _rows(path: Path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return {row["student"] if "student" in row else row["student_id"]: row for row in csv.DictReader(f)}


def test_the_author_edits_exactly_the_files_new_wrote_inside_the_three_folders(course):
    seed = f"autograder/{NAME}/variant_seed"  # new --variants draws it; the author never writes it
    assert seed in course.scaffolded and (course.root / seed).is_file()
    assert sorted(set(course.scaffolded) - {seed}) == course.authored
    assert course.touched and all(rel.startswith(THREE_FOLDERS) for rel in course.touched), course.touched


def test_the_released_solutions_run_their_demo_with_the_shared_module(course):
    assert course.demo.returncode == 0, course.demo.stderr
    assert "算术强度" in course.demo.stdout and "4096" in course.demo.stdout
    assert (course.released / "console.py").is_file() and (course.released / f"{MODULE}.py").is_file()


def test_the_build_generates_the_generic_student_files(course):
    folder = course.root / "assignments" / NAME
    for name in ("selfcheck.py", "public_checks.py", "conftest.py", "test_intensity.py", "console.py", "intensity.py"):
        assert (folder / name).is_file(), name
    assert not (folder / "hw_specs.py").exists()  # not declared in shared_modules
    assert f"{NAME}: ready" in course.check


def test_the_release_holds_the_skeleton_and_no_solution(course):
    skeleton = (course.root / "release" / NAME / "intensity.py").read_text(encoding="utf-8")
    assert "NotImplementedError" in skeleton and "float(flops) / float(bytes_moved)" not in skeleton


def test_the_trusted_grader_gives_the_reference_every_automatic_point_and_the_skeleton_none(course):
    rows = _rows(course.root / "out" / "grades.csv")
    assert float(rows["alice"]["score"]) == AUTO_POINTS and float(rows["alice"]["max_score"]) == TOTAL_POINTS
    assert float(rows["bob"]["score"]) == 0


def test_nbgrader_autograde_records_the_trusted_scores(course):
    rows = _rows(course.root / "nbgrader_grades.csv")
    assert float(rows["alice"]["raw_score"]) == AUTO_POINTS
    assert float(rows["bob"]["raw_score"]) == 0


def test_each_student_is_graded_in_their_own_variant_and_nbgrader_keeps_the_typed_id(course):
    rows = _rows(course.root / "out" / "grades.csv")
    # bob handed in the release as it was: nothing to flag but why he has nothing
    flags = {"alice": "", "bob": "intensity.py is the released skeleton, unchanged"}
    for student in ("alice", "bob"):
        shown = json.loads(ok(run(course.root, "-m", "autograder", "variant", NAME, student)))
        assert rows[student]["variant"] == shown["variant"] and rows[student]["flags"] == flags[student]
    autograded = json.loads((course.root / "autograded" / "alice" / NAME / "handout.ipynb").read_text("utf-8"))
    first = next(c for c in autograded["cells"] if c["cell_type"] == "code")
    assert "".join(first["source"]).startswith("STUDENT_ID = 'alice'")


def test_the_engine_was_not_touched(course):
    after = {p.relative_to(course.root): p.read_bytes() for p in (course.root / "autograder").rglob("*.py")
             if not p.is_relative_to(course.root / "autograder" / NAME)}
    assert after == course.engine_before


def test_the_gradescope_bundle_carries_the_declared_shared_module_only(course):
    with zipfile.ZipFile(course.root / "bundle.zip") as bundle:
        names = set(bundle.namelist())
    assert {"console.py", f"assignments/{NAME}/grading.toml", f"autograder/{NAME}/__init__.py"} <= names
    assert "hw_specs.py" not in names and not any(n.startswith("tests/") for n in names)


def test_the_gradescope_bundle_grades_the_hand_in_zip(course, tmp_path):
    problem = bubblewrap_problem()
    if problem:
        pytest.skip(f"the Gradescope container is simulated with bubblewrap: {problem}")
    from gradescope.gradescope_container import lay_out, run_autograder

    upload = tmp_path / "upload"
    with zipfile.ZipFile(course.zip) as archive:  # Gradescope unpacks a zip upload
        archive.extractall(upload)
    container = lay_out(tmp_path / "autograder", course.root / "bundle.zip", upload)
    (container / "submission_metadata.json").write_text(json.dumps({"users": [{"sid": "alice"}]}), encoding="utf-8")
    result = run_autograder(container)
    assert result.results is not None, result.log[-3000:]
    assert result.results["score"] == pytest.approx(AUTO_POINTS), result.log[-3000:]
