"""Wrong return types and shapes everywhere."""

import numpy as np


def round_e4m3(x):
    return [str(v) for v in np.ravel(x)]


def to_e2m1(y):
    return np.zeros(np.size(y) + 1)


def quantize(x, scheme):
    return np.zeros((2, np.size(x)))


def flops_per_exp(d_qk, d_v):
    return str(2 * d_qk + 2 * d_v)


def exp_ratio(chip, precision, d_qk, d_v):
    return [0.5]


def ridge_point(chip, precision):
    return None


def trend_row(chip, low_precision, base=None):
    return [1.0, 2.0]
