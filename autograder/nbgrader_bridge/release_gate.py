"""When solutions may go out: only after the due date recorded in nbgrader's gradebook."""

from __future__ import annotations

from datetime import datetime


def refusal(due: datetime | None, now: datetime) -> str | None:
    """Why releasing now is refused, or None when it is allowed. Both datetimes are timezone-aware."""
    if due is None:
        return ("no due date is recorded in nbgrader's gradebook; record one with "
                "`nbgrader db assignment add <assignment> --duedate=2030-01-31T23:59:00+08:00`")
    if now < due:
        left = due - now
        days = f"{left.days} d " if left.days else ""
        return (f"the due date {due:%Y-%m-%d %H:%M} UTC has not passed yet "
                f"({days}{left.seconds // 3600} h {left.seconds // 60 % 60} min left)")
    return None
