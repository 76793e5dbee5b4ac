"""bleach's Cleaner keeps its HTML parser's state while it cleans ("not thread-safe: create a
separate cleaner per thread", its docstring says). safe_html's clean_html, which every answer,
output and Markdown cell of a page goes through, cleaned with one Cleaner for the whole process:
two pages cleaned at once in two threads (a threaded exporter, or a server rendering in threads)
got each other's text, parts of one student's answer in another student's page."""

from __future__ import annotations

import sys
import threading

import pytest

pytest.importorskip("bleach")

ROUNDS = 60


@pytest.fixture
def threads_switch_often():
    """Threads switch every 10 µs rather than every 5 ms: two cleanings at once then overlap often."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def test_two_threads_cleaning_at_once_each_get_their_own_text(threads_switch_often):
    from autograder.nbgrader_bridge.safe_html import clean_html

    answers = {"alice": "<p>" + "alice's answer <b>bold</b> " * 200 + "</p>",
               "bob": "<table><tr><td>" + "bob's answer <i>x</i> <img src=x onerror=alert(1)> " * 200 + "</td></tr></table>"}
    alone = {student: clean_html(answer) for student, answer in answers.items()}
    wrong = {student: 0 for student in answers}

    def clean(student: str) -> None:
        for _ in range(ROUNDS):
            try:
                if clean_html(answers[student]) != alone[student]:
                    wrong[student] += 1
            except Exception:   # noqa: BLE001 - a parser whose state the other thread changed
                wrong[student] += 1

    threads = [threading.Thread(target=clean, args=(student,)) for student in answers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == {"alice": 0, "bob": 0}, f"cleanings (of {ROUNDS} each) that gave another text than alone: {wrong}"
