"""Solutions go out only after a recorded due date."""

from datetime import datetime, timedelta, timezone

from autograder.engine.lateness import LatePolicy
from autograder.nbgrader_bridge.release_gate import refusal

NOW = datetime(2030, 1, 31, 16, 0, tzinfo=timezone.utc)
# Late work earns nothing at all: only the due date decides.
CLOSED = LatePolicy(percent_per_day=100, max_percent=100)


def test_no_recorded_due_date_is_refused_with_the_command_that_records_one():
    reason = refusal(None, NOW, CLOSED)
    assert "no due date" in reason and "nbgrader db assignment add" in reason


def test_before_the_due_date_is_refused_with_the_time_left():
    reason = refusal(NOW + timedelta(hours=26, minutes=5), NOW, CLOSED)
    assert "has not passed" in reason and "1 d 2 h 5 min left" in reason
    assert "(3 h 0 min left)" in refusal(NOW + timedelta(hours=3), NOW, CLOSED)


def test_at_and_after_the_due_date_is_allowed():
    assert refusal(NOW, NOW, CLOSED) is None
    assert refusal(NOW - timedelta(seconds=1), NOW, CLOSED) is None


def test_time_zones_are_compared_as_instants():
    shanghai = timezone(timedelta(hours=8))
    assert refusal(datetime(2030, 1, 31, 23, 59, tzinfo=shanghai), NOW, CLOSED) is None  # 15:59 UTC


# Lecture 1's policy (grading.toml [late]): what a released solution handed in late could still earn.
from hypothesis import given, settings, strategies as st  # noqa: E402

from autograder.engine.lateness import DAY, LatePolicy, load_policy, penalty_points  # noqa: E402
from autograder.engine.registry import load_config  # noqa: E402

LECTURE_POLICY = load_policy(load_config("lec01_codesign"))


@settings(derandomize=True, database=None, max_examples=200)
@given(days_after_due=st.floats(0, 400))
def test_once_the_solutions_may_go_out_a_late_hand_in_earns_nothing(days_after_due):
    """The gate once looked at the due date alone: under lecture 1's policy (10 % a day, at most 50 %)
    the released solution, handed in a day later, kept half of the automatic points."""
    due = NOW - timedelta(days=days_after_due)
    if refusal(due, NOW, LECTURE_POLICY) is None:
        seconds_late = (NOW - due).total_seconds()
        assert penalty_points(154.0, seconds_late, LECTURE_POLICY) == 154.0, days_after_due


def test_the_lectures_gate_names_the_last_day_and_opens_after_it():
    last = LECTURE_POLICY.open_seconds() / DAY
    reason = refusal(NOW - timedelta(days=1), NOW, LECTURE_POLICY)
    assert reason and "late work is accepted until" in reason and "accept_days" in reason
    assert refusal(NOW - timedelta(days=last, seconds=1), NOW, LECTURE_POLICY) is None


def test_a_policy_without_a_last_day_refuses_and_says_what_to_set():
    reason = refusal(NOW - timedelta(days=100), NOW, LatePolicy(percent_per_day=10, max_percent=50))
    assert "no last day" in reason and "accept_days" in reason
    # a late hand-in that can lose everything needs no last day
    assert refusal(NOW - timedelta(days=100), NOW, LatePolicy(percent_per_day=10, max_percent=100)) is None


def test_an_assignment_without_a_late_policy_is_refused_and_says_what_to_add():
    """Without a [late] table late work is never charged (the grader and nbgrader charge nothing): the
    solutions, or a classmate's feedback, handed in a day after the due date kept every point."""
    reason = refusal(NOW - timedelta(days=100), NOW, None)
    assert reason and "no late policy" in reason and "accept_days" in reason
