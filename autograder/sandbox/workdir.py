"""The sandbox's private copy of a submission, with the trusted files laid over it."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path, PurePosixPath
from typing import Mapping

# Compiled code would run instead of the .py source the instructor can read; never copy it.
SKIPPED_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints", ".git"})
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dylib")


def check_overlay(overlay: Mapping[str, Path]) -> dict[str, Path]:
    """The overlay as {relative name: existing trusted file}; ValueError naming a bad entry."""
    checked = {}
    for name, source in overlay.items():
        rel = PurePosixPath(name)
        if not name or rel.is_absolute() or ".." in rel.parts or rel.parts[0] in SKIPPED_DIRS:
            raise ValueError(f"overlay name {name!r} must be a plain relative path inside the submission")
        source = Path(source)
        if not source.is_file():
            raise ValueError(f"overlay file for {name!r} does not exist: {source}")
        checked[str(rel)] = source
    return checked


def copy_submission(submission: Path, dest: Path) -> list[str]:
    """Copies regular files and directories of `submission` into `dest` (which must not exist).

    Symbolic links are not followed (one could point at solutions/), special files and compiled
    code are left out. Returns the relative paths that were skipped, for the record.
    """
    skipped = []
    dest.mkdir(mode=0o755)
    for root, dirs, files in os.walk(submission, followlinks=False):
        here = Path(root)
        target = dest / here.relative_to(submission)
        for name in list(dirs):
            path = here / name
            if name in SKIPPED_DIRS or path.is_symlink():
                dirs.remove(name)
                skipped.append(str(path.relative_to(submission)))
            else:
                (target / name).mkdir(mode=0o755)
        for name in files:
            path = here / name
            mode = path.lstat().st_mode
            if not stat.S_ISREG(mode) or name.endswith(SKIPPED_SUFFIXES):
                skipped.append(str(path.relative_to(submission)))
                continue
            shutil.copyfile(path, target / name, follow_symlinks=False)
            os.chmod(target / name, 0o644)
    return skipped


def lay_overlay(dest: Path, overlay: Mapping[str, Path]) -> None:
    """Puts each trusted file at its name, replacing whatever the student had there."""
    for name, source in overlay.items():
        target = dest / name
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)


def hand_over(dest: Path, uid: int, gid: int) -> None:
    """Makes `dest` and everything in it owned by the sandbox's uid, so the unprivileged worker
    can write there, and closes `dest` (mode 0700) to every other uid, other sandboxes included."""
    os.chmod(dest, 0o700)
    for root, dirs, files in os.walk(dest):
        os.chown(root, uid, gid)
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def remove_tree(path: Path) -> None:
    """Removes a sandbox directory even if student code took permissions away inside it."""
    def retry_writable(_func, failed, _exc):
        parent = os.path.dirname(failed)
        for p in (parent, failed):
            try:
                os.chmod(p, 0o700, follow_symlinks=False)
            except (OSError, NotImplementedError):
                pass
        if os.path.isdir(failed) and not os.path.islink(failed):
            shutil.rmtree(failed, ignore_errors=True)
        else:
            try:
                os.unlink(failed)
            except FileNotFoundError:
                pass

    if path.exists():
        shutil.rmtree(path, onerror=retry_writable)
