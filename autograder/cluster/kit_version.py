"""Which kit a process grades with: the package version, a digest of every file that decides a
score, and the versions of what runs the tests. A cluster grades only where every worker's kit
equals the instructor's (checked at connect time and again by every task): one worker with other
hidden tests, another reference or another numpy would give its students other scores.

The digest covers the grader, the hidden tests and their fixed examples, the reference, the
assignment sources and the shared course modules, by relative path and bytes (so two checkouts
in different folders of different machines agree), and nothing a run writes (caches).
"""

from __future__ import annotations

import functools
import hashlib
import platform
import tomllib
from importlib import metadata

from autograder.engine.registry import REPO_ROOT

# What decides a score: folders walked whole, and single files of the repository root.
KIT_FOLDERS = ("autograder", "solutions", "assignments", "authoring")
KIT_FILES = ("pyproject.toml", "hw_specs.py", "console.py", "cpu_timing.py")  # cpu_timing: the reference timings
# Libraries whose version can change what a submission's code computes or how it is tested.
RUNTIME_PACKAGES = ("numpy", "hypothesis", "matplotlib", "nbformat")
_SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".hypothesis", ".grading_cache"}


def _kit_files():
    for name in KIT_FILES:
        path = REPO_ROOT / name
        if path.is_file():
            yield name, path
    for folder in KIT_FOLDERS:
        for path in sorted((REPO_ROOT / folder).rglob("*")):
            rel = path.relative_to(REPO_ROOT)
            if (path.is_file() and not _SKIPPED_PARTS & set(rel.parts)
                    and not any(part.startswith(".") for part in rel.parts) and path.suffix != ".pyc"):
                yield rel.as_posix(), path


@functools.cache
def kit_version() -> dict[str, str]:
    """{"kit": package version, "sources": digest, "python": …, and one entry per runtime package}."""
    digest = hashlib.sha256()
    for rel, path in sorted(_kit_files()):
        data = path.read_bytes()
        digest.update(b"%s\0%d\0" % (rel.encode(), len(data)) + data)
    with open(REPO_ROOT / "pyproject.toml", "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    identity = {"kit": version, "sources": digest.hexdigest()[:16], "python": platform.python_version()}
    for package in RUNTIME_PACKAGES:
        try:
            identity[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            identity[package] = "missing"
    return identity


def version_text(identity: dict[str, str]) -> str:
    """e.g. "0.1.0+3f2a9c0d1e2b4a5c (python 3.11.9, numpy 2.3.4, …)"."""
    rest = ", ".join(f"{k} {v}" for k, v in identity.items() if k not in ("kit", "sources"))
    return f"{identity.get('kit', '?')}+{identity.get('sources', '?')} ({rest})"


def mismatch(who: str, ours: dict[str, str], theirs: dict[str, str]) -> str | None:
    """One line naming the process (e.g. "worker tcp://…") and both versions, or None when they
    are the same kit."""
    if ours == theirs:
        return None
    differs = sorted(k for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k))
    return (f"{who} runs kit {version_text(theirs)}, the instructor's kit is {version_text(ours)} "
            f"(they differ in {', '.join(differs)}): install the same kit on the scheduler and every worker")
