"""Is every seeded mutation of the benchmarks a real bug in today's reference submission?"""

import importlib.util
import itertools
import sys

import numpy as np
import pytest

import hw_specs
import mutants
from autograder.build import write_reference_submission

ASSIGNMENT = "lec01_codesign"


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    dest = tmp_path_factory.mktemp("reference")
    write_reference_submission(ASSIGNMENT, dest)
    return dest


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def outcome(module, expression):
    """The value of `expression` with the module's functions in scope, or the exception type."""
    scope = {"np": np, **hw_specs.CHIPS, **{name: getattr(module, name) for name in dir(module)}}
    try:
        return eval(expression, scope)  # noqa: S307  (our own test expressions)
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def same(a, b) -> bool:
    """Equal results: the same exception name, equal dicts, or equal numbers / arrays (signs of zero included)."""
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    a, b = np.asarray(a), np.asarray(b)
    if not np.array_equal(a, b, equal_nan=True):
        return False
    return a.dtype.kind not in "fc" or bool(np.array_equal(np.signbit(a), np.signbit(b)))


@pytest.mark.parametrize("mutation", mutants.CODE_MUTATIONS, ids=lambda m: m.name)
def test_mutation_applies_once_and_changes_its_witness(mutation, reference, tmp_path):
    mutants.mutate_submission(reference, tmp_path / "mutant", (mutation.name,))
    original = load(reference / "codesign.py", f"ref_{mutation.name}")
    mutated = load(tmp_path / "mutant" / "codesign.py", f"mut_{mutation.name}")
    assert mutation.witness.startswith(mutation.function)
    assert not same(outcome(original, mutation.witness), outcome(mutated, mutation.witness))


def test_an_unknown_mutation_is_refused(reference, tmp_path):
    with pytest.raises(ValueError, match="unknown mutation"):
        mutants.mutate_submission(reference, tmp_path / "x", ("no_such_bug",))


def test_a_class_is_seeded(reference, tmp_path):
    key = {"q01": 7.6, "q04": "D"}
    first = mutants.mutant_class(reference, tmp_path / "a", 6, seed=3, answer_key=key)
    second = mutants.mutant_class(reference, tmp_path / "b", 6, seed=3, answer_key=key)
    assert first == second and first["s000"] == ()
    assert all(any(not m.startswith(mutants.ANSWER_PREFIX) for m in muts) for s, muts in first.items() if s != "s000")


def test_every_drawn_set_of_mutations_applies_to_the_reference(reference):
    # simulate_course.py --students 300 with its default seed drew e2m1_no_saturation together
    # with e2m1_positive_zero (both edit `return np.copysign(q, y)`) and crashed.
    import random

    source = (reference / "codesign.py").read_text(encoding="utf-8")
    rng = random.Random(0)
    for _ in range(3000):
        drawn = mutants.draw_mutations(rng, ("q01", "q04"))
        code = [mutants.CODE_MUTATIONS_BY_NAME[n] for n in drawn if not n.startswith(mutants.ANSWER_PREFIX)]
        text = source
        for mutation in code:
            text = mutants.apply_code_mutation(text, mutation)


def test_mutations_that_are_not_in_conflict_apply_together(reference):
    source = (reference / "codesign.py").read_text(encoding="utf-8")
    for a, b in itertools.combinations(sorted(mutants.CODE_MUTATIONS, key=lambda m: m.name), 2):
        if not mutants.in_conflict(a, b):
            mutants.apply_code_mutation(mutants.apply_code_mutation(source, a), b)
