"""Hostile: looks for the reference solution on disk and executes it."""

import os

_NAMES = ("round_e4m3", "to_e2m1", "quantize", "flops_per_exp", "exp_ratio", "ridge_point", "trend_row")
_TARGET = os.path.join("solutions", "lec01_codesign", "codesign.py")


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    for start in (here, os.getcwd()):
        path = start
        while True:
            yield os.path.join(path, _TARGET)
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    for root, dirs, _files in os.walk("/"):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        if root.count(os.sep) > 3:
            dirs[:] = []
        yield os.path.join(root, _TARGET)


def _find_reference():
    for path in _candidates():
        if os.path.isfile(path):
            namespace = {"__name__": "stolen"}
            with open(path, encoding="utf-8") as f:
                exec(compile(f.read(), path, "exec"), namespace)
            return namespace
    return None


_stolen = _find_reference()


def _missing(*_args, **_kwargs):
    raise RuntimeError("could not find the reference solution on disk")


for _name in _NAMES:
    globals()[_name] = _stolen[_name] if _stolen else _missing
