"""The 'other correct implementations' of the corpus really are correct: they agree with the
reference on seeded data, ties, subnormals and saturation, so their passing the public tests means
something."""

import importlib.util

import numpy as np
import pytest

from student_folders import CORPUS
from hw_specs import CHIPS, PRECISIONS
from solutions.lec01_codesign import codesign as reference


def _load(case):
    spec = importlib.util.spec_from_file_location(f"corpus_{case}", CORPUS / case / "codesign.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _format_inputs(rng):
    grid = np.unique(np.abs(reference.round_e4m3(rng.standard_normal(4000) * 60)))
    midpoints = (grid[1:] + grid[:-1]) / 2
    return np.concatenate([
        rng.standard_t(5, 2048) * 0.02, rng.standard_normal(2048) * 100, rng.uniform(-1e3, 1e3, 2048),
        midpoints, -midpoints, np.ldexp(rng.uniform(0.5, 1, 512), rng.integers(-14, -5, 512)),
        [58.00000125, 464.0, 463.9999, 448.0, 0.25, 0.75, 5.0, 3.5, 0.0],  # float64 double-rounding trap, edges
    ])


@pytest.mark.parametrize("case", ["correct_loops", "correct_ml_dtypes"])
def test_the_corpus_implementation_agrees_with_the_reference(case):
    module, rng = _load(case), np.random.default_rng(2024)
    x = _format_inputs(rng)
    for name in ("round_e4m3", "to_e2m1"):
        for scale in (1.0, 0.01, 3.0):
            assert np.array_equal(getattr(module, name)(x * scale), getattr(reference, name)(x * scale)), (name, scale)
    data = np.concatenate([rng.standard_t(5, 1 << 13) * 0.02, np.zeros(64), rng.standard_normal(1 << 11)])
    for scheme in reference.SCHEMES:
        assert np.array_equal(module.quantize(data, scheme), reference.quantize(data, scheme)), scheme
    for chip in CHIPS.values():
        low = next(p for p in PRECISIONS if chip.has(p))
        mine, ref = module.trend_row(chip, low), reference.trend_row(chip, low)
        assert mine.keys() == ref.keys()
        assert all(ref[k] is None if mine[k] is None else np.isclose(mine[k], ref[k], rtol=1e-12) for k in ref)
        if chip.has("exp_per_s"):
            assert np.isclose(module.exp_ratio(chip, low, 192, 128), reference.exp_ratio(chip, low, 192, 128), rtol=1e-12)
