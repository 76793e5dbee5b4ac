"""Hostile: reaches into the grader's process (its working folder, root, environment and command
line under /proc) for the project folder, then imports the reference or the hidden tests from it.
Without bubblewrap this is the obvious way to find the project."""

import os
import sys

_NAMES = ("round_e4m3", "to_e2m1", "quantize", "flops_per_exp", "exp_ratio", "ridge_point", "trend_row")


def _project_guesses():
    pids = [str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()]
    for pid in pids:
        for link in ("cwd", "root"):
            try:
                yield os.readlink(f"/proc/{pid}/{link}")
            except OSError:
                pass
        for name in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as handle:
                    words = handle.read().replace(b"=", b"\0").split(b"\0")
            except OSError:
                continue
            for word in words:
                text = word.decode("utf-8", "replace")
                if text.startswith("/"):
                    yield text
                    yield os.path.dirname(text)


def _steal():
    for folder in _project_guesses():
        for candidate in (folder, os.path.dirname(folder)):
            reference = os.path.join(candidate, "solutions", "lec01_codesign", "codesign.py")
            hidden = os.path.join(candidate, "autograder", "lec01_codesign")
            try:
                readable = os.path.isfile(reference) and open(reference).read(1) is not None
                os.listdir(hidden)
            except OSError:
                continue
            if readable:
                sys.path.insert(0, candidate)
                from solutions.lec01_codesign import codesign as stolen
                return stolen
    return None


try:
    _stolen = _steal()
except Exception:  # noqa: BLE001 - a hostile submission never fails loudly
    _stolen = None


def _missing(*_args, **_kwargs):
    raise RuntimeError("could not reach the grader's files")


for _name in _NAMES:
    globals()[_name] = getattr(_stolen, _name) if _stolen else _missing
