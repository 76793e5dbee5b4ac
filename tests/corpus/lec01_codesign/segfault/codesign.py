"""Hostile: crashes the interpreter."""

import ctypes
import os
import signal


def round_e4m3(x):
    return ctypes.string_at(0)


def to_e2m1(y):
    os.kill(os.getpid(), signal.SIGSEGV)


def quantize(x, scheme):
    os.abort()


def flops_per_exp(d_qk, d_v):
    raise NotImplementedError


def exp_ratio(chip, precision, d_qk, d_v):
    raise NotImplementedError


def ridge_point(chip, precision):
    raise NotImplementedError


def trend_row(chip, low_precision, base=None):
    raise NotImplementedError
