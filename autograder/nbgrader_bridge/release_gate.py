"""When solutions may go out: only after the due date recorded in nbgrader's gradebook, and only once
late work can no longer earn points (the late policy's last day, `[late] accept_days`): a solution
released while a late hand-in still scores is one a student can hand in. A student's extension moves
her own due date, and the gate with it: it waits for the latest."""

from __future__ import annotations

from datetime import datetime, timedelta

from autograder.engine.lateness import LatePolicy


def refusal(due: datetime | None, now: datetime, policy: LatePolicy | None,
            extensions: dict[str, datetime] | None = None, *, late_work_may_score: bool = False) -> str | None:
    """Why releasing now is refused, or None when it is allowed. All datetimes are timezone-aware;
    `policy` None: the assignment has no late policy (late work is never charged); `extensions`:
    student -> her own due date, where an extension moved it; `late_work_may_score`: only the due
    dates are waited for (the instructor accepted that late work still scores)."""
    if due is None:
        return ("no due date is recorded in nbgrader's gradebook; record one with "
                "`nbgrader db assignment add <assignment> --duedate=2030-01-31T23:59:00+08:00`")
    later = {student: own for student, own in (extensions or {}).items() if own > due}
    if later:
        student = max(sorted(later), key=later.get)
        whose, due = f" of {student} (an extension)", later[student]
    else:
        whose = ""
    if now < due:
        return f"the due date {due:%Y-%m-%d %H:%M} UTC{whose} has not passed yet ({_left(due - now)} left)"
    if late_work_may_score:
        return None
    if policy is None:
        return ("the assignment has no late policy, so late work keeps every point: add a [late] table to its "
                "grading.toml with `accept_days` (late work handed in after it earns nothing)")
    if policy.max_percent < 100 and policy.accept_days is None:
        return (f"late work still earns up to {100 - policy.max_percent:g}% of the automatic points and the late "
                f"policy has no last day: a student could hand in the solutions; set `accept_days` in the "
                f"assignment's grading.toml [late] table (late work handed in after it earns nothing)")
    if policy.accept_days is not None:
        closes = due + timedelta(seconds=policy.open_seconds())
        if now <= closes:
            return (f"late work is accepted until {closes:%Y-%m-%d %H:%M} UTC ([late] accept_days = "
                    f"{policy.accept_days:g} after the due date{whose}) ({_left(closes - now)} left)")
    return None


def _left(left: timedelta) -> str:
    days = f"{left.days} d " if left.days else ""
    return f"{days}{left.seconds // 3600} h {left.seconds // 60 % 60} min"
