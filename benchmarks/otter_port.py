"""The kit's checks of lec01_codesign, ported to Otter-Grader: the support module that
benchmarks/bench_vs_otter.py ships in the Otter autograder zip (next to the test files), so that
Otter's exception-based tests can judge a submission by the kit's rules.

Standalone on purpose: the Otter kernel has numpy and the assignment's trusted files (hw_specs.py,
cpu_timing.py, laid over the student's folder from the zip), never the kit's `autograder` or
`solutions`. Everything expected was computed by the kit's trusted process from `solutions` and
stored in two data files of the zip:

- `otter_port_cases.pkl`: per function item, its tests in the kit's order (each seeded case,
  each hypothesis property with all its fixed examples), each with the call's arguments, the
  expectation (a value and the check that compares with it, or an exception that must be
  raised) and its points (the item's points x its weight / the item's total weight);
- `otter_port_keys.json`: per student id, the answer key of each number and choice item of the
  report for that student's variant, and each item's tolerance and choices.

The comparison rules are the kit's (autograder/engine/checks.py, autograder/lec01_codesign/
boundary.py and formats.py, autograder/engine/report_items.py, answer_checks.py and
autograder/lec01_codesign/measurement.py), rewritten here line for line without their feedback
text; bench_vs_otter.py checks the measured items' formulas against the kit's before it builds
the zip. What Otter cannot do the kit's way is said where it happens.
"""

from __future__ import annotations

import copy
import importlib
import json
import math
import numbers
import os
import pickle
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CASES_FILE = "otter_port_cases.pkl"
KEYS_FILE = "otter_port_keys.json"
REBUILT = "__otter_port_rebuilt__"   # a dict {REBUILT: "module:Class.method", "data": ...}: an argument rebuilt here
STUDENT_ID_ENV = "CS349E_STUDENT_ID"   # who is graded: the kit hands the same variable to its sandbox
FORMAT = 1

_loaded: dict = {}
_value_tests: dict[str, list[bool]] = {}   # item -> verdicts of its value tests so far (this kernel)
_reference: dict = {}


# --- data -------------------------------------------------------------------------------------
def cases() -> dict:
    if "cases" not in _loaded:
        with open(HERE / CASES_FILE, "rb") as f:
            data = pickle.load(f)
        if data.get("format") != FORMAT:
            raise RuntimeError(f"{CASES_FILE}: format {data.get('format')!r}, expected {FORMAT}")
        _loaded["cases"] = data
    return _loaded["cases"]


def keys() -> dict:
    if "keys" not in _loaded:
        _loaded["keys"] = json.loads((HERE / KEYS_FILE).read_text(encoding="utf-8"))
    return _loaded["keys"]


# --- the kit's comparison rules (autograder/engine/checks.py) -------------------------------------
def is_real_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _all_numbers(seq) -> bool:
    for v in seq:
        if isinstance(v, (list, tuple)):
            if not _all_numbers(v):
                return False
        elif not is_real_number(v):
            return False
    return True


def as_real_array(value):
    if isinstance(value, np.ndarray):
        return value.astype(np.float64) if value.dtype.kind in "iuf" else None
    if is_real_number(value):
        return np.asarray(float(value))
    if isinstance(value, (list, tuple)):
        if not _all_numbers(value):
            return None
        try:
            return np.asarray(value, dtype=np.float64)
        except (ValueError, TypeError):
            return None
    return None


def within(actual, desired, rtol, atol):
    with np.errstate(invalid="ignore", over="ignore"):
        if rtol == 0 and atol == 0:
            return actual == desired
        return np.abs(actual - desired) <= atol + rtol * np.abs(desired)


def check_array(spec: dict, actual) -> str:
    """"" when `actual` passes ArrayCheck (the boundary rule's nudged alternatives included)."""
    desired = np.asarray(spec["desired"], dtype=np.float64)
    try:
        got = as_real_array(actual)
    except OverflowError:
        return "an integer beyond float64"
    if got is None:
        return f"wrong type: {type(actual).__name__}"
    if got.shape != desired.shape:
        return f"wrong shape: {got.shape}, expected {desired.shape}"
    ok = within(got, desired, spec["rtol"], spec["atol"])
    for alternative in spec["alternatives"]:
        ok |= within(got, np.asarray(alternative, dtype=np.float64), spec["rtol"], spec["atol"])
    if ok.all():
        return ""
    return f"{int((~ok).sum())} of {ok.size} elements differ"


def check_signed_array(spec: dict, actual) -> str:
    """SignedArrayCheck (autograder/lec01_codesign/formats.py): ArrayCheck, and a non-zero input
    that rounds to 0 keeps its sign."""
    problem = check_array(spec, actual)
    if problem or spec["inputs"] is None:
        return problem
    got = np.asarray(actual, dtype=np.float64)
    inputs = np.broadcast_to(np.asarray(spec["inputs"], dtype=np.float64), got.shape)
    wrong = (got == 0) & (inputs != 0) & (np.signbit(got) != np.signbit(inputs))
    return f"the sign of zero is wrong in {int(wrong.sum())} places" if wrong.any() else ""


def check_scalar(spec: dict, actual) -> str:
    if isinstance(actual, np.ndarray) and actual.ndim == 0 and actual.dtype.kind in "iuf":
        actual = actual.item()
    if not is_real_number(actual):
        return f"wrong type: {type(actual).__name__}"
    try:
        got = float(actual)
    except OverflowError:
        return "an integer beyond float64"
    desired, rtol, atol = spec["desired"], spec["rtol"], spec["atol"]
    if got == desired or abs(got - desired) <= atol + rtol * abs(desired):
        return ""
    return f"returned {got!r}, expected {desired!r}"


def check_mapping(spec: dict, actual) -> str:
    from collections.abc import Mapping

    if not isinstance(actual, Mapping):
        return f"wrong type: {type(actual).__name__}"
    desired = spec["desired"]
    if [k for k in desired if k not in actual] or [k for k in actual if k not in desired]:
        return f"wrong keys: {sorted(map(str, actual))}, expected {sorted(desired)}"
    problems = []
    for key, want in desired.items():
        got = actual[key]
        if want is None:
            if got is not None:
                problems.append(f"[{key!r}] should be None")
            continue
        problem = check_scalar({"desired": float(want), "rtol": spec["rtol"], "atol": spec["atol"]}, got)
        if problem:
            problems.append(f"[{key!r}] {problem}")
    return "; ".join(problems)


CHECKS = {"array": check_array, "signed_array": check_signed_array, "scalar": check_scalar,
          "mapping": check_mapping}


# --- calling the student's code ---------------------------------------------------------------
def _factory(name: str):
    module, _, qualname = name.partition(":")
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def rebuild(value):
    """The argument as the kit's sandbox hands it to the student: a fresh copy, with every value
    the kit rebuilds there (a chip) rebuilt here by the same factory from the trusted hw_specs."""
    if isinstance(value, dict) and REBUILT in value:
        return _factory(value[REBUILT])(rebuild(value["data"]))
    if isinstance(value, dict):
        return {k: rebuild(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(rebuild(v) for v in value)
    if isinstance(value, list):
        return [rebuild(v) for v in value]
    return copy.deepcopy(value)


def student_module():
    """The student's codesign module as the notebook left it (the kit imports it afresh in its
    sandbox, before the notebook runs; Otter's tests run in the notebook's kernel, after it)."""
    name = cases()["module"]
    return sys.modules.get(name) or importlib.import_module(name)


def judge(function: str, args: tuple, kwargs: dict, expect: dict) -> str:
    """"" when the call did what `expect` demands, else why not."""
    try:
        value = getattr(student_module(), function)(*rebuild(args), **rebuild(kwargs))
    except Exception as exc:   # noqa: BLE001 - the student's exception is the verdict's input
        if "raises" in expect:   # matched by class name along the MRO, as the kit does
            names = [kind.__name__ for kind in type(exc).__mro__]
            return "" if expect["raises"] in names else f"raised {type(exc).__name__}, expected {expect['raises']}"
        return f"raised {type(exc).__name__}: {str(exc)[:200]}"
    if "raises" in expect:
        return f"returned normally, expected {expect['raises']}"
    check = expect["returns"]
    return CHECKS[check["check"]](check, value)


def run_function_test(item: str, index: int) -> None:
    """Otter test case `index` of function item `item`: raises AssertionError when it fails.

    The kit's partial-credit rule holds: a "must raise" case counts only once some value test of
    the item passed (autograder/engine/function_items.discount_raises); the test files list those
    cases last, so every value test of the item has run when they run."""
    test = cases()["items"][item]["tests"][index]
    if test["kind"] == "property":   # one verdict over every fixed example, as in the kit
        problems = [(i, p) for i, (args, expect) in enumerate(test["examples"])
                    if (p := judge(test["function"], args, {}, expect))]
        problem = f"{len(problems)} of {len(test['examples'])} examples fail; first: #{problems[0][0]}: {problems[0][1]}" \
            if problems else ""
    else:
        problem = judge(test["function"], test["args"], test["kwargs"], test["expect"])
    if test["kind"] == "raises":
        values = _value_tests.get(item, [])
        if not problem and values and not any(values):
            problem = "no value test of this item passed, so its must-raise cases do not count"
    else:
        _value_tests.setdefault(item, []).append(not problem)
    assert not problem, problem


# --- the report (autograder/engine/report_items.py, answer_checks.py, lec01_codesign/measurement.py)
_ABSENT = object()


def _reference_figures() -> dict:
    """The grading machine's measurement (cpu_timing.reference_measurements, the trusted copy),
    once per kernel: the kit takes it once per grader process in a sandbox of its own before any
    student code runs; Otter has only the student's kernel, after the notebook."""
    if not _reference:
        import cpu_timing

        values = cpu_timing.reference_measurements()
        _reference.update({item: figure(values, cpu_timing) for item, figure in REFERENCE.items()})
        _reference["factor"] = cpu_timing.AGREEMENT_FACTOR
    return _reference


def triad_gb_per_s(reference, ct) -> float:
    return ct.TRIAD_BYTES_PER_ELEMENT * ct.TRIAD_N / reference["triad_seconds"] / 1e9


def gemm_peak_gflops(reference, ct) -> float:
    return max(2 * m**3 / reference[f"gemm_seconds_{m}"] / 1e9 for m in ct.GEMM_SIZES)


def exp_ns_per_value(reference, ct) -> float:
    return reference["exp_seconds"] / ct.EXP_N * 1e9


EXP, GEMM, TRIAD = "q28_exp_ns_per_value", "q29_matmul_gflops", "q28a_triad_gb_per_s"
REFERENCE = {TRIAD: triad_gb_per_s, GEMM: gemm_peak_gflops, EXP: exp_ns_per_value}


def derived(constants: dict) -> dict:
    """item -> (needs, compute): the kit's DerivedKeys of the measured roofline."""
    def exp_share_percent(d: int):
        return lambda exp_ns, matmul_gflops: 100 * exp_ns / (exp_ns + constants[f"flops_per_exp_{d}"] / matmul_gflops)

    return {
        "q29b_cpu_ridge": ((GEMM, TRIAD), lambda gflops, gbs: gflops / gbs),
        "q28p_exp_if_memory_bound": ((TRIAD,), lambda gbs: constants["exp_bytes_per_value"] / (gbs * constants["triad_calibration"])),
        "q28g_exp_vs_memory": ((EXP, "q28p_exp_if_memory_bound"), lambda ns, predicted: ns / predicted),
        "q28f_fmas_per_exp": ((EXP, GEMM), lambda ns, gflops: ns * gflops / 2),
        "q30_exp_share_64": ((EXP, GEMM), exp_share_percent(64)),
        "q31_exp_share_128": ((EXP, GEMM), exp_share_percent(128)),
        "q32_vs_b300": ((EXP, GEMM), lambda ns, gflops: 100 * ns / (constants["flops_per_exp_128"] / gflops)
                        / constants["b300_percent"]),
    }


def grounds(item: str, table: dict, seen: frozenset = frozenset()) -> set:
    """The measured items a derived item rests on, directly or through other derived items."""
    if item in REFERENCE:
        return {item}
    if item not in table or item in seen:
        return set()
    found = set()
    for need in table[item][0]:
        found |= grounds(need, table, seen | {item})
    return found


def _in_window(value, item: str, reference: dict) -> bool:
    low, high = reference[item] / reference["factor"], reference[item] * reference["factor"]
    return is_real_number(value) and low <= float(value) <= high


def _derived_key(item: str, env: dict, table: dict) -> float | None:
    """DerivedKey.key_from (grounded on the reference where the kit grounds it), or None."""
    needs, compute = table[item]
    for ground in sorted(grounds(item, table)):
        if not _in_window(env.get(ground, _ABSENT), ground, _reference_figures()):
            return None
    values = []
    for need in needs:
        value = env.get(need, _ABSENT)
        if not is_real_number(value) or not math.isfinite(float(value)):
            return None
        values.append(float(value))
    try:
        key = float(compute(*values))
    except (ArithmeticError, ValueError):
        return None
    return key if math.isfinite(key) else None


def check_answer(item: str, env: dict) -> None:
    """Otter's test of one number or choice item: the student's variable in the notebook's
    globals against the key of the student's own variant (the student id from the kernel's
    environment), raising AssertionError when it is wrong."""
    data = keys()
    spec = data["items"][item]
    sid = os.environ.get(STUDENT_ID_ENV, "").strip()
    assert sid in data["students"], f"no answer key for student {sid!r} (set {STUDENT_ID_ENV})"
    value = env.get(item, _ABSENT)
    key = data["students"][sid].get(item)
    table = derived(data["constants"])
    if item in table:
        key = _derived_key(item, env, table)
        assert key is not None, f"{item} does not follow from this run's measured values"
    assert value is not _ABSENT, f"{item} is not defined"
    assert value is not None and value is not Ellipsis, f"{item} is not answered"
    if spec["kind"] == "choice":
        assert isinstance(value, str), f"{item} should be a letter, got {type(value).__name__}"
        answer = value.strip().upper()
        assert answer in spec["choices"], f"{item} = {value!r} is not one of {spec['choices']}"
        assert answer == key.strip().upper(), f"{item}: wrong choice"
        return
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    assert is_real_number(value), f"{item} should be a number, got {type(value).__name__}"
    try:
        answer = float(value)
    except OverflowError:
        raise AssertionError(f"{item} is not a finite float") from None
    assert math.isfinite(answer), f"{item} is not finite"
    if item in REFERENCE:
        assert _in_window(answer, item, _reference_figures()), f"{item} disagrees with the reference measurement"
        return
    assert abs(answer - key) <= spec["atol"] + spec["rtol"] * abs(key), f"{item}: wrong ({answer:.6g})"
