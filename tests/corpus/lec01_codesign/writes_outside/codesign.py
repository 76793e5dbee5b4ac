"""Hostile: tries to write outside its own folder, then returns nothing useful."""

import os

MARKER = "cs349e-escape-marker"


def _targets():
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", MARKER)
    yield os.path.join(here, "..", "..", MARKER)
    yield os.path.join("/", MARKER)
    yield os.path.join("/tmp", MARKER)
    yield os.path.join(os.path.expanduser("~"), MARKER)
    path = here
    while os.path.dirname(path) != path:
        path = os.path.dirname(path)
        yield os.path.join(path, MARKER)
        yield os.path.join(path, "solutions", MARKER)
        yield os.path.join(path, "autograder", MARKER)


def _escape():
    wrote, refused = [], []
    for target in _targets():
        try:
            with open(target, "w") as f:
                f.write("escaped\n")
            wrote.append(target)
        except OSError as err:
            refused.append(type(err).__name__)
    print("wrote:", wrote)
    return wrote


_escape()


def round_e4m3(x):
    _escape()
    raise PermissionError("writing outside the folder was refused")


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
