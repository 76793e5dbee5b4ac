"""`grade` on a student whose code prints and raises text with bidi overrides and zero-width marks:
the files an instructor opens in a terminal or a Markdown preview (feedback/*.md, results/*.json,
executed/*.json) hold none of them raw, as the console and the CSVs do not: a U+202E reorders the
rest of the line on a bidi-aware terminal or page, so a student could make the line read otherwise."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata

import pytest

from autograder.engine.registry import REPO_ROOT
from engine.corpus import ASSIGNMENT

HIDDEN = "\u202egnp.exe\u2066x\u2069\u200b\u200f\u2028end"
STUDENT = '''
def round_e4m3(x):
    print("printed:" + {hidden!r})
    raise ValueError("raised:" + {hidden!r})
'''.format(hidden=HIDDEN)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("invisible")
    (base / "subs" / "bob").mkdir(parents=True)
    (base / "subs" / "bob" / "codesign.py").write_text(STUDENT, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(base / "subs"),
                          "--out", str(base / "out")], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return base / "out"


def _invisible(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text
                   if c not in "\n\t" and unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp"}})


def test_feedback_markdown_shows_bidi_and_zero_width_marks_as_escapes(graded):
    feedback = (graded / "feedback" / "bob.md").read_text(encoding="utf-8")
    assert _invisible(feedback) == []
    assert "printed:\\u202egnp.exe" in feedback and "raised:\\u202egnp.exe" in feedback


@pytest.mark.parametrize("folder", ["results", "executed"])
def test_json_records_hold_them_only_as_json_escapes(graded, folder):
    for path in (graded / folder).glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert _invisible(text) == [], path
    record = json.loads((graded / "results" / "bob.json").read_text(encoding="utf-8"))
    assert "printed:\u202egnp.exe" in json.dumps(record["extra_data"]["submission"], ensure_ascii=False)


def test_gradescope_shows_them_as_escapes_too(graded):
    """Gradescope shows each test's output as preformatted text in the student's and the staff's
    browser, where a U+202E reorders the rest of its line as in a terminal."""
    record = json.loads((graded / "results" / "bob.json").read_text(encoding="utf-8"))
    shown = "\n".join(test["output"] for test in record["tests"]) + record["output"]
    assert _invisible(shown) == []
    assert "raised:\\u202egnp.exe" in shown
