"""Fixtures shared by the core tests."""

import numpy as np
import pytest

from solutions.lec01_codesign import SCHEMES, quantize


@pytest.fixture(scope="session")
def reference_errors():
    """Demo 2 on DESIGN §2's data (seed 0, Student-t df=5 × 0.02, n = 2^20) with the reference:
    scheme -> (relative error, share of nonzero inputs that became 0)."""
    x = np.random.default_rng(0).standard_t(df=5, size=1 << 20) * 0.02
    out = {}
    for scheme in SCHEMES:
        q = quantize(x, scheme)
        out[scheme] = (np.linalg.norm(q - x) / np.linalg.norm(x), np.mean((q == 0) & (x != 0)))
    return out
