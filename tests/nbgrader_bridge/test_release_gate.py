"""Solutions go out only after a recorded due date."""

from datetime import datetime, timedelta, timezone

from autograder.nbgrader_bridge.release_gate import refusal

NOW = datetime(2030, 1, 31, 16, 0, tzinfo=timezone.utc)


def test_no_recorded_due_date_is_refused_with_the_command_that_records_one():
    reason = refusal(None, NOW)
    assert "no due date" in reason and "nbgrader db assignment add" in reason


def test_before_the_due_date_is_refused_with_the_time_left():
    reason = refusal(NOW + timedelta(hours=26, minutes=5), NOW)
    assert "has not passed" in reason and "1 d 2 h 5 min left" in reason
    assert "(3 h 0 min left)" in refusal(NOW + timedelta(hours=3), NOW)


def test_at_and_after_the_due_date_is_allowed():
    assert refusal(NOW, NOW) is None
    assert refusal(NOW - timedelta(seconds=1), NOW) is None


def test_time_zones_are_compared_as_instants():
    shanghai = timezone(timedelta(hours=8))
    assert refusal(datetime(2030, 1, 31, 23, 59, tzinfo=shanghai), NOW) is None  # 15:59 UTC
