"""Feedback goes out only once late work earns nothing, as the solutions do.

A student's feedback page says which of her answers are right and shows her own answer beside it,
and for a function item the hidden tests' calls and, where one fails, its expected value. What is
the same for every student (the hidden tests; the keys of items that do not change with the
variant, such as lecture 1's end-to-end deficits q34a/q34b or its choices q10, q14, q25) is then
in every classmate's page: one page released a day after the due date, shared with a classmate
who hands in late, is worth half of those points to her. The course's `nbgrader release_feedback`
refuses until the late policy's last day has passed, as `release-solutions` does; the instructor
can still release early, saying so (`--GuardedReleaseFeedback.during_late_work=True`, once every
student's own due date has passed)."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from course_copy import copy_course, run

pytest.importorskip("nbgrader")
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the exchange's checks want root's or the instructor's folders")

ASSIGNMENT = "lec01_codesign"
STUDENT = "ann"
PAGE = "<p>q34a_fp8_end_deficit: 正确。你的答案 23.799</p>"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    root = copy_course(tmp_path_factory.mktemp("feedback-gate") / "course")
    root.chmod(0o700)
    feedback = root / "feedback" / STUDENT / ASSIGNMENT
    feedback.mkdir(parents=True)
    (feedback / "handout.html").write_text(PAGE, encoding="utf-8")
    (feedback / "timestamp.txt").write_text("2030-01-01 00:00:00.000000 UTC")
    (feedback / "submission_secret.txt").write_text("a" * 128)
    return root


def _exchange(tmp_path: Path) -> Path:
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    return exchange


def _due(course: Path, when: datetime | None) -> None:
    gradebook = course / "gradebook.db"
    if gradebook.exists():
        gradebook.unlink()
    args = [f"--duedate={when.isoformat()}"] if when else []
    done = run(course, "-m", "nbgrader", "db", "assignment", "add", ASSIGNMENT, *args)
    assert done.returncode == 0, done.stderr[-3000:]


def _release(course: Path, exchange: Path, *extra: str) -> subprocess.CompletedProcess:
    return run(course, "-m", "nbgrader", "release_feedback", ASSIGNMENT, f"--Exchange.root={exchange}", *extra)


def _released(exchange: Path) -> list[str]:
    folder = exchange / "cs349e" / "feedback"
    return [p.read_text(encoding="utf-8") for p in folder.glob("*.html")] if folder.is_dir() else []


def _accept_days() -> float:
    from autograder.engine.lateness import load_policy
    from autograder.engine.registry import load_config

    return load_policy(load_config(ASSIGNMENT)).accept_days


@pytest.mark.parametrize("due, said", [
    (timedelta(days=-1), "late work is accepted until"),     # a day after the due date
    (timedelta(days=2), "has not passed"),                   # before it
    (None, "no due date"),
])
def test_feedback_is_not_released_while_a_late_hand_in_still_scores(course, tmp_path, due, said):
    _due(course, None if due is None else datetime.now(timezone.utc) + due)
    exchange = _exchange(tmp_path)
    done = _release(course, exchange)
    assert done.returncode != 0, done.stderr[-3000:]
    assert said in done.stderr and "during_late_work" in done.stderr, done.stderr[-3000:]
    assert _released(exchange) == []


def test_feedback_is_released_once_late_work_earns_nothing(course, tmp_path):
    _due(course, datetime.now(timezone.utc) - timedelta(days=_accept_days() + 1))
    exchange = _exchange(tmp_path)
    done = _release(course, exchange)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _released(exchange) == [PAGE]


def test_the_instructor_can_release_early_and_is_told_what_it_gives_away(course, tmp_path):
    _due(course, datetime.now(timezone.utc) - timedelta(days=1))
    exchange = _exchange(tmp_path)
    done = _release(course, exchange, "--GuardedReleaseFeedback.during_late_work=True")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _released(exchange) == [PAGE]
    assert "late work is accepted until" in done.stderr, done.stderr[-3000:]
