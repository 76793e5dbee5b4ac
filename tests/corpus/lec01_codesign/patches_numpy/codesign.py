"""Hostile: makes numpy's comparisons always succeed, then returns garbage."""

import numpy as np

np.array_equal = lambda *args, **kwargs: True
np.allclose = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(a, b).shape, dtype=bool)
np.testing.assert_array_equal = lambda *args, **kwargs: None
np.testing.assert_allclose = lambda *args, **kwargs: None
np.testing.assert_equal = lambda *args, **kwargs: None
try:
    np.ndarray.__eq__ = lambda self, other: True  # a built-in type: numpy refuses
except TypeError:
    pass


def round_e4m3(x):
    return np.zeros(np.shape(x))


def to_e2m1(y):
    return np.zeros(np.shape(y))


def quantize(x, scheme):
    return np.zeros(np.shape(x))


def flops_per_exp(d_qk, d_v):
    return 0


def exp_ratio(chip, precision, d_qk, d_v):
    return 0.0


def ridge_point(chip, precision):
    return 0.0


def trend_row(chip, low_precision, base=None):
    return {k: 0.0 for k in ("compute", "fp8", "bandwidth", "capacity", "nvlink", "power", "ridge")}
