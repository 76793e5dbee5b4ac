"""The pinned results store: a result is used only for the files pregrade snapshotted."""

import json
import shutil

import pytest

from autograder.build import write_reference_submission
from autograder.engine.executed_notebook import executed_notebook
from autograder.engine.outputs import executed_path, results_path, write_result
from autograder.engine.registry import load_config
from autograder.engine.results import ItemResult, SubmissionResult
from autograder.nbgrader_bridge.course import Course
from autograder.nbgrader_bridge.pinned import (MANIFEST, PinError, PinnedResults, drop_results_without_executed,
                                               pinned_folder, read_manifest, snapshot_class, write_manifest)

ASSIGNMENT = "lec01_codesign"


def pinned_result(course: Course, assignment: str, student: str) -> SubmissionResult:
    """One student's checked pinned result, read as autograde and reconcile read it."""
    return PinnedResults(course, assignment).result(student)


@pytest.fixture
def course(tmp_path) -> Course:
    root = tmp_path / "course"
    reference = tmp_path / "reference"
    write_reference_submission(ASSIGNMENT, reference)
    for student in ("ann", "bob"):
        shutil.copytree(reference, root / "submitted" / student / ASSIGNMENT)
    return Course(root=root, course_id="cs349e", db_url=f"sqlite:///{root}/gradebook.db",
                  submitted_directory="submitted")


def _store(course: Course, student: str, fingerprint: str, score: float = 3.0) -> None:
    """A result as the grader writes it (its scores do not matter to the store)."""
    items = (ItemResult(id="round_e4m3", kind="function", score=min(score, 10.0), max_score=10.0,
                        status="partial", feedback_md="**测试内容：** x"),)
    write_result(pinned_folder(course, ASSIGNMENT), SubmissionResult(
        student=student, score=score, max_score=100.0, items=items, isolation="bubblewrap", seconds=0.1,
        assignment=ASSIGNMENT, fingerprint=fingerprint, executed=executed_notebook("handout.ipynb", None)))


def _pin(course: Course) -> dict:
    snapshots = snapshot_class(course, ASSIGNMENT)
    for student, snap in snapshots.items():
        _store(course, student, snap.fingerprint)
    assert write_manifest(course, ASSIGNMENT, snapshots) == {}
    return snapshots


def test_a_pinned_result_is_returned_while_the_files_are_unchanged(course):
    snapshots = _pin(course)
    assert pinned_result(course, ASSIGNMENT, "ann").fingerprint == snapshots["ann"].fingerprint
    manifest = json.loads((pinned_folder(course, ASSIGNMENT) / MANIFEST).read_text())
    assert set(manifest["students"]["ann"]["files"]) == set(load_config(ASSIGNMENT).student_files)


def test_without_pregrade_there_is_nothing_to_trust(course):
    with pytest.raises(PinError, match="run `python -m autograder pregrade lec01_codesign`"):
        read_manifest(course, ASSIGNMENT)


def test_a_submitted_file_changed_after_the_snapshot_is_refused(course):
    _pin(course)
    with open(course.submitted_folder / "ann" / ASSIGNMENT / "codesign.py", "a") as f:
        f.write("# changed\n")
    with pytest.raises(PinError, match=r"ann: submitted files differ from the pinned snapshot \(codesign.py\)"):
        pinned_result(course, ASSIGNMENT, "ann")
    assert pinned_result(course, ASSIGNMENT, "bob")  # the classmate is unaffected


def test_a_result_replaced_after_pinning_is_refused(course):
    snapshots = _pin(course)
    _store(course, "ann", snapshots["ann"].fingerprint, score=91.0)  # right fingerprint, other bytes
    with pytest.raises(PinError, match="is not the result pregrade pinned"):
        pinned_result(course, ASSIGNMENT, "ann")


def test_a_student_collected_after_pregrade_is_not_pinned(course):
    _pin(course)
    shutil.copytree(course.submitted_folder / "ann", course.submitted_folder / "cy")
    with pytest.raises(PinError, match="cy: not in the pinned results"):
        pinned_result(course, ASSIGNMENT, "cy")


def test_files_that_changed_while_being_graded_are_not_pinned(course):
    snapshots = snapshot_class(course, ASSIGNMENT)
    _store(course, "ann", "f" * 64)  # graded other files than the snapshot
    _store(course, "bob", snapshots["bob"].fingerprint)
    unpinned = write_manifest(course, ASSIGNMENT, snapshots)
    assert set(unpinned) == {"ann"} and "changed while pregrade ran" in unpinned["ann"]
    assert set(read_manifest(course, ASSIGNMENT)) == {"bob"}
    assert results_path(pinned_folder(course, ASSIGNMENT), "ann").is_file()  # kept, but never trusted


def test_the_pinned_executed_notebook_is_returned_and_a_replaced_one_refused(course):
    _pin(course)
    store = PinnedResults(course, ASSIGNMENT)
    assert store.executed("ann")["cells"] == []
    path = executed_path(pinned_folder(course, ASSIGNMENT), "ann")
    forged = json.loads(path.read_text())
    forged["cells"] = [{"index": 0, "id": "", "source_sha256": "0" * 64, "execution_count": 1,
                        "outputs": [{"output_type": "stream", "name": "stdout", "text": "全对"}]}]
    path.write_text(json.dumps(forged))
    with pytest.raises(PinError, match="ann: .* is not the executed notebook pregrade pinned"):
        PinnedResults(course, ASSIGNMENT).executed("ann")
    assert PinnedResults(course, ASSIGNMENT).executed("bob")["cells"] == []


def test_a_store_of_an_older_grader_is_refused_and_regraded(course):
    """A store from before the grader kept executed notebooks: autograde refuses it, and pregrade
    grades again every student whose executed notebook is missing."""
    _pin(course)
    manifest = pinned_folder(course, ASSIGNMENT) / MANIFEST
    old = json.loads(manifest.read_text())
    old["format"] = 1
    manifest.write_text(json.dumps(old))
    with pytest.raises(PinError, match=r"another version of the grader .*run `python -m autograder pregrade"):
        read_manifest(course, ASSIGNMENT)
    executed_path(pinned_folder(course, ASSIGNMENT), "ann").unlink()
    assert drop_results_without_executed(course, ASSIGNMENT) == ["ann"]
    assert not results_path(pinned_folder(course, ASSIGNMENT), "ann").exists()
    assert results_path(pinned_folder(course, ASSIGNMENT), "bob").is_file()
