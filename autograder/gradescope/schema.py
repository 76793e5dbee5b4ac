"""Checks a results.json against Gradescope's autograder specification before it is written.

Gradescope accepts malformed results silently or shows students an error, so the runner
validates first and fails closed. Required here (stricter than Gradescope, on purpose): score,
execution_time, output, visibility and a non-empty tests list; every test has name, number,
score, max_score, status ("passed"/"failed"), output and visibility; the total score is the sum
of the test scores; a test passes exactly when it has all its points.
"""

import math

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
STATUSES = ("passed", "failed")
OUTPUT_FORMATS = ("text", "html", "simple_format", "md", "ansi")

TOP_REQUIRED = {"score": "number", "execution_time": "number", "output": "str", "visibility": "visibility", "tests": "list"}
TOP_OPTIONAL = {
    "output_format": "format",
    "test_output_format": "format",
    "test_name_format": "format",
    "stdout_visibility": "visibility",
    "extra_data": "dict",
}
TEST_REQUIRED = {
    "name": "str",
    "number": "str",
    "score": "number",
    "max_score": "number",
    "status": "status",
    "output": "str",
    "visibility": "visibility",
}
TEST_OPTIONAL = {"output_format": "format", "name_format": "format", "tags": "list", "extra_data": "dict"}

# Points are sums of floats: compare totals with a small absolute tolerance.
SCORE_ATOL = 1e-9


def _type_problem(where: str, value, kind: str) -> str | None:
    if kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
        return None if ok else f"{where} must be a finite number >= 0, got {value!r}"
    if kind == "str":
        return None if isinstance(value, str) else f"{where} must be a string, got {type(value).__name__}"
    if kind == "list":
        return None if isinstance(value, list) else f"{where} must be a list, got {type(value).__name__}"
    if kind == "dict":
        return None if isinstance(value, dict) else f"{where} must be an object, got {type(value).__name__}"
    allowed = {"visibility": VISIBILITIES, "status": STATUSES, "format": OUTPUT_FORMATS}[kind]
    return None if value in allowed else f"{where} must be one of {list(allowed)}, got {value!r}"


def _fields_problems(where: str, obj, required: dict, optional: dict) -> list[str]:
    if not isinstance(obj, dict):
        return [f"{where} must be an object, got {type(obj).__name__}"]
    problems = [f"{where} is missing {key!r}" for key in required if key not in obj]
    problems += [f"{where} has unknown key {key!r}" for key in obj if key not in required and key not in optional]
    for key, kind in {**required, **optional}.items():
        if key in obj and (problem := _type_problem(f"{where}.{key}", obj[key], kind)):
            problems.append(problem)
    return problems


def _test_problems(index: int, test) -> list[str]:
    where = f"tests[{index}]"
    problems = _fields_problems(where, test, TEST_REQUIRED, TEST_OPTIONAL)
    if problems:
        return problems
    if test["score"] > test["max_score"] + SCORE_ATOL:
        problems.append(f"{where} ({test['name']}) scores {test['score']} of only {test['max_score']}")
    full = abs(test["score"] - test["max_score"]) <= SCORE_ATOL
    if (test["status"] == "passed") != full:
        problems.append(f"{where} ({test['name']}) has status {test['status']!r} with {test['score']} / {test['max_score']}")
    return problems


def results_problems(results) -> list[str]:
    """Everything wrong with `results` as a Gradescope results.json; empty when it is valid."""
    problems = _fields_problems("results", results, TOP_REQUIRED, TOP_OPTIONAL)
    if problems:
        return problems
    tests = results["tests"]
    if not tests:
        return ["results.tests is empty"]
    for index, test in enumerate(tests):
        problems += _test_problems(index, test)
    if problems:
        return problems
    for key in ("name", "number"):
        values = [test[key] for test in tests]
        if len(set(values)) != len(values):
            problems.append(f"test {key}s are not unique: {values}")
    total = sum(test["score"] for test in tests) - _late_penalty(results)
    if abs(results["score"] - total) > SCORE_ATOL:
        problems.append(f"results.score {results['score']} is not the sum of the test scores {total}"
                        " (less the late penalty)")
    return problems


def _late_penalty(results: dict) -> float:
    """The late policy's deduction recorded with the result (autograder.engine.lateness), or 0."""
    late = (results.get("extra_data") or {}).get("submission", {}).get("late") if isinstance(
        results.get("extra_data"), dict) else None
    penalty = late.get("penalty") if isinstance(late, dict) else 0
    return float(penalty) if isinstance(penalty, (int, float)) and 0 <= penalty < float("inf") else 0.0


def check_results(results) -> None:
    """Raise ValueError listing every problem if `results` is not a valid results.json."""
    problems = results_problems(results)
    if problems:
        raise ValueError("invalid Gradescope results.json:\n  " + "\n  ".join(problems))
