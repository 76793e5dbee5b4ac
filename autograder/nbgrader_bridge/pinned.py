"""The pinned results: the trusted grader's result for exactly the files nbgrader collected.

`python -m autograder pregrade` hashes every submitted/<student>/<assignment>/ before any student
code runs (the snapshot), grades those files with the trusted grader, and writes the pinned
store, `<course>/.pinned_results/<assignment>/`:

    manifest.json         {"format": 1, "assignment": ..., "students": {student: {
                               "files": {file name: sha256 of its bytes},   # graded files found
                               "missing": [file names],                     # graded files absent
                               "fingerprint": the engine's fingerprint of those files + grading.toml,
                               "result_sha256": sha256 of results/<student>.json,
                               "executed_sha256": sha256 of executed/<student>.json}}}
    results/<student>.json  the trusted grader's result (Gradescope JSON, engine format)
    executed/<student>.json the outputs of each code cell of the grader's one run of the
                            notebook (autograder/engine/executed_notebook.py)
    feedback/<student>.md   its Chinese feedback
    grades.csv

`nbgrader autograde` (autograde_pipeline.py) and `reconcile` read a student's result and executed
notebook only through `PinnedResults.result` and `.executed`, which check them against the
manifest and the submitted files on disk. Autograde runs no student code, so only the instructor's
own commands write this folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from autograder.engine.locate import locate, student_folders
from autograder.engine.outputs import atomic_write_text, executed_path, read_result, results_path
from autograder.engine.registry import GradingConfig, load_config
from autograder.engine.results import SubmissionResult
from autograder.nbgrader_bridge.course import Course

PINNED_DIR = ".pinned_results"
MANIFEST = "manifest.json"
FORMAT = 2   # 2: with the executed notebooks


class PinError(Exception):
    """No pinned result can be trusted for this student (an instructor's problem, with the fix)."""


@dataclass(frozen=True)
class Snapshot:
    """What was collected for one student: the graded files' hashes."""

    files: dict[str, str]
    missing: tuple[str, ...]
    fingerprint: str

    def to_dict(self) -> dict:
        return {"files": self.files, "missing": list(self.missing), "fingerprint": self.fingerprint}


def pinned_folder(course: Course, assignment: str) -> Path:
    return course.root / PINNED_DIR / assignment


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot_of(folder: Path, config: GradingConfig) -> Snapshot:
    found = locate(folder, config)
    return Snapshot(files={name: sha256_file(found.path(name)) for name in found.present},
                    missing=found.missing, fingerprint=found.fingerprint(config))


def snapshot_class(course: Course, assignment: str) -> dict[str, Snapshot]:
    """student -> Snapshot, for every folder in nbgrader's submitted/."""
    config = load_config(assignment)
    submitted = course.submitted_folder
    if not submitted.is_dir():
        return {}
    return {folder.name: snapshot_of(folder, config) for folder in student_folders(submitted)}


def write_manifest(course: Course, assignment: str, snapshots: dict[str, Snapshot]) -> dict[str, str]:
    """Pin every student whose result in the store describes their snapshot; returns student ->
    why they could not be pinned (no result, or files that changed while being graded)."""
    out = pinned_folder(course, assignment)
    students, unpinned = {}, {}
    for student, snap in sorted(snapshots.items()):
        path = results_path(out, student)
        result = read_result(path)
        executed = executed_path(out, student)
        if result is None:
            unpinned[student] = "the trusted grader has no result for this student"
        elif result.fingerprint != snap.fingerprint:
            unpinned[student] = "the submitted files changed while pregrade ran; run pregrade again"
        elif not executed.is_file():
            unpinned[student] = "the trusted grader kept no executed notebook for this student; run pregrade --force"
        else:
            students[student] = {**snap.to_dict(), "result_sha256": sha256_file(path),
                                 "executed_sha256": sha256_file(executed)}
    manifest = {"format": FORMAT, "assignment": assignment, "students": students}
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return unpinned


def drop_results_without_executed(course: Course, assignment: str) -> list[str]:
    """Remove the result of every student of the store whose executed notebook is missing (a store
    written before the grader kept them), so pregrade grades them again; returns those students."""
    out = pinned_folder(course, assignment)
    dropped = []
    for path in sorted((out / "results").glob("*.json")):
        if not executed_path(out, path.stem).is_file():
            path.unlink()
            dropped.append(path.stem)
    return dropped


def read_manifest(course: Course, assignment: str) -> dict[str, dict]:
    """student -> manifest entry; PinError when pregrade never ran (or its manifest is not ours)."""
    path = pinned_folder(course, assignment) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PinError(f"no pinned results at {path}: run `python -m autograder pregrade {assignment}` "
                       "before `nbgrader autograde`") from None
    except (OSError, ValueError) as err:
        raise PinError(f"{path} is unreadable ({err}): run `python -m autograder pregrade {assignment} --force`") from None
    if not isinstance(data, dict) or data.get("assignment") != assignment:
        raise PinError(f"{path} is not a pinned-results manifest of {assignment}: run pregrade --force")
    if data.get("format") != FORMAT:
        raise PinError(f"{path} was written by another version of the grader (format {data.get('format')!r}, "
                       f"expected {FORMAT}): run `python -m autograder pregrade {assignment}`")
    return data["students"]


class PinnedResults:
    """The manifest and every pinned result, read (and checked against each other) once: an
    autograde run loads them once, before the first student is written, and keeps them in memory."""

    def __init__(self, course: Course, assignment: str):
        self.course, self.assignment = course, assignment
        self.config = load_config(assignment)
        self.manifest = read_manifest(course, assignment)
        self._stored = {student: self._read_stored(student, entry) for student, entry in self.manifest.items()}

    def _rerun(self, force: bool = False) -> str:
        return f"run `python -m autograder pregrade {self.assignment}{' --force' if force else ''}`"

    def _read_stored(self, student: str, entry: dict) -> SubmissionResult | PinError:
        path = results_path(pinned_folder(self.course, self.assignment), student)
        if not path.is_file() or sha256_file(path) != entry.get("result_sha256"):
            return PinError(f"{student}: {path} is not the result pregrade pinned: {self._rerun(force=True)}")
        result = read_result(path)
        if result is None or result.fingerprint != entry.get("fingerprint") or result.student != student:
            return PinError(f"{student}: {path} does not describe the pinned snapshot: {self._rerun(force=True)}")
        return result

    def executed(self, student: str) -> dict:
        """The executed notebook pinned for `student` (call `result` first: it checks the files
        on disk); PinError when it is not the one pregrade pinned."""
        path = executed_path(pinned_folder(self.course, self.assignment), student)
        entry = self.manifest.get(student) or {}
        try:
            data = path.read_bytes()
        except OSError:
            data = None
        if data is None or hashlib.sha256(data).hexdigest() != entry.get("executed_sha256"):
            raise PinError(f"{student}: {path} is not the executed notebook pregrade pinned: {self._rerun(force=True)}")
        try:
            executed = json.loads(data)
        except ValueError:
            executed = None
        if not isinstance(executed, dict) or not isinstance(executed.get("cells"), list):
            raise PinError(f"{student}: {path} is not an executed notebook: {self._rerun(force=True)}")
        return executed

    def result(self, student: str) -> SubmissionResult:
        """The pinned result of `student`, after checking that the submitted files on disk are
        still the ones pregrade snapshotted; PinError (naming the fix) otherwise."""
        entry = self.manifest.get(student)
        if entry is None:
            raise PinError(f"{student}: not in the pinned results (collected after pregrade?): {self._rerun()}")
        now = snapshot_of(self.course.submitted_folder / student, self.config)
        if now.files != entry["files"] or list(now.missing) != entry["missing"]:
            changed = {name for name, _ in set(now.files.items()) ^ set(entry["files"].items())}
            names = sorted(changed | (set(now.missing) ^ set(entry["missing"])))
            raise PinError(f"{student}: submitted files differ from the pinned snapshot ({', '.join(names)}): "
                           f"{self._rerun()}")
        if now.fingerprint != entry["fingerprint"]:
            raise PinError(f"{student}: grading.toml changed since the snapshot: {self._rerun()}")
        stored = self._stored[student]
        if isinstance(stored, PinError):
            raise stored
        return stored
