"""Hostile: tries to end the grading process."""

import os
import sys


def round_e4m3(x):
    sys.exit(0)


def to_e2m1(y):
    os._exit(0)


def quantize(x, scheme):
    raise SystemExit("bye")


def flops_per_exp(d_qk, d_v):
    sys.exit(1)


def exp_ratio(chip, precision, d_qk, d_v):
    os._exit(3)


def ridge_point(chip, precision):
    sys.exit()


def trend_row(chip, low_precision, base=None):
    os.kill(os.getppid(), 9)  # tries to kill whatever started it
    sys.exit(0)
