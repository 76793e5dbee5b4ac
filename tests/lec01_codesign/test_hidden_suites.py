"""Do the hidden tests of lec01 accept the reference, and catch each known bug?"""

from pathlib import Path

import pytest

import solutions.lec01_codesign.codesign as reference_module
from autograder.engine.assignment import load_assignment
from autograder.engine.cases import Group, Raises
from lec01_codesign.inprocess import module_from_source, suite_score
from mutants import CODE_MUTATIONS, apply_code_mutation

REFERENCE_SOURCE = Path(reference_module.__file__).read_text("utf-8")
CORPUS = Path(__file__).parents[1] / "corpus" / "lec01_codesign"
# Mutants that behave exactly like the reference on every input, so no test can tell them apart.
def function_suites():
    """The suites as grading sees them: every property with its fixed examples."""
    return load_assignment("lec01_codesign").suites


EQUIVALENT = {"quantize_accepts_nan": "NaN still reaches round_e4m3 / to_e2m1, which raise the ValueError"}


def test_every_function_item_has_a_suite():
    """Does grading.toml's every function item have hidden tests, and nothing more?"""
    config = load_assignment("lec01_codesign").config
    assert set(function_suites()) == {item.id for item in config.items_of("function")}


@pytest.mark.parametrize("function", sorted(function_suites()))
def test_reference_passes_its_own_hidden_tests(function):
    """Would the reference get full marks on every case and property (judged like sandbox replies)?"""
    fraction, failed = suite_score(reference_module, function_suites()[function])
    assert failed == [] and fraction == 1.0


@pytest.mark.parametrize("mutation", CODE_MUTATIONS, ids=lambda m: m.name)
def test_each_known_bug_loses_points_in_its_item(mutation):
    """Does each catalogued student bug cost points in the item of the function it lands in?"""
    if mutation.name in EQUIVALENT:
        pytest.skip(f"equivalent mutant: {EQUIVALENT[mutation.name]}")
    mutant = module_from_source(apply_code_mutation(REFERENCE_SOURCE, mutation), mutation.name)
    fraction, failed = suite_score(mutant, function_suites()[mutation.function])
    assert fraction < 1.0, f"{mutation.name} passed every hidden test of {mutation.function}"


@pytest.mark.parametrize("case", ["different_algebra", "float32"])
def test_valid_alternative_implementations_pass(case):
    """Do float32 results and different-but-valid float algebra get full marks (boundary rule)?"""
    module = module_from_source((CORPUS / case / "codesign.py").read_text("utf-8"), case)
    for function, suite in function_suites().items():
        fraction, failed = suite_score(module, suite)
        assert failed == [], f"{case}.{function} failed {failed}"


def test_every_suite_tests_bad_input_and_has_a_property():
    """Does every function face bad input (ValueError / MissingFigureError) and a hypothesis property?"""
    for function, suite in function_suites().items():
        assert any(isinstance(c.expect, Raises) for c in suite.cases), function
        assert suite.properties, function
        assert all(isinstance(c.group, Group) for c in suite.cases)


def test_every_property_has_enough_fixed_examples():
    """Does every property decide on a fair number of fixed examples (duplicates dropped)?"""
    for suite in function_suites().values():
        for prop in suite.properties:
            assert len(prop.examples) >= min(10, prop.max_examples // 3), prop.label


def test_roofline_cases_include_synthetic_chips_and_missing_figures():
    """Would a hard-coded chip table fail, and must MissingFigureError propagate for Rubin FP8?"""
    for function in ("exp_ratio", "ridge_point", "trend_row"):
        labels = [c.label for c in function_suites()[function].cases]
        assert any("合成芯片" in label for label in labels), function
        missing = [c for c in function_suites()[function].cases
                   if isinstance(c.expect, Raises) and c.expect.exc_type == "MissingFigureError"]
        assert any("Rubin" in c.label and "fp8" in c.label for c in missing), function


def test_quantize_cases_cover_zero_tensors_zero_blocks_and_ties():
    labels = " ".join(c.label for c in function_suites()["quantize"].cases)
    for scheme in ("fp8_tensor", "fp4_tensor", "mxfp4", "nvfp4"):
        assert f"{scheme}：全零张量" in labels
    assert "全零" in labels and "平局" in labels and "舍入成 0" in labels


RAISE_ALWAYS = '''
class MissingFigureError(LookupError):
    pass


def _refuse(*args, **kwargs):
    """Raises what a bad-input case wants, for every input: MissingFigureError where a figure is
    unpublished, ValueError everywhere else."""
    chips = [a for a in (*args, *kwargs.values()) if hasattr(a, "has")]
    precision = next((a for a in args if isinstance(a, str)), None)
    if any(not c.has("exp_per_s") or (precision and not c.has(precision)) for c in chips):
        raise MissingFigureError("unpublished")
    raise ValueError("bad input")


round_e4m3 = to_e2m1 = quantize = flops_per_exp = exp_ratio = ridge_point = trend_row = _refuse
'''


@pytest.mark.parametrize("function", sorted(function_suites()))
def test_a_stub_that_always_raises_earns_nothing(function):
    """Bad-input cases pay only once some value test passes: refusing every input is worth 0."""
    stub = module_from_source(RAISE_ALWAYS, "refuse_everything")
    fraction, _ = suite_score(stub, function_suites()[function])
    assert fraction == 0
