"""Hostile: pretends the user pressed Ctrl-C."""

import os
import signal


def round_e4m3(x):
    raise KeyboardInterrupt


def to_e2m1(y):
    os.kill(os.getpid(), signal.SIGINT)


def quantize(x, scheme):
    raise KeyboardInterrupt("stop grading")


def flops_per_exp(d_qk, d_v):
    raise NotImplementedError


def exp_ratio(chip, precision, d_qk, d_v):
    raise NotImplementedError


def ridge_point(chip, precision):
    raise NotImplementedError


def trend_row(chip, low_precision, base=None):
    raise NotImplementedError
