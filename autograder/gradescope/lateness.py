"""When a Gradescope submission was made and when it was due, from submission_metadata.json.

Gradescope writes /autograder/submission_metadata.json next to the submission: `created_at` (the
upload time) and the assignment's `due_date`; a student's extension shows as a different
`users[i].assignment.due_date`. The runner writes `created_at` to the student's timestamp.txt and
passes the due date to `python -m autograder grade --due`, so the late policy of grading.toml
applies exactly as in a local batch.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.engine.lateness import TIMESTAMP_FILE, parse_time

METADATA = "submission_metadata.json"


def submission_times(root: Path) -> tuple[str | None, str | None]:
    """(created_at, due date) as ISO 8601 UTC, each None when absent or unreadable."""
    try:
        data = json.loads((root / METADATA).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    users = [u for u in data.get("users", []) if isinstance(u, dict)] if isinstance(data.get("users"), list) else []
    assignment = data.get("assignment") if isinstance(data.get("assignment"), dict) else {}
    default = _iso(assignment.get("due_date"))
    # An extension is its own student's: a group (the uploader adds its members) is due when its
    # earliest member is, so adding a classmate with an extension lends it to no one.
    dues = [_iso(u["assignment"].get("due_date")) if isinstance(u.get("assignment"), dict) else None
            for u in users]
    dues = [due or default for due in dues] or [default]
    known = [due for due in dues if due]
    return _iso(data.get("created_at")), min(known, key=_instant) if known else None


def write_timestamp(folder: Path, created_at: str | None) -> None:
    if created_at:
        (folder / TIMESTAMP_FILE).write_text(created_at + "\n", encoding="utf-8")


def _instant(iso: str):
    return parse_time(iso, METADATA)


def _iso(value) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value, METADATA).isoformat()
    except ValueError:
        return None
