"""`new --variants` and `check` on per-student variants, as an author uses them in a copy of the
course: the scaffold passes check with its variants sampled; a variant function whose choice of
parameters never changes a DEPENDENT item's key, or pushes a key out of its plausible range, fails."""

from __future__ import annotations

import re

import pytest

from autograder.sandbox import bubblewrap_problem
from course_copy import copy_course, run

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bubblewrap_problem() is not None, reason="check grades under bubblewrap")]
NAME = "lec03_scaling"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("course"))
    (root / "roster.txt").write_text("2026001\n2026002\n", encoding="utf-8")
    new = run(root, "-m", "autograder", "new", NAME, "--variants")
    assert new.returncode == 0, new.stderr
    return root, new


def _edit_factors(root, factors: str):
    path = root / "solutions" / NAME / "variants.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"^FACTORS = .*$", f"FACTORS = {factors}", text, flags=re.M), encoding="utf-8")
    return text


def test_new_with_variants_scaffolds_an_assignment_that_passes_check(course):
    root, new = course
    listed = re.findall(r"^  (\S+)$", new.stdout, flags=re.M)
    assert f"solutions/{NAME}/variants.py" in listed and f"autograder/{NAME}/variant_seed" in listed
    assert re.fullmatch(r"[0-9a-f]{64}\n", (root / "autograder" / NAME / "variant_seed").read_text())
    done = run(root, "-m", "autograder", "check", NAME)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "✓ per-student variants" in done.stdout and "16 sampled variants: LECTURE, check-1" in done.stdout
    assert re.search(r"q01_scaled_sum +\d+ distinct of 16 .*DEPENDENT", done.stdout)
    assert "the reference, graded in 3 of them: LECTURE 8/8, check-1 8/8, check-2 8/8" in done.stdout


@pytest.mark.parametrize("factors, problem", [
    ("(2.5,)", "q01_scaled_sum: marked DEPENDENT in variants.py, but its key is 25.0 in all 4 sampled variants"),
    ("(1e6,)", "is outside its plausible range [-1000, 1000]"),
])
def test_check_fails_a_variant_function_that_makes_a_question_degenerate_or_implausible(course, factors, problem):
    root, _ = course
    kept = _edit_factors(root, factors)
    try:
        done = run(root, "-m", "autograder", "check", NAME, "--variants", "4")
    finally:
        (root / "solutions" / NAME / "variants.py").write_text(kept, encoding="utf-8")
    assert done.returncode == 1 and problem in done.stdout, done.stdout[-3000:]
