"""`nbgrader list --inbound` is run by the instructor on inbound/, where every student names
folders. nbgrader prints each folder's student, assignment and time as the name holds them: a
name with an escape sequence or a line break drove the instructor's terminal or forged a line
("alice ... (feedback ready to be fetched)"). The kit's list (GuardedExchangeList, set in
nbgrader_config.py) shows them as collect's table does: every control character as an escape."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("nbgrader")

ASSIGNMENT = "lec01_codesign"
FORGED = "bob\x1b]0;owned\x07\nalice"   # a title-setting escape, then a line of its own


def listed(tmp_path, name: str, caplog) -> list[str]:
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory

    from autograder.nbgrader_bridge.exchange import GuardedExchangeList

    root = tmp_path / "exchange"
    (root / "cs349e" / "inbound" / name).mkdir(parents=True)
    coursedir = CourseDirectory(root=str(tmp_path / "course"), course_id="cs349e")
    lister = GuardedExchangeList(coursedir=coursedir, authenticator=Authenticator(), root=str(root),
                                 inbound=True)
    with caplog.at_level(logging.INFO):
        lister.log = logging.getLogger("list-under-test")
        lister.start()
    return [record.getMessage() for record in caplog.records if record.name == "list-under-test"]


def test_an_inbound_name_with_controls_reaches_the_terminal_escaped(tmp_path, caplog):
    lines = listed(tmp_path, f"{FORGED}+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x1", caplog)
    # every line, the warning that quotes the folder's path (it holds no notebook) too
    assert not any(ord(c) < 32 or ord(c) == 127 for line in lines for c in line), lines
    listing = [line for line in lines if line.startswith("cs349e ")]
    assert len(listing) == 1 and listing[0].startswith("cs349e bob\\x1b]0;owned\\x07\\x0aalice "), lines


def test_an_honest_inbound_name_is_listed_as_nbgrader_lists_it(tmp_path, caplog):
    lines = listed(tmp_path, f"alice+{ASSIGNMENT}+2026-01-01 00:00:00.000000 UTC+x1", caplog)
    assert f"cs349e alice {ASSIGNMENT} 2026-01-01 00:00:00.000000 UTC (no feedback available)" in lines

