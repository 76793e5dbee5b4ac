"""What `nbgrader release_assignment` hands the class is scanned for the assignment's leaks first.

nbgrader's generate_assignment copies every file of assignments/<name>/ into release/ as it is
(only notebooks' solution cells are cleared): a `codesign.py` an author solved in place to try the
notebook, or Jupyter's "Duplicate" of the answered notebook (`handout-Copy1.ipynb`, no nbgrader
metadata, so nothing is cleared) or an editor's backup of the solved module (`codesign.py~`), went to every student who fetched. The course's release refuses
a release that holds a solution line, a reference answer, a marker or a written-out key, naming
each, and copies nothing into the exchange."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from course_copy import run

pytest.importorskip("nbgrader")
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the exchange's checks want root's or the instructor's folders")

ASSIGNMENT = "lec01_codesign"


def _solved_in_place(course: Path, reference: Path) -> None:
    shutil.copyfile(reference / "codesign.py", course / "assignments" / ASSIGNMENT / "codesign.py")


def _editor_backup(course: Path, reference: Path) -> None:
    shutil.copyfile(reference / "codesign.py", course / "assignments" / ASSIGNMENT / "codesign.py~")


def _answered_duplicate(course: Path, reference: Path) -> None:
    notebook = json.loads((reference / "handout.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:                 # as Jupyter's Duplicate of a working copy: no grading metadata
        cell.get("metadata", {}).pop("nbgrader", None)
    (course / "assignments" / ASSIGNMENT / "handout-Copy1.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


def _release(course: Path, exchange: Path):
    done = run(course, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force")
    assert done.returncode == 0, done.stderr[-3000:]
    return run(course, "-m", "nbgrader", "release_assignment", ASSIGNMENT, "--force", f"--Exchange.root={exchange}")


def _exchange(tmp_path: Path) -> Path:
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    return exchange


@pytest.mark.parametrize("slip, named", [(_solved_in_place, "codesign.py"), (_answered_duplicate, "handout-Copy1.ipynb"),
                                         (_editor_backup, "codesign.py~")],
                         ids=["solved codesign.py", "answered duplicate notebook", "an editor's backup"])
def test_a_release_holding_the_solution_is_not_handed_to_the_class(released_course, reference_submission, tmp_path,
                                                                    slip, named):
    course = released_course(tmp_path / "course")
    course.chmod(0o700)
    slip(course, reference_submission)
    exchange = _exchange(tmp_path)
    done = _release(course, exchange)
    assert done.returncode != 0, done.stderr[-3000:]
    assert named in done.stderr and "solution" in done.stderr, done.stderr[-3000:]
    assert not list((exchange / "cs349e" / "outbound").rglob("*")) if (exchange / "cs349e" / "outbound").exists() else True


def test_a_clean_release_is_handed_out(released_course, tmp_path):
    course = released_course(tmp_path / "course")
    course.chmod(0o700)
    exchange = _exchange(tmp_path)
    done = _release(course, exchange)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (exchange / "cs349e" / "outbound" / ASSIGNMENT / "codesign.py").is_file()
