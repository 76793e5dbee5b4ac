"""Who the end-to-end lab's measurement items (q34a–q35) penalise. Their keys come from the reference
pipeline (solutions/lec01_codesign/answers.py: one model, one set of sentences, the reference
`quantize`), and a student's notebook measures with the student's own `quantize`. A rounding bug
the function items already catch must not cost these items a second time: with it, the student's
own pipeline must still land within each item's tolerance. Each case here is a corpus-style
single-bug submission (tests/mutants.py) whose lab figures are computed as its notebook computes them.

The one exception, stated in q35's note and asserted here so that it cannot grow unnoticed: the
lecture's own to_e2m1 (ties to the smaller value) flips 3 of per-tensor FP4's 28 pair orderings
(float16 weights divided by amax / 6 land on E2M1 midpoints), and q35's tolerance is one ordering.
"""

import inspect
import math
import types

import pytest

from autograder.engine import key_cache
from autograder.engine.registry import load_config
from mutants import CODE_MUTATIONS_BY_NAME, apply_code_mutation
from solutions.lec01_codesign import answers, codesign, handout_data

RTOL = {item.id: item.rtol for item in load_config("lec01_codesign").items}
LAB_ITEMS = ("q34a_fp8_end_deficit", "q34p_nvfp4_end_prediction", "q34b_nvfp4_end_deficit", "q35_fp4_rank_agreement",
             "q35p_fp4_end_prediction", "q34r_h16_end_prediction", "q35g_fp4_end_over_fp8", "q34h_h16_end_over_fp8")
# bug -> the lab items it costs on top of the function items that catch it
COSTS = {
    "e2m1_no_saturation": (),
    "e4m3_ties_away": (),
    "e2m1_positive_zero": (),
    "e2m1_ties_to_smaller": ("q35_fp4_rank_agreement",),
}


def _lab_figures_with(mutation, monkeypatch):
    """The lab's figures as a notebook computes them with the mutated codesign.py's quantize."""
    module = types.ModuleType("codesign_with_one_bug")
    module.__file__ = codesign.__file__
    source = apply_code_mutation(inspect.getsource(codesign), CODE_MUTATIONS_BY_NAME[mutation])
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    monkeypatch.setattr(handout_data, "quantize", module.quantize)  # quantize_matrix calls the student's quantize
    # the course's key store holds the reference's forward: this one is the student's, computed here
    monkeypatch.setattr(key_cache, "ENABLED", False)
    answers.end_to_end.cache_clear()
    try:
        return answers.end_to_end_keys()
    finally:
        answers.end_to_end.cache_clear()


@pytest.fixture(scope="module")
def reference_keys():
    return answers.end_to_end_keys()


@pytest.mark.slow  # the lab's four formats per bug: ≈ 2 s of CPU each
@pytest.mark.parametrize("mutation", sorted(COSTS))
def test_a_rounding_bug_costs_the_lab_only_what_is_stated(mutation, reference_keys, monkeypatch):
    got = _lab_figures_with(mutation, monkeypatch)
    lost = tuple(item for item in LAB_ITEMS
                 if not math.isclose(got[item], reference_keys[item], rel_tol=RTOL[item]))
    assert lost == COSTS[mutation], {item: (got[item], reference_keys[item]) for item in LAB_ITEMS}


def test_the_bugs_are_caught_by_the_function_items():
    """Each bug above changes what the graded functions return (its witness): it is penalised there."""
    import numpy as np

    from hw_specs import H100  # noqa: F401 - the witnesses may name chips

    for mutation in COSTS:
        bug = CODE_MUTATIONS_BY_NAME[mutation]
        module = types.ModuleType("codesign_with_one_bug")
        exec(compile(apply_code_mutation(inspect.getsource(codesign), bug), codesign.__file__, "exec"), module.__dict__)
        scope = {"np": np, **vars(module)}
        mutated = eval(bug.witness, scope)
        reference = eval(bug.witness, {"np": np, **vars(codesign)})
        assert not np.array_equal(np.asarray(mutated), np.asarray(reference)) or \
            np.signbit(mutated).tolist() != np.signbit(reference).tolist(), mutation
