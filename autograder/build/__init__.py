"""Generate the student files of an assignment from solutions/ (`python -m autograder build <name>`).

assignments/<name>/ is exactly what students see and nbgrader's source folder; the build keeps its
generated files (skeleton, notebook, copies of shared modules, README) in step with the sources,
and `build_assignment(name, check=True)` reports drift without writing.

The names below are imported when first used: importing the notebook builder (nbformat,
jsonschema) would cost a verb that needs one of the small modules here ~2 s of CPU for nothing.
"""

import importlib

_WHERE = {
    "BuildError": "assignment", "build_assignment": "assignment", "build_everything": "assignment",
    "generated_files": "assignment", "write_reference_submission": "assignment",
    "MarkerError": "markers", "NotebookSourceError": "notebook",
}

__all__ = ["BuildError", "MarkerError", "NotebookSourceError", "build_assignment", "build_everything", "generated_files",
           "write_reference_submission"]


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
