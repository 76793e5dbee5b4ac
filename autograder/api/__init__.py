"""The kit as a library: what the CLI verbs do, as functions with keyword arguments only. The
verbs (autograder/commands/) and the Gradescope runner are thin shims over these.

    grade(assignment=..., submissions=..., out=..., jobs=1, scheduler=None)   -> BatchReport
    pregrade(assignment=..., jobs=1)                                          -> Pregraded
    gradescope_run(assignment=..., root=Path("/autograder"))                  -> exit status

Modules: grading (grade, pregrade, Refused), gradescope_run (the one submission of a Gradescope
container), author_check (an author's whole-course check). Names are imported when first used:
a Gradescope bundle carries no cluster or nbgrader code, and a verb's --help stays fast.
"""

import importlib

_WHERE = {
    "Refused": "grading", "grade": "grading", "pregrade": "grading", "Pregraded": "grading",
    "check_isolation": "grading", "gradescope_run": "gradescope_run",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
