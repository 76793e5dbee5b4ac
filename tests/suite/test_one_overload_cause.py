"""One overload cause: "the machine was too busy" is one value, TimeoutCause.LOAD, which the
sandbox sets on what it returns (a call's outcome, a notebook's outcome, why a deadline passed),
and one function, sandbox.outcomes.refuse_overload, turns it into the grader's error
(MachineOverloaded). No other module builds that error or compares a cause by its name."""

import ast

import pytest
from core.script_output import REPO

from autograder.sandbox import (CallOutcome, MachineOverloaded, NotebookOutcome, SandboxError, TimeoutCause,
                                refuse_overload)

OUTCOMES = REPO / "autograder" / "sandbox" / "outcomes.py"
CAUSE_NAMES = {cause.value for cause in TimeoutCause if cause.value}


def _sources():
    return [p for p in sorted((REPO / "autograder").rglob("*.py")) if p != OUTCOMES]


def _where(path, node) -> str:
    return f"{path.relative_to(REPO)}:{node.lineno}"


def test_the_overload_error_is_raised_in_one_place():
    raised = [_where(path, node) for path in _sources() for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None))
              == "MachineOverloaded"]
    assert raised == []


def test_no_cause_is_compared_by_its_name():
    compared = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                names = [s.value for s in sides if isinstance(s, ast.Constant)]
                names += [e.value for s in sides if isinstance(s, (ast.Tuple, ast.Set, ast.List))
                          for e in s.elts if isinstance(e, ast.Constant)]
                if any(name in CAUSE_NAMES for name in names) and "cause" in ast.unparse(node):
                    compared.append(_where(path, node))
    assert compared == []


def test_no_outcome_carries_a_second_overload_flag():
    assert "overloaded" not in {f for f in NotebookOutcome.__dataclass_fields__}
    assert "overloaded" not in {f for f in CallOutcome.__dataclass_fields__}


@pytest.mark.parametrize("cause", list(TimeoutCause))
def test_only_load_is_refused_and_the_outcomes_agree(cause):
    call = CallOutcome("timeout" if cause.value else "ok", exc_message="codesign.work stopped",
                       timeout_cause=cause)
    notebook = NotebookOutcome("timeout", {}, (), "", "stopped at 30 s", timeout_cause=cause)
    assert call.overloaded is notebook.overloaded is (cause is TimeoutCause.LOAD)
    if cause is TimeoutCause.LOAD:
        with pytest.raises(MachineOverloaded, match="^machine overloaded: codesign.work stopped; ") as raised:
            refuse_overload(call.timeout_cause, call.exc_message)
        assert isinstance(raised.value, SandboxError)
    else:
        refuse_overload(call.timeout_cause, "anything")


def test_causes_read_as_the_words_results_and_messages_always_used():
    assert {str(cause) for cause in TimeoutCause} == {"", "cpu", "blocked", "load", "deadline"}
    assert TimeoutCause.CPU == "cpu" and f"{TimeoutCause.LOAD}" == "load"
