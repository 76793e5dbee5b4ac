"""Run a hidden-test suite against a module *in this process* (trusted code only: the reference
and its mutants), judging every outcome exactly as the engine judges sandbox replies. Fast: no
sandbox, no notebook."""

from __future__ import annotations

import math
import types

from autograder.engine.cases import Call, Suite
from autograder.engine.invoke import Reply, judge
from autograder.engine.properties import examples_of
from autograder.sandbox import CallOutcome, ChipArg

import hw_specs


def module_from_source(source: str, name: str = "candidate") -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def _plain(value):
    return hw_specs.Chip.from_dict(value.spec) if isinstance(value, ChipArg) else value


def call_in_process(module: types.ModuleType, call: Call) -> CallOutcome:
    function = getattr(module, call.function)
    try:
        value = function(*map(_plain, call.args), **{k: _plain(v) for k, v in call.kwargs.items()})
    except Exception as exc:  # noqa: BLE001 - mirror the worker: any exception is an outcome
        kind = type(exc)
        return CallOutcome("raised", exc_type=kind.__name__, exc_message=str(exc),
                           exc_mro=tuple(c.__name__ for c in kind.__mro__ if c is not object))
    return CallOutcome("ok", value=value)


def suite_score(module: types.ModuleType, suite: Suite) -> tuple[float, list[str]]:
    """(weighted fraction of the suite passed, labels of the failed tests)."""
    total = passed = 0.0
    failed = []
    for case in suite.cases:
        verdict = judge(Reply(case.call, call_in_process(module, case.call)), case.expect)
        total += case.points_weight
        passed += case.points_weight if verdict.ok else 0.0
        if not verdict.ok:
            failed.append(case.label)
    for prop in suite.properties:
        ok = all(judge(Reply(Call(prop.function, args), call_in_process(module, Call(prop.function, args))),
                       prop.expect(args)).ok for args in examples_of(prop))
        total += prop.points_weight
        passed += prop.points_weight if ok else 0.0
        if not ok:
            failed.append(prop.label)
    return (passed / total if not math.isclose(total, 0.0) else 0.0), failed
