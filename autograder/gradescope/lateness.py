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
    users = data.get("users") if isinstance(data.get("users"), list) else []
    dues = [u.get("assignment", {}).get("due_date") for u in users if isinstance(u, dict)
            and isinstance(u.get("assignment"), dict)]
    assignment = data.get("assignment") if isinstance(data.get("assignment"), dict) else {}
    due = next((d for d in dues if d), None) or assignment.get("due_date")
    return _iso(data.get("created_at")), _iso(due)


def write_timestamp(folder: Path, created_at: str | None) -> None:
    if created_at:
        (folder / TIMESTAMP_FILE).write_text(created_at + "\n", encoding="utf-8")


def _iso(value) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value, METADATA).isoformat()
    except ValueError:
        return None
