"""Hostile: never returns (one busy loop, one that ignores polite termination)."""

import signal
import time


def round_e4m3(x):
    while True:
        pass


def to_e2m1(y):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        time.sleep(0.01)


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
