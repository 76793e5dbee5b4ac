"""Late work: the course's late policy, when a submission was handed in, and what it costs.

The policy lives in one place, the `[late]` table of the assignment's grading.toml (public: the
students read the same file):

    [late]
    percent_per_day = 10   # each day late, started days count as whole ones
    max_percent = 50       # never more than this
    grace_minutes = 0      # optional: this much after the due date still counts as on time

The penalty is that percentage of the automatic points, rounded to 0.01, exactly as nbgrader's
late penalty (autograder.nbgrader_bridge.late) applies it to the notebook's score at autograde
time; the free-text points graded by hand later are not reduced. Both call `penalty_points`.

When a submission was handed in comes from `timestamp.txt` in its folder, as collection wrote it
(never a student's own file): the kit's `nbgrader collect` writes the time it took from the
exchange folder's name and ctime (autograder.nbgrader_bridge.inbound; the student's timestamp.txt
is not copied); `nbgrader zip_collect` writes it from an LMS
download's file names (autograder.nbgrader_bridge.collect); the Gradescope runner writes it from
submission_metadata.json. The due date comes from the caller: `grade --due`, nbgrader's gradebook,
or Gradescope's metadata.

Imported lazily by the engine modules a hidden-test draw loads (results, feedback, outputs,
batch): hypothesis draws from the literal constants of every local module it finds imported, so
an extra module there would change the committed property examples (property_examples.py).
"""

from __future__ import annotations

import math
import re
import sys
import tomllib
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from autograder.engine.registry import ConfigError, GradingConfig
from autograder.engine.terminal_text import show_controls

TIMESTAMP_FILE = "timestamp.txt"
DAY = 86400.0
_STAMP = re.compile(r"^(?P<when>\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)\s*(?P<zone>Z|UTC|[+-]\d\d:?\d\d)?$")


@dataclass(frozen=True)
class LatePolicy:
    percent_per_day: float
    max_percent: float
    grace_minutes: float = 0.0
    # Days after the due date (and the grace period) late work still earns points; past them it
    # earns none, and the solutions may go out (release_gate.py). None: no last day.
    accept_days: float | None = None

    def percent(self, seconds_late: float) -> float:
        """Percentage of the automatic points lost `seconds_late` after the due date."""
        if self.past_last_day(seconds_late):
            return 100.0
        return min(self.max_percent, self.percent_per_day * self.days_charged(seconds_late))

    def past_last_day(self, seconds_late: float) -> bool:
        return self.accept_days is not None and seconds_late > self.open_seconds()

    def open_seconds(self) -> float:
        """How long after the due date late work still earns points (inf: no last day)."""
        if self.accept_days is None:
            return math.inf
        return 60.0 * self.grace_minutes + DAY * self.accept_days

    def days_charged(self, seconds_late: float) -> int:
        """Started days late after the grace period (0 when on time)."""
        over = seconds_late - 60.0 * self.grace_minutes
        return math.ceil(over / DAY) if over > 0 else 0


@dataclass(frozen=True)
class Lateness:
    """How late one submission was and what it cost; stored in results.json (extra_data)."""

    submitted_at: str        # ISO 8601, UTC
    due: str                 # ISO 8601, UTC
    seconds_late: float      # 0 when on time
    days_charged: int
    percent: float
    penalty: float           # points taken off the automatic score
    source: str              # where the submission time came from
    closed: bool = False     # handed in past the policy's last day (accept_days): no automatic points


def penalty_points(score: float, seconds_late: float, policy: LatePolicy | None) -> float:
    """Points a submission `seconds_late` loses of its automatic `score` (never more than it has)."""
    if policy is None or seconds_late <= 0 or score <= 0:
        return 0.0
    percent = policy.percent(seconds_late)
    return score if percent >= 100 else min(score, round(score * percent / 100.0, 2))   # all of it, unrounded


def load_policy(config: GradingConfig) -> LatePolicy | None:
    """The `[late]` table of grading.toml, or None when the assignment has no late policy."""
    path = Path(config.folder) / "grading.toml"
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("late")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read the late policy: {err}") from None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [late] must be a table")
    unknown = sorted(set(table) - set(_LATE_KEYS))
    if unknown:
        raise ConfigError(f"{path}: [late] has unknown keys {unknown} (allowed: {', '.join(_LATE_KEYS)})")
    values = {}
    for key, (default, most) in _LATE_KEYS.items():
        value = table.get(key, default)
        if key == "accept_days" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= most:
            raise ConfigError(f"{path}: [late] {key} must be a number from 0 to {most}, got {value!r}")
        values[key] = float(value)
    return LatePolicy(**values)


# key: (default, largest value); accept_days absent: late work earns points without end
_LATE_KEYS = {"percent_per_day": (None, 100), "max_percent": (None, 100), "grace_minutes": (0.0, 7 * 24 * 60),
              "accept_days": (None, 365)}


def parse_time(text: str, where: str = "time") -> datetime:
    """An aware UTC datetime from ISO 8601 or nbgrader's timestamp forms
    ("2030-01-31 15:59:00.123456", "... UTC", "...+08:00", "...Z"); a time without a zone is UTC,
    as nbgrader writes it. ValueError naming `where` otherwise."""
    cleaned = text.strip()
    match = _STAMP.match(cleaned)
    try:
        if match:
            when = datetime.fromisoformat(match["when"].replace(" ", "T"))
            zone = match["zone"]
            if zone and zone not in ("Z", "UTC"):
                sign = 1 if zone[0] == "+" else -1
                digits = zone[1:].replace(":", "")
                when = when.replace(tzinfo=timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))))
        else:
            when = datetime.fromisoformat(cleaned)
    except ValueError:
        when = None
    if when is None:
        raise ValueError(f"{where}: {text.strip()[:80]!r} is not a date and time "
                         "(expected ISO 8601, e.g. 2030-01-31T23:59:00+08:00)")
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


def submission_time(folder: Path) -> datetime | None:
    """The time in `folder`/timestamp.txt (or one level down, nbgrader's <student>/<assignment>/),
    None without one. A malformed file is an error naming it: a silent "on time" would be unfair
    to everyone else."""
    for path in (Path(folder) / TIMESTAMP_FILE, *sorted(Path(folder).glob(f"*/{TIMESTAMP_FILE}"))):
        if path.is_file():
            return parse_time(path.read_text(encoding="utf-8", errors="replace")[:200], str(path))
    return None


def assess(score: float, submitted: datetime | None, due: datetime | None, policy: LatePolicy | None,
           source: str = TIMESTAMP_FILE) -> Lateness | None:
    """The lateness record of a submission, or None when there is nothing to judge by (no due
    date, no submission time or no policy)."""
    if submitted is None or due is None or policy is None:
        return None
    seconds = max(0.0, (submitted - due).total_seconds())
    return Lateness(submitted_at=_iso(submitted), due=_iso(due), seconds_late=round(seconds, 3),
                    days_charged=policy.days_charged(seconds), percent=policy.percent(seconds),
                    penalty=penalty_points(score, seconds, policy), source=source, closed=policy.past_last_day(seconds))


def stamp(result, folder: Path, due: datetime | None, policy: LatePolicy | None):
    """`result` (a SubmissionResult) with the lateness of the submission in `folder`. An
    unreadable timestamp.txt leaves the lateness unknown, said on stderr: it comes from the
    student's side of the exchange and must not stop the batch."""
    try:
        submitted = submission_time(folder)
    except (OSError, ValueError) as err:
        print(show_controls(f"warning: {result.student}: submission time unknown, no late penalty: {err}"),
              file=sys.stderr)
        submitted = None
    else:
        if submitted is None and due is not None and policy is not None:
            print(show_controls(f"warning: {result.student}: no submission time known (no {TIMESTAMP_FILE} in "
                                f"{folder}), so no late penalty: if they handed in late, write the time into "
                                f"{Path(folder) / TIMESTAMP_FILE} (e.g. 2030-02-01 10:30:00 UTC) and grade again"),
                  file=sys.stderr)
    return replace(result, late=assess(result.score, submitted, due, policy))


def describe(late: Lateness) -> str:
    """One Chinese sentence for the student's feedback."""
    if late.seconds_late <= 0:
        return f"按时提交（提交时间 {late.submitted_at}，截止时间 {late.due}，均为 UTC）。"
    hours = late.seconds_late / 3600
    span = f"{hours / 24:.1f} 天" if hours >= 24 else f"{hours:.1f} 小时"
    if late.days_charged == 0:
        return f"迟交 {span}，仍在宽限期内，不扣分（提交时间 {late.submitted_at}，截止时间 {late.due}，UTC）。"
    if late.closed:
        return (f"迟交 {span}，已过接收迟交作业的最后期限（grading.toml 的 [late] accept_days），整份作业记 0 分"
                f"（文字题也不计分）："
                f"−{late.penalty:g} 分（提交时间 {late.submitted_at}，截止时间 {late.due}，UTC；时间来源：{late.source}）。")
    return (f"迟交 {span}（按 {late.days_charged} 天计），扣自动评分的 {late.percent:g}%："
            f"−{late.penalty:g} 分（提交时间 {late.submitted_at}，截止时间 {late.due}，UTC；"
            f"时间来源：{late.source}）。")


def _iso(when: datetime) -> str:
    return when.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
