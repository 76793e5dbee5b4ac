"""Hostile: returns objects that claim to equal anything."""

import numpy as np


class Always:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


class AlwaysFloat(float):
    def __eq__(self, other):
        return True


class LyingArray(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)


class LyingDict(dict):
    def __eq__(self, other):
        return True


def round_e4m3(x):
    return Always()


def to_e2m1(y):
    return np.zeros(np.shape(y)).view(LyingArray)


def quantize(x, scheme):
    return [Always()] * len(x)


def flops_per_exp(d_qk, d_v):
    return AlwaysFloat(0.0)


def exp_ratio(chip, precision, d_qk, d_v):
    return AlwaysFloat(0.0)


def ridge_point(chip, precision):
    return Always()


def trend_row(chip, low_precision, base=None):
    return LyingDict(compute=Always())
