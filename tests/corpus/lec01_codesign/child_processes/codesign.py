"""Hostile: leaves processes running behind it (a child, a detached grandchild, a fork)."""

import os
import subprocess
import sys

MARKER = "cs349e-orphan-marker"

_SLEEPER = "import time\nwhile True:\n    time.sleep(1)\n"
subprocess.Popen([sys.executable, "-c", _SLEEPER, MARKER])
subprocess.Popen([sys.executable, "-c", _SLEEPER, MARKER], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", _SLEEPER, MARKER])


def round_e4m3(x):
    subprocess.Popen([sys.executable, "-c", _SLEEPER, MARKER])
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
