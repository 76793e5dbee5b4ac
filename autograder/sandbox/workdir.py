"""The sandbox's private copy of a submission, with the trusted files laid over it."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path, PurePosixPath
from typing import Mapping

# Compiled code would run instead of the .py source the instructor can read; never copy it.
SKIPPED_DIRS = frozenset({"__pycache__", ".ipynb_checkpoints", ".git"})
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dylib")
# As the exchange's collect bounds a submission (nbgrader_bridge/inbound.py): no assignment needs more.
MAX_ENTRIES = 10_000    # files and folders in one submission
MAX_DEPTH = 16          # nested folders below it


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


class SubmissionTooLarge(ValueError):
    """A submission folder with more files and folders, or deeper folders, than any assignment
    needs: refused whole, before anything in it is graded."""


def bounded_walk(top: Path, skip_dirs: frozenset[str] = frozenset()):
    """(relative path, DirEntry) of every entry below `top`, folders before their contents, links
    not followed. SubmissionTooLarge past MAX_ENTRIES entries or MAX_DEPTH nested folders: a
    student's upload of 100,000 empty files or 1,000 nested folders costs the grader a bounded
    walk (no recursion: os.walk and Path.rglob recurse), never a stall or a RecursionError."""
    seen = 0
    stack = [(top, PurePosixPath(), 0)]
    while stack:
        folder, rel, depth = stack.pop()
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                seen += 1
                if seen > MAX_ENTRIES:
                    raise SubmissionTooLarge(f"{top} holds more than {MAX_ENTRIES} files and folders")
                path = rel / entry.name
                yield path, entry
                if entry.is_dir(follow_symlinks=False) and entry.name not in skip_dirs:
                    if depth + 1 > MAX_DEPTH:
                        raise SubmissionTooLarge(f"{top} nests folders more than {MAX_DEPTH} levels deep ({path})")
                    stack.append((Path(entry.path), path, depth + 1))


def copy_submission(submission: Path, dest: Path) -> list[str]:
    """Copies regular files and directories of `submission` into `dest` (which must not exist).

    Symbolic links are not followed (one could point at solutions/), special files and compiled
    code are left out. Returns the relative paths that were skipped, for the record.
    SubmissionTooLarge (naming the bound) for a folder beyond MAX_ENTRIES or MAX_DEPTH.
    """
    skipped = []
    dest.mkdir(mode=0o755)
    for rel, entry in bounded_walk(submission, SKIPPED_DIRS):
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            if entry.name in SKIPPED_DIRS:
                skipped.append(str(rel))
            else:
                (dest / rel).mkdir(mode=0o755)
        elif not stat.S_ISREG(mode) or entry.name.endswith(SKIPPED_SUFFIXES):
            skipped.append(str(rel))
        else:
            shutil.copyfile(entry.path, dest / rel, follow_symlinks=False)
            os.chmod(dest / rel, 0o644)
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
    """Removes a sandbox directory even if student code took permissions away inside it, or nested
    folders deeper than shutil.rmtree's recursion reaches (a student's mkdir/chdir loop would end
    the grader with RecursionError and leave the uid's processes and files behind). What cannot be
    removed is left, with a warning: closing a sandbox never fails because of what is inside."""
    if not os.path.lexists(path):
        return
    parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        remove_entry(parent, path.name)
    except OSError as exc:
        print(f"WARNING: could not remove the sandbox folder {path}: {exc}", file=sys.stderr, flush=True)
    finally:
        os.close(parent)


def remove_entry(dir_fd: int, name: str) -> None:
    """Removes `name` in the folder open as `dir_fd` and everything below it, however deep,
    without recursion and without following a link: every folder on the way is held open, so a
    folder renamed meanwhile takes nothing outside along (never `..`). Folders it may change are
    made 0700 first (permissions student code took away). OSError for what stays."""
    try:
        os.unlink(name, dir_fd=dir_fd)
        return
    except IsADirectoryError:
        pass
    except PermissionError:
        if not stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise
    stack = [(dir_fd, name, _open_folder(dir_fd, name))]    # (parent fd, name, fd)
    try:
        while stack:
            _parent, _name, fd = stack[-1]
            child = None
            for entry in os.scandir(fd):
                if entry.is_dir(follow_symlinks=False):
                    child = entry.name
                    break
                os.unlink(entry.name, dir_fd=fd)
            if child is not None:
                stack.append((fd, child, _open_folder(fd, child)))
                continue
            parent, folder, fd = stack.pop()
            os.close(fd)
            os.rmdir(folder, dir_fd=parent)
    finally:
        for _parent, _name, fd in stack:
            os.close(fd)


def _open_folder(dir_fd: int, name: str) -> int:
    """Opens a folder to empty it, made 0700 so its entries can be removed (permissions student
    code took away; a root grader needs none, and a folder not the grader's stays as it is)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:
        if not stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise
        os.chmod(name, 0o700, dir_fd=dir_fd)
        fd = os.open(name, flags, dir_fd=dir_fd)
    try:
        os.fchmod(fd, 0o700)
    except OSError:
        pass
    return fd
