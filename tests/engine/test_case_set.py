"""One hidden case set: property examples are data (property_examples.json), the same in every
process whatever it did before; a property's verdict is decided on them alone; the case set's
digest names exactly what a result was graded against."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import hypothesis
import numpy as np
import pytest

from autograder.engine import properties, property_draw, property_examples
from autograder.engine.assignment import hidden_suites, load_assignment
from autograder.engine.case_digest import case_set_digest
from autograder.engine.cases import Call, Property, Returns, Suite
from autograder.engine.checks import ArrayCheck
from autograder.engine.invoke import Reply
from autograder.engine.registry import REPO_ROOT, ConfigError
from autograder.lec01_codesign.chips import ChipArg
from autograder.sandbox import CallOutcome
from course_copy import clean_env, copy_course

ASSIGNMENT = "lec01_codesign"

# What a process that graded in the old way would have done before drawing: the modules of
# `reconcile` / `pregrade` / the Gradescope runner imported, and another property run.
PRIOR_WORK = """
import autograder.commands.reconcile, autograder.commands.pregrade
import autograder.nbgrader_bridge.reconcile, autograder.nbgrader_bridge.pinned
import autograder.gradescope.runtime
from hypothesis import given, settings, strategies as st
@settings(max_examples=30, database=None)
@given(st.floats(-1e6, 1e6))
def unrelated(x):
    pass
unrelated()
"""
REPORT = """
import hashlib, json
from autograder.engine.assignment import load_assignment
from autograder.engine.properties import example_key
a = load_assignment("lec01_codesign")
print(json.dumps({"case_set": a.case_set, "examples": {
    f: hashlib.sha256(b"".join(example_key(e) for p in s.properties for e in p.examples)).hexdigest()
    for f, s in a.suites.items()}}))
"""


def _in_fresh_process(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_examples_do_not_depend_on_what_the_process_did_before():
    """Issue 9 item 2: in the reconcile process the quantize property drew other examples. The
    case set (and every property's examples) is now the same after any prior work."""
    plain = _in_fresh_process(REPORT)
    after_work = _in_fresh_process(PRIOR_WORK + REPORT)
    assert after_work == plain
    assert plain["case_set"] == load_assignment(ASSIGNMENT).case_set


def test_a_fresh_draw_reproduces_the_committed_file():
    """The build's draw is a pure function of the sources and the seed (with the hypothesis
    version that drew the file; another version may draw differently, and the file still holds)."""
    path = property_examples.examples_file(ASSIGNMENT)
    committed = path.read_text("utf-8")
    if json.loads(committed)["hypothesis"] != hypothesis.__version__:
        pytest.skip(f"the file was drawn with hypothesis {json.loads(committed)['hypothesis']}, "
                    f"{hypothesis.__version__} is installed")
    assert property_draw.generate_in_fresh_process(ASSIGNMENT) == committed


def test_the_committed_file_is_current():
    assert property_draw.write(ASSIGNMENT, check=True) == []


def test_a_stale_file_is_refused_with_the_command_that_fixes_it(monkeypatch):
    monkeypatch.setattr(property_examples, "sources_digest", lambda name: "0" * 64)
    props = [p for s in hidden_suites(ASSIGNMENT).values() for p in s.properties]
    with pytest.raises(ConfigError, match=r"stale.*python -m autograder build lec01_codesign"):
        property_examples.load(ASSIGNMENT, props)


def test_a_property_missing_from_the_file_is_refused():
    prop = next(p for s in hidden_suites(ASSIGNMENT).values() for p in s.properties)
    renamed = Property("一个新的性质", prop.function, prop.strategy, prop.expect)
    with pytest.raises(ConfigError, match="no examples for the .* property '一个新的性质'"):
        property_examples.load(ASSIGNMENT, [renamed])


def test_every_graded_property_carries_its_fixed_examples():
    for suite in load_assignment(ASSIGNMENT).suites.values():
        for prop in suite.properties:
            assert prop.examples and properties.examples_of(prop) is prop.examples
    bare = next(p for s in hidden_suites(ASSIGNMENT).values() for p in s.properties)
    with pytest.raises(ValueError, match="no fixed examples"):
        properties.examples_of(bare)


@pytest.mark.parametrize("value", [
    (np.array([-0.0, 5e-324, 1.7976931348623157e308, 0.1]),),
    (np.arange(6, dtype=np.int64).reshape(2, 3), "mxfp4"),
    (2**80, -3, 0.5, True, None),
    (ChipArg({"name": "Gen", "flops": {"fp8": {"value": 1e15, "source": "s"}}}), "fp8", 64, 128),
    (np.float64(-0.0), np.int32(7)),
])
def test_examples_round_trip_exactly(value):
    back = property_examples.decode(json.loads(json.dumps(property_examples.encode(value))))
    assert properties.example_key(back) == properties.example_key(value)
    assert [type(v) for v in back] == [type(v) for v in value]


def test_the_digest_changes_with_any_case_or_example():
    suites = load_assignment(ASSIGNMENT).suites
    digest = case_set_digest(suites)
    assert digest.startswith("sha256:") and digest == case_set_digest(dict(suites))
    suite = suites["to_e2m1"]
    prop = suite.properties[0]
    first = prop.examples[0][0]
    nudged = (np.nextafter(first, np.inf),) + prop.examples[0][1:]
    changed = {**suites, "to_e2m1": Suite(suite.function, suite.summary, suite.cases,
                                          (Property(prop.label, prop.function, prop.strategy, prop.expect,
                                                    prop.max_examples, examples=(nudged, *prop.examples[1:])),))}
    assert case_set_digest(changed) != digest
    fewer = {**suites, "to_e2m1": Suite(suite.function, suite.summary, suite.cases[1:], suite.properties)}
    assert case_set_digest(fewer) != digest


class ScriptedCode:
    """Stands for StudentCode: answers with `function`, counts the calls it gets."""

    def __init__(self, function):
        self.function, self.calls = function, 0

    def call_many(self, calls, expects=None):
        self.calls += len(calls)
        return [Reply(c, CallOutcome("ok", value=self.function(*c.args))) for c in calls]

    def stream(self, calls, expects=None):
        return iter(self.call_many(calls, expects))

    def call(self, call, expect=None):
        return self.call_many([call])[0]


def _identity_property(examples) -> Property:
    from hypothesis import strategies as st

    return Property("恒等", "f", st.tuples(st.floats(0, 1).map(lambda v: np.array([v]))),
                    lambda args: Returns(ArrayCheck(args[0])), max_examples=10, examples=tuple(examples))


def test_the_verdict_is_decided_on_the_fixed_examples_alone(monkeypatch):
    """A bug no fixed example hits passes, whatever shrinking could find; a bug one fixed example
    hits fails even when shrinking finds nothing, and the message shows that example."""
    examples = [(np.array([v]),) for v in (0.25, 0.5, 0.75)]
    wrong_at_09 = ScriptedCode(lambda x: np.where(x == 0.9, 0.0, x))
    assert properties.run_property(_identity_property(examples), wrong_at_09).passed
    assert wrong_at_09.calls == len(examples)

    monkeypatch.setattr(properties, "run_hypothesis", lambda *args, **kwargs: None)  # shrinking finds nothing
    wrong_at_05 = ScriptedCode(lambda x: np.where(x == 0.5, 0.0, x))
    result = properties.run_property(_identity_property(examples), wrong_at_05)
    assert not result.passed and "np.array([0.5])" in result.message
    assert "自动缩小" not in result.message  # nothing was shrunk: the feedback does not claim it


def test_shrinking_makes_a_bounded_number_of_calls():
    examples = [(np.array([v]),) for v in (0.25, 0.5, 0.75)]
    always_wrong_but_first = ScriptedCode(lambda x: x + 1 if x[0] != 0.25 else x)
    result = properties.run_property(_identity_property(examples), always_wrong_but_first)
    assert not result.passed
    assert always_wrong_but_first.calls <= len(examples) + properties.SHRINK_CALLS


def test_no_private_hypothesis_attribute_is_used():
    sources = [REPO_ROOT / "autograder" / "engine" / f
               for f in ("properties.py", "property_examples.py", "property_run.py", "property_draw.py")]
    assert not any("_hypothesis_internal" in p.read_text("utf-8") for p in sources)


def test_results_record_the_case_set(tmp_path):
    from autograder.engine.feedback import submission_markdown
    from autograder.engine.grader import grade_submission

    result = grade_submission(ASSIGNMENT, tmp_path)  # nothing submitted: still graded against the set
    digest = load_assignment(ASSIGNMENT).case_set
    assert result.case_set == digest
    assert result.to_dict()["case_set"] == digest
    assert digest.removeprefix("sha256:")[:12] in submission_markdown(result)




def test_a_new_case_set_makes_earlier_results_stale(tmp_path, monkeypatch):
    """The config digest (part of every fingerprint) covers the hidden tests, their fixed examples
    and the reference: a re-run regrades instead of keeping scores from another case set."""
    from autograder.engine import registry

    for rel in (f"autograder/{ASSIGNMENT}", f"solutions/{ASSIGNMENT}", "hw_specs.py", f"assignments/{ASSIGNMENT}"):
        source, copy = REPO_ROOT / rel, tmp_path / rel
        if source.is_dir():
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, copy)
    monkeypatch.setattr(registry, "REPO_ROOT", tmp_path)
    before = registry.load_config(ASSIGNMENT, assignments_dir=tmp_path / "assignments").digest
    examples = tmp_path / "autograder" / ASSIGNMENT / property_examples.FILE_NAME
    examples.write_text(examples.read_text("utf-8").replace("0.0", "-0.0", 1), "utf-8")
    assert registry.load_config(ASSIGNMENT, assignments_dir=tmp_path / "assignments").digest != before


def test_a_literal_added_anywhere_in_the_kit_does_not_change_the_draw(tmp_path):
    """hypothesis mixes the literals of imported local modules into its draws; the build's draw
    ignores them, so a number added to an unrelated line of the kit leaves the examples as they are."""
    course = copy_course(tmp_path / "course")
    with open(course / "autograder" / "engine" / "cases.py", "a", encoding="utf-8") as f:
        f.write("\n_UNRELATED = (123456.789, 7.25, 448.5, -3.75, 99991, 'e4m3')\n")
    env = {**clean_env(), "PYTHONPATH": str(course), "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-m", "autograder.engine.property_draw", ASSIGNMENT], cwd=course,
                          env=env, capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stderr
    committed = property_examples.examples_file(ASSIGNMENT).read_text("utf-8")
    assert json.loads(done.stdout)["properties"] == json.loads(committed)["properties"]
