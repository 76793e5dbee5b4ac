"""Run a hidden-test suite against a module *in this process* (trusted code only: the reference
and its mutants), judging every outcome exactly as the engine judges sandbox replies. Fast: no
sandbox, no notebook."""

from __future__ import annotations

import math
import types

from autograder.engine.cases import Call, Raises, Suite, TestRecord, Verdict
from autograder.engine.function_items import discount_raises, input_is_answer
from autograder.engine.invoke import Reply, judge
from autograder.engine.properties import examples_of
from autograder.lec01_codesign.chips import ChipArg
from autograder.sandbox import CallOutcome

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
    """(weighted fraction of the suite passed, labels of the failed tests), weighed as the engine
    weighs them (raise cases count only once a value test passes)."""
    records = []
    for case, by_input in zip(suite.cases, input_is_answer(suite)):
        verdict = judge(Reply(case.call, call_in_process(module, case.call)), case.expect,
                        reveal=case.reveal_expected)
        records.append(TestRecord(case.label, case.group, case.points_weight, verdict, isinstance(case.expect, Raises),
                                  by_input))
    for prop in suite.properties:
        verdicts = [judge(Reply(Call(prop.function, args), call_in_process(module, Call(prop.function, args))),
                          prop.expect(args)) for args in examples_of(prop)]
        failing = next((v for v in verdicts if not v.ok), None)
        records.append(TestRecord(prop.label, prop.group, prop.points_weight, failing or Verdict(True)))
    records = discount_raises(records)
    total = math.fsum(r.weight for r in records)
    passed = math.fsum(r.weight for r in records if r.verdict.ok)
    failed = [r.label for r in records if not r.verdict.ok]
    return (passed / total if not math.isclose(total, 0.0) else 0.0), failed
