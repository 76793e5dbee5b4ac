"""The notebook's check() under `nbgrader autograde`: it relays the trusted grader's score and never
fails open (nbgrader gives full marks to a grade cell that shows nothing)."""

import importlib
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE_GRADER = '''
import json, sys
from pathlib import Path
here = Path(__file__).resolve().parent.parent
with open(here / "calls.log", "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
reply = here / "reply.json"
if not reply.is_file():
    print("Traceback (most recent call last):\\nnbgrader-scores: no such submission", file=sys.stderr)
    sys.exit(2)
print(reply.read_text())
'''


@pytest.fixture
def grader(tmp_path, monkeypatch):
    """A stand-in for `python -m autograder` in CS349E_GRADER_ROOT, logging its calls."""
    root = tmp_path / "course"
    (root / "autograder").mkdir(parents=True)
    (root / "autograder" / "__init__.py").write_text("")
    (root / "autograder" / "__main__.py").write_text(FAKE_GRADER)
    monkeypatch.setenv("CS349E_GRADER_ROOT", str(root))
    monkeypatch.setenv("CS349E_GRADER_PYTHON", sys.executable)
    return root


@pytest.fixture
def check(tmp_path, monkeypatch):
    folder = tmp_path / "autograded" / "ann" / "lec01_codesign"
    shutil.copytree(ROOT / "assignments" / "lec01_codesign", folder, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(sys, "path", [str(folder), *sys.path])
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    for name in ("selfcheck", "public_checks"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield importlib.import_module("selfcheck").check
    for name in ("selfcheck", "public_checks"):
        sys.modules.pop(name, None)


def reply(root, **items):
    (root / "reply.json").write_text(json.dumps({"student": "ann", "items": {
        item: {"score": score, "max_score": 10.0, "status": "partial", "feedback": f"{item} 的反馈"}
        for item, score in items.items()}}, ensure_ascii=False))


def calls(root):
    return (root / "calls.log").read_text().splitlines()


def test_the_score_is_a_builtin_float_and_the_feedback_is_printed(grader, check, capsys):
    reply(grader, round_e4m3=7.5)
    score = check("round_e4m3")
    assert type(score) is float and score == 7.5
    assert "round_e4m3 的反馈" in capsys.readouterr().out
    [call] = calls(grader)
    assert call.startswith("nbgrader-scores lec01_codesign --autograded ")
    assert call.endswith(str(Path("autograded") / "ann" / "lec01_codesign"))


def test_the_grader_runs_once_per_kernel(grader, check):
    reply(grader, round_e4m3=10.0, to_e2m1=0.0)
    assert [check("round_e4m3"), check("to_e2m1"), check("round_e4m3")] == [10.0, 0.0, 10.0]
    assert len(calls(grader)) == 1


def test_a_score_is_clamped_to_the_items_points(grader, check):
    """nbgrader fails the whole submission when a cell shows more than its points."""
    reply(grader, round_e4m3=10.000000001, to_e2m1=-0.5)
    assert check("round_e4m3") == 10.0 and check("to_e2m1") == 0.0


def test_a_grader_failure_raises_once_and_then_at_once(grader, check):
    with pytest.raises(RuntimeError, match="nbgrader-scores: no such submission") as raised:
        check("round_e4m3")
    assert "Traceback" not in str(raised.value)
    reply(grader, round_e4m3=10.0)  # too late: this kernel does not ask again
    with pytest.raises(RuntimeError):
        check("to_e2m1")
    assert len(calls(grader)) == 1


def test_an_item_the_grader_does_not_know_raises(grader, check):
    reply(grader, round_e4m3=10.0)
    with pytest.raises(RuntimeError, match="quantize"):
        check("quantize")


def test_without_the_course_config_it_raises(check, monkeypatch):
    monkeypatch.delenv("CS349E_GRADER_ROOT", raising=False)
    with pytest.raises(RuntimeError, match="CS349E_GRADER_ROOT"):
        check("round_e4m3")
