"""Lay a Gradescope submission out the way `python -m autograder grade` reads a class.

Gradescope puts whatever the student uploaded under /autograder/submission/: the files
themselves, or a folder (a zip or a GitHub repository) that contains them somewhere. The
grader wants `SUBMISSIONS/<student>/<file>`, so each expected student file is looked up (the
shallowest match wins) and copied, never linked: the engine ignores symlinks, and the grading
folder must not change while it is graded.
"""

import shutil
from dataclasses import dataclass
from pathlib import Path

# Folders an upload may carry that never hold the student's work.
IGNORED_DIRS = {"__MACOSX", "__pycache__", ".ipynb_checkpoints", ".git"}


@dataclass(frozen=True)
class CollectedFiles:
    found: dict[str, str]  # student file name -> where it was, relative to the upload
    missing: tuple[str, ...]


def _candidates(upload: Path, name: str) -> list[Path]:
    matches = [p for p in upload.rglob(name)
               if p.is_file() and not p.is_symlink()
               and not any(part in IGNORED_DIRS for part in p.relative_to(upload).parts)]
    return sorted(matches, key=lambda p: (len(p.relative_to(upload).parts), p.as_posix()))


def collect_submission(upload: Path, student_files: tuple[str, ...], dest: Path) -> CollectedFiles:
    """Copy each of `student_files` found in `upload` into `dest` (created)."""
    if not upload.is_dir():
        raise ValueError(f"submission folder {upload} does not exist")
    dest.mkdir(parents=True, exist_ok=False)
    found, missing = {}, []
    for name in student_files:
        matches = _candidates(upload, name)
        if not matches:
            missing.append(name)
            continue
        shutil.copyfile(matches[0], dest / name)
        found[name] = matches[0].relative_to(upload).as_posix()
    return CollectedFiles(found, tuple(missing))


def submission_student(root: Path) -> tuple[str, str] | None:
    """(student id, where it came from) of the submission, from Gradescope's
    submission_metadata.json: the first submitter's `sid` (the roster's student id), else their
    `email`; None when the metadata names neither (the grader then uses the folder's name)."""
    import json

    try:
        data = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    users = data.get("users") if isinstance(data, dict) else None
    first = users[0] if isinstance(users, list) and users and isinstance(users[0], dict) else {}
    for field in ("sid", "email"):
        value = first.get(field)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip(), f"gradescope {field}"
    return None
