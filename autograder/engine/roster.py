"""The course roster (`roster.txt` at the course root, one student id per line): read by the
build (the variants table) and by the grader's summary (who is not on the roster)."""

from __future__ import annotations

from pathlib import Path

from autograder.engine.registry import REPO_ROOT
from autograder.engine.variants import StudentIdError, normalize_id
from autograder.errors import InstructorError

ROSTER_FILE = "roster.txt"


class RosterError(InstructorError):
    """The course roster cannot be read (a malformed line names itself)."""


def roster_path(root: Path = REPO_ROOT) -> Path:
    return root / ROSTER_FILE


def read_roster(path: Path) -> list[str]:
    """The student ids of the roster, in order, each once; blank lines and `#` comments skipped.
    A missing roster is an empty class (the build warns)."""
    if not path.is_file():
        return []
    ids, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            sid = normalize_id(text)
        except StudentIdError as err:
            raise RosterError(f"{path}:{number}: {err}") from None
        if sid not in seen:
            seen.add(sid)
            ids.append(sid)
    return ids


def roster_or_empty(root: Path) -> list[str]:
    """The roster at course root `root` for a check that only consults it: none where it is missing
    or cannot be read (the build reports a broken one)."""
    try:
        return read_roster(roster_path(Path(root)))
    except Exception:        # noqa: BLE001 - a broken roster is the build's to report
        return []
