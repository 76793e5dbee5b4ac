"""A throw-away copy of the course repository for tests that add assignments or run the CLI as an
author would (the repository itself is never modified by a test)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE_FILES = ("pyproject.toml", "nbgrader_config.py", "hw_specs.py", "console.py", "plot_fonts.py", "cpu_timing.py",
                "assignments", "authoring", "autograder", "solutions")
# Caches and what a checkout's own grading left (pinned results): a course copy starts clean.
IGNORED = shutil.ignore_patterns("__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".hypothesis",
                                 ".grading_cache", ".pinned_results")


def copy_course(dest: Path, source: Path = ROOT) -> Path:
    """The course files of `source` (this checkout, or an extracted older revision, which may
    lack some of them) copied into `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COURSE_FILES:
        path = source / name
        if path.is_dir():
            shutil.copytree(path, dest / name, ignore=IGNORED)
        elif path.exists():
            shutil.copyfile(path, dest / name)
    if source == ROOT:
        seed_shared_key_work(dest)
    return dest


def seed_shared_key_work(dest: Path) -> None:
    """The copy's key store starts with this checkout's stored shared key work (lec01's end-to-end
    forward, the same for every student), computed here once per run instead of once in every copy
    (≈ 1.1 s of CPU in each process of a copy that met a new student). The store files it under the digest of the sources, so
    a copy whose sources a test then changes computes it afresh; keys and variants are not seeded."""
    from autograder.engine.key_cache import FOLDER, SHARED
    from solutions.lec01_codesign.answers import end_to_end

    end_to_end()   # stored in this checkout's store (or already there)
    for shared in sorted((ROOT / FOLDER).glob(f"*/*/{SHARED}")):
        shutil.copytree(shared, dest / shared.relative_to(ROOT), dirs_exist_ok=True)
    store = dest / FOLDER
    for path in [store, *store.rglob("*")] if store.is_dir() else []:   # as private as the store keeps it
        os.chmod(path, 0o700 if path.is_dir() else 0o600)


def clean_env() -> dict:
    drop = ("PYTHONPATH", "NBGRADER_EXECUTION", "CS349E_TRUSTED_GRADING", "CS349E_GRADER_ROOT",
            "CS349E_GRADER_PYTHON")
    return {k: v for k, v in os.environ.items() if k not in drop}


def run(root: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=root, env=clean_env(), capture_output=True, text=True,
                          timeout=timeout)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the copy (caches left out: Python's, pytest's, hypothesis's, the answer keys'
    store) -> its bytes."""
    from autograder.engine.key_cache import FOLDER as KEY_CACHE

    caches = {"__pycache__", ".pytest_cache", ".hypothesis", KEY_CACHE}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not caches & set(p.parts)}
