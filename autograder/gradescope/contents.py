"""Which repository files go into a Gradescope bundle.

The bundle carries what grading needs and nothing more: the grader (autograder/, with the hidden
tests), the reference (solutions/), the shared top-level modules, and the assignment's own
folder (the trusted copies of every file a student does not submit). Never tests/, never
examples/, never caches, nothing that needs nbgrader.
"""

from pathlib import Path

TOP_LEVEL_MODULES = ("hw_specs.py", "console.py")
PACKAGES = ("autograder", "solutions")
SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis"}
SKIPPED_SUFFIXES = (".pyc", ".pyo")
# Needs nbgrader/nbconvert (the instructor install), which Gradescope's image never gets.
EXCLUDED_FOLDERS = ("autograder/nbgrader_bridge", "autograder/similarity")   # instructor-only tools


def _wanted(path: Path, top: Path) -> bool:
    parts = path.relative_to(top).parts
    return (
        path.is_file()
        and not any(part in SKIPPED_DIRS or part.startswith(".") for part in parts)
        and not path.name.endswith(SKIPPED_SUFFIXES)
    )


def _tree(root: Path, folder: str) -> list[str]:
    top = root / folder
    paths = (p.relative_to(root).as_posix() for p in sorted(top.rglob("*")) if _wanted(p, top))
    return [p for p in paths if not p.startswith(tuple(f"{e}/" for e in EXCLUDED_FOLDERS))]


def bundle_sources(root: Path, assignment: str) -> tuple[str, ...]:
    """Repository-relative paths (posix) of every source file the bundle must carry."""
    required = [root / m for m in TOP_LEVEL_MODULES] + [root / p for p in PACKAGES]
    required += [root / "assignments" / assignment / "grading.toml", root / "autograder" / assignment]
    missing = [str(p.relative_to(root)) for p in required if not p.exists()]
    if missing:
        raise ValueError(f"cannot bundle assignment {assignment!r}: missing {', '.join(missing)} under {root}")
    files = list(TOP_LEVEL_MODULES)
    for folder in (*PACKAGES, f"assignments/{assignment}"):
        files += _tree(root, folder)
    return tuple(files)
