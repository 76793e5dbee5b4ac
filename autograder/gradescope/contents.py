"""Which repository files go into a Gradescope bundle.

The bundle carries what grading needs and nothing more: the grader (autograder/, with this
assignment's hidden tests), this assignment's reference (solutions/<name>/), the shared top-level
modules the assignment's grading.toml declares (`shared_modules`, the same list the build copies into
the student folder), and the assignment's own folder (the trusted copies of every file a student does
not submit). Never another assignment's reference or hidden tests (a zip built for lecture 1 is the
same whatever else the course holds), never tests/, never examples/, never caches, nothing that
needs nbgrader.
"""

import tomllib
from pathlib import Path

from autograder.errors import InstructorError


class BundleSourceError(InstructorError, ValueError):
    """The repository cannot make a bundle for the assignment (missing or malformed source)."""

PACKAGES = ("authoring", "autograder", "solutions")
SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis"}
SKIPPED_SUFFIXES = (".pyc", ".pyo")
# Instructor-only tools: they need nbgrader/nbconvert, copydetect or dask (the instructor's
# extras), which Gradescope's image never gets, and one container grades one submission.
EXCLUDED_FOLDERS = ("autograder/nbgrader_bridge", "autograder/similarity", "autograder/cluster")


def _wanted(path: Path, top: Path) -> bool:
    parts = path.relative_to(top).parts
    return (
        path.is_file()
        and not any(part in SKIPPED_DIRS or part.startswith(".") for part in parts)
        and not path.name.endswith(SKIPPED_SUFFIXES)
    )


def _tree(root: Path, folder: str, excluded: tuple[str, ...] = ()) -> list[str]:
    top = root / folder
    paths = (p.relative_to(root).as_posix() for p in sorted(top.rglob("*")) if _wanted(p, top))
    return [p for p in paths if not p.startswith(tuple(f"{e}/" for e in (*EXCLUDED_FOLDERS, *excluded)))]


def _other_assignments(root: Path, assignment: str) -> tuple[str, ...]:
    """The per-assignment folders of every other assignment of the course (found by grading.toml)."""
    others = sorted(p.parent.name for p in (root / "assignments").glob("*/grading.toml")
                    if p.parent.name != assignment)
    return tuple(f"{top}/{name}" for name in others for top in ("autograder", "solutions"))


def bundle_sources(root: Path, assignment: str) -> tuple[str, ...]:
    """Repository-relative paths (posix) of every source file the bundle must carry."""
    grading = root / "assignments" / assignment / "grading.toml"
    shared = _shared_modules(grading)
    required = [root / m for m in shared] + [root / p for p in PACKAGES]
    required += [grading, root / "autograder" / assignment]
    missing = [str(p.relative_to(root)) for p in required if not p.exists()]
    if missing:
        raise BundleSourceError(f"cannot bundle assignment {assignment!r}: missing {', '.join(missing)} under {root}")
    files = list(shared)
    others = _other_assignments(root, assignment)
    for folder in (*PACKAGES, f"assignments/{assignment}"):
        files += _tree(root, folder, others)
    return tuple(files)


def _shared_modules(grading: Path) -> list[str]:
    """grading.toml's `shared_modules` (read directly: `root` need not be this repository)."""
    if not grading.is_file():
        return []  # the caller reports the missing grading.toml
    try:
        return list(tomllib.loads(grading.read_text(encoding="utf-8")).get("shared_modules", []))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise BundleSourceError(f"{grading}: not valid TOML: {err}") from None
