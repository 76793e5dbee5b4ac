"""Lay a Gradescope submission out the way `python -m autograder grade` reads a class.

Gradescope puts whatever the student uploaded under /autograder/submission/: the files
themselves, or a folder (a zip or a GitHub repository) that contains them somewhere. The
grader wants `SUBMISSIONS/<student>/<file>`, so each expected student file is looked up (the
shallowest match wins) and copied, never linked: the engine ignores symlinks, and the grading
folder must not change while it is graded.
"""

import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.engine.locate import MAX_STUDENT_FILE_BYTES
from autograder.sandbox.workdir import MAX_DEPTH, MAX_ENTRIES, SubmissionTooLarge, bounded_walk

# Folders an upload may carry that never hold the student's work.
IGNORED_DIRS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints", ".git"}


@dataclass(frozen=True)
class CollectedFiles:
    found: dict[str, str]  # student file name -> where it was, relative to the upload
    missing: tuple[str, ...]


TOO_LARGE_MESSAGE = (
    "这次上传的文件太多或文件夹嵌套太深（最多 {entries} 个文件和文件夹、{depth} 层文件夹），没有评分，"
    "暂不计分。请只上传作业要求的文件（{files}）后重新提交。"
)


class UploadTooLarge(ValueError):
    """The upload is beyond what the grader walks; `student_message` says so to the student."""

    def __init__(self, reason: str, student_message: str):
        super().__init__(reason)
        self.student_message = student_message


def _files_by_name(upload: Path, student_files: tuple[str, ...]) -> dict[str, list[PurePosixPath]]:
    """Where each of `student_files` is in the upload, regular files only, in one bounded walk."""
    wanted = set(student_files)
    found: dict[str, list[PurePosixPath]] = {name: [] for name in student_files}
    try:
        for rel, entry in bounded_walk(upload, frozenset(IGNORED_DIRS)):
            if entry.name in wanted and not any(part in IGNORED_DIRS for part in rel.parts[:-1]) \
                    and entry.is_file(follow_symlinks=False):
                found[entry.name].append(rel)
    except SubmissionTooLarge as err:
        raise UploadTooLarge(f"upload refused: {err}", TOO_LARGE_MESSAGE.format(
            entries=MAX_ENTRIES, depth=MAX_DEPTH, files="、".join(student_files))) from None
    return found


def _copy_unless_oversized(source: Path, target: Path) -> None:
    """A copy; a file beyond what the engine reads is laid out by its size only (sparse, never
    read): a sparse upload of terabytes would otherwise fill the disk and the grading time."""
    size = os.lstat(source).st_size
    if size > MAX_STUDENT_FILE_BYTES:
        with open(target, "wb") as handle:
            handle.truncate(size)   # the engine says it is too large, from its size
    else:
        shutil.copyfile(source, target, follow_symlinks=False)


def collect_submission(upload: Path, student_files: tuple[str, ...], dest: Path) -> CollectedFiles:
    """Copy each of `student_files` found in `upload` into `dest` (created). UploadTooLarge for
    an upload of more than MAX_ENTRIES files and folders, or folders nested past MAX_DEPTH."""
    if not upload.is_dir():
        raise ValueError(f"submission folder {upload} does not exist")
    where = _files_by_name(upload, student_files)
    dest.mkdir(parents=True, exist_ok=False)
    found, missing = {}, []
    for name in student_files:
        matches = sorted(where[name], key=lambda rel: (len(rel.parts), rel.as_posix()))
        if not matches:
            missing.append(name)
            continue
        _copy_unless_oversized(upload / matches[0], dest / name)
        found[name] = matches[0].as_posix()
    return CollectedFiles(found, tuple(missing))


def _metadata_users(root: Path) -> list | None:
    """The `users` list of Gradescope's submission_metadata.json, or None where there is none."""
    import json

    try:
        data = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    users = data.get("users") if isinstance(data, dict) else None
    return users if isinstance(users, list) else None


def submitter_count(root: Path) -> int:
    """How many students submission_metadata.json names (a group submission names each member)."""
    return len(_metadata_users(root) or [])


def submission_student(root: Path) -> tuple[str, str] | None:
    """(student id, where it came from) of the submission, from Gradescope's
    submission_metadata.json: the first submitter's `sid` (the roster's student id), else their
    `email`; None when the metadata names neither (the grader then uses the folder's name)."""
    users = _metadata_users(root)
    first = users[0] if users and isinstance(users[0], dict) else {}
    for field in ("sid", "email"):
        value = first.get(field)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip(), f"gradescope {field}"
    return None
