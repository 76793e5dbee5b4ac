"""zip_collect's collector keeps submission times from LMS file names (timestamp.txt); the
pattern is matched against the LMS file name alone."""

from __future__ import annotations

import pytest

pytest.importorskip("nbgrader")

from autograder.nbgrader_bridge.collect import LmsFileNameCollector  # noqa: E402

# Blackboard-style names: <assignment>_<student>_attempt_<time>_<file>
BLACKBOARD = r"lec01_(?P<student_id>[a-z]+)_attempt_(?P<timestamp>[0-9\-]+)_(?P<file_id>[^/]+)$"


def collector(regexp: str, zone: str = "UTC") -> LmsFileNameCollector:
    plugin = LmsFileNameCollector(named_regexp=regexp, valid_ext=[".ipynb", ".py"])
    plugin.timestamp_timezone = zone
    return plugin


@pytest.mark.parametrize("zone, expected", [("UTC", "2030-02-01T10:30:00+00:00"),
                                            ("Asia/Shanghai", "2030-02-01T10:30:00+08:00")])
def test_a_time_in_the_file_name_becomes_iso_in_the_lms_time_zone(zone, expected):
    info = collector(BLACKBOARD, zone).describe("lec01_amy_attempt_2030-02-01-10-30-00_codesign.py")
    assert info["student_id"] == "amy" and info["file_id"] == "codesign.py" and info["timestamp"] == expected


def test_a_name_without_time_or_late_marker_records_none():
    regexp = r"(?P<student_id>[a-z]+)(?:_LATE)?(?:_\d+)*_(?P<file_id>[^/]+)$"
    info = collector(regexp).describe("amy_12_34_handout-2.ipynb")
    # no time and no late marker; the number after the name is Canvas's user id, kept to tell two users apart
    assert info == {"student_id": "amy", "file_id": "handout.ipynb", "lms_user": "12"}


def test_an_unknown_time_zone_is_a_clear_error():
    with pytest.raises(ValueError, match="Mars/Olympus"):
        collector(BLACKBOARD, "Mars/Olympus").describe("lec01_amy_attempt_2030-02-01-10-30-00_codesign.py")


def test_a_pattern_written_for_paths_is_a_clear_error():
    old = r".*/extracted/(?P<student_id>[a-z]+)_(?P<file_id>[^/]+)$"
    assert "remove its leading '.*/extracted/'" in collector(old).check_regexp()
    assert collector(BLACKBOARD).check_regexp() is None


def test_attempts_with_distinct_times_in_their_names_are_not_duplicates():
    """Blackboard lists every attempt: nbgrader keeps the newest when each name carries its time;
    without times (or with the same time twice) which file to grade is unclear."""
    from pathlib import Path

    from autograder.nbgrader_bridge.collect import GuardedLmsExtractor, Planned, Upload
    from autograder.nbgrader_bridge.lms_upload import UploadRefused

    def planned(name, stamp):
        return Planned(Upload(name, Path(name), "amy", "codesign.py", stamp, False), "codesign.py", name)

    GuardedLmsExtractor._refuse_duplicates([planned("a1", "2030-02-01T10:30:00+00:00"),
                                            planned("a2", "2030-02-02T10:30:00+00:00")])
    for second in (None, "2030-02-01T10:30:00+00:00"):
        with pytest.raises(UploadRefused, match="codesign.py twice"):
            GuardedLmsExtractor._refuse_duplicates([planned("a1", "2030-02-01T10:30:00+00:00"), planned("a2", second)])


def test_a_student_and_time_read_from_the_students_own_file_name_are_refused():
    """The student names the file they upload; the LMS puts its prefix (assignment, student, time)
    before that name. With a pattern starting with a greedy `.*`, a file the student named
    `x_bob_attempt_2029-…_codesign.py` was read as bob's, handed in in 2029. The LMS's prefix is the
    shortest the pattern accepts: a name that parses otherwise from it is no student's, and says why."""
    greedy = r".*_(?P<student_id>[a-z]+)_attempt_(?P<timestamp>[0-9\-]+)_(?P<file_id>[^/]+)$"
    honest = collector(greedy).describe("lec01_amy_attempt_2030-02-01-10-30-00_codesign.py")
    assert honest["student_id"] == "amy" and "ambiguous" not in honest
    forged = collector(greedy).describe("lec01_amy_attempt_2030-02-01-10-30-00_x_bob_attempt_2029-01-01-00-00-00_codesign.py")
    assert "amy" in forged["ambiguous"] and "bob" in forged["ambiguous"]
    canvas = collector(r"(?P<student_id>[a-z]+)(?:_LATE)?(?:_\d+)*_(?P<file_id>[^/]+)$").describe("amy_12_34_x_5_6_h.ipynb")
    assert canvas["student_id"] == "amy" and "ambiguous" not in canvas


def test_a_pattern_reading_past_the_files_name_is_still_checked_from_the_lms_prefix():
    """A pattern may match more after the file's name (its extension, `\\.py$`): the LMS's own prefix
    is read with that end kept, so bob's name inside amy's file still does not make it bob's."""
    greedy = r".*_(?P<student_id>[a-z]+)_attempt_(?P<timestamp>[0-9\-]+)_(?P<file_id>.+)\.py$"
    honest = collector(greedy).describe("lec01_amy_attempt_2030-02-01-10-30-00_codesign.py")
    assert honest["student_id"] == "amy" and "ambiguous" not in honest
    forged = collector(greedy).describe("lec01_amy_attempt_2030-02-01-10-30-00_x_bob_attempt_2029-01-01-00-00-00_codesign.py")
    assert forged["student_id"] == "bob"
    assert "amy" in forged.get("ambiguous", "") and "bob" in forged["ambiguous"], forged
