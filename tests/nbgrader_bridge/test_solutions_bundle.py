"""The student-facing solutions: solved, explained, runnable on their own, no grader inside."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.engine.registry import load_config
from autograder.nbgrader_bridge.solutions_bundle import (EXPLANATION_HEADING, BundleError, bundled_demo,
                                                         write_solutions_bundle)
from solutions.lec01_codesign.explanations import EXPLANATIONS

ASSIGNMENT = "lec01_codesign"
CONFIG = load_config(ASSIGNMENT)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    dest = tmp_path_factory.mktemp("bundle")
    written = write_solutions_bundle(ASSIGNMENT, dest)
    return dest, written


def test_the_bundle_is_the_students_folder_solved(bundle):
    dest, written = bundle
    public = set(CONFIG.trusted_files())
    assert public | set(CONFIG.student_files) | {"demo.py", "SOLUTIONS.md"} == set(written)
    assert "### BEGIN SOLUTION" not in (dest / "codesign.py").read_text(encoding="utf-8")
    assert "NotImplementedError" not in (dest / "codesign.py").read_text(encoding="utf-8")


def test_every_question_is_followed_by_its_explanation(bundle):
    dest, _ = bundle
    cells = nbformat.read(dest / CONFIG.notebook, as_version=4).cells
    ids = [c.get("id") for c in cells]
    for item in CONFIG.items_of("number", "choice", "text"):
        answer = item.id if item.kind == "text" else f"{item.id}_answer"
        explanation = cells[ids.index(answer) + 1]
        assert explanation.id == f"{item.id}_explanation"
        assert explanation.cell_type == "markdown" and explanation.source.startswith(EXPLANATION_HEADING)
        assert EXPLANATIONS[item.id].split()[0] in explanation.source
        assert "\n    " not in explanation.source  # dedented: not a Markdown code block


def test_the_demo_runs_on_the_bundles_own_modules(bundle):
    dest, _ = bundle
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "demo.py"], cwd=dest, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "NVFP4" in done.stdout
    lines = (dest / "demo.py").read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if line.lstrip().startswith(("from solutions", "import solutions"))]


def test_a_demo_importing_a_module_the_bundle_lacks_is_refused(tmp_path):
    with pytest.raises(BundleError, match="does not contain"):
        bundled_demo(ASSIGNMENT, tmp_path)  # an empty bundle: no codesign.py to import from


def test_a_failed_release_leaves_nothing_partial(tmp_path):
    """The bundle is staged and renamed into place: a release that fails half-way (here the lecture
    demo is missing) writes no folder, and leaves an earlier release as it was."""
    from course_copy import copy_course, run

    root = copy_course(tmp_path / "course")
    (root / "solutions" / ASSIGNMENT / "demo.py").unlink()
    dest = root / "released_solutions" / ASSIGNMENT
    done = run(root, "-m", "autograder", "release-solutions", ASSIGNMENT, "--force")
    assert done.returncode == 2 and "demo.py not found" in done.stderr, done.stderr
    assert not dest.exists() and not (dest.parent.exists() and any(dest.parent.iterdir()))

    dest.mkdir(parents=True)
    (dest / "earlier.txt").write_text("an earlier release", encoding="utf-8")
    done = run(root, "-m", "autograder", "release-solutions", ASSIGNMENT, "--force")
    assert done.returncode == 2, done.stderr
    assert sorted(p.name for p in dest.parent.iterdir()) == [ASSIGNMENT]  # no staging folder left behind
    assert [p.name for p in dest.iterdir()] == ["earlier.txt"]


def test_a_folder_that_is_not_an_earlier_bundle_is_never_replaced(tmp_path):
    (tmp_path / "notes.md").write_text("an instructor's notes", encoding="utf-8")
    with pytest.raises(BundleError, match="not an earlier solutions bundle"):
        write_solutions_bundle(ASSIGNMENT, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"]


def test_an_earlier_bundle_is_replaced_whole(bundle, tmp_path):
    earlier, _ = bundle
    dest = tmp_path / "released"
    shutil.copytree(earlier, dest)
    (dest / "stale.py").write_text("left from an earlier release\n", encoding="utf-8")
    written = write_solutions_bundle(ASSIGNMENT, dest)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == written
    assert "stale.py" not in written and sorted(p.name for p in tmp_path.iterdir()) == ["released"]
