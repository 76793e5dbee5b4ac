"""Hostile: asks for far more memory than the machine has."""

import numpy as np


def round_e4m3(x):
    return np.ones(10**12)


def to_e2m1(y):
    return bytearray(64 * 1024**3)


def quantize(x, scheme):
    hog = []
    while True:  # address space runs out at the sandbox's memory limit
        hog.append(np.empty(10**8))


def flops_per_exp(d_qk, d_v):
    return [0] * 10**11


def exp_ratio(chip, precision, d_qk, d_v):
    raise NotImplementedError


def ridge_point(chip, precision):
    raise NotImplementedError


def trend_row(chip, low_precision, base=None):
    raise NotImplementedError
