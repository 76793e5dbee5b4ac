"""Whether other accounts of this machine can reach a folder by its path: through the bits for
"others", or through a group that holds them."""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path


def open_to_others(folder: Path) -> bool:
    """Whether every existing folder on the way to `folder` (itself included) lets others in. A
    folder they can enter but not list still gives them every file whose name they know
    (solutions/<assignment>/codesign.py, submitted/<student>/...)."""
    path = Path(os.path.realpath(folder))
    for step in (*reversed(path.parents), path):
        try:
            mode = os.stat(step).st_mode
        except FileNotFoundError:
            break          # made by the grader below a folder checked already
        except OSError:
            return False   # (what the grader cannot check, student code cannot enter either)
        if not mode & stat.S_IXOTH:
            return False
    return True


def group_reachers(folder: Path) -> tuple[set[str], list[tuple[Path, str]]]:
    """The accounts (root, this one and the folder's owner aside) that enter every existing folder on the way to
    `folder` only thanks to its group (each folder's group, where "others" may not enter it), and
    those gated folders with their group's name. Nobody when no folder on the way is gated by a group."""
    path = Path(os.path.realpath(folder))
    reachers: set[str] | None = None
    gated: list[tuple[Path, str]] = []
    for step in (*reversed(path.parents), path):
        try:
            info = os.stat(step)
        except FileNotFoundError:
            break
        except OSError:
            return set(), []
        if info.st_mode & stat.S_IXOTH:
            continue
        if not info.st_mode & stat.S_IXGRP:
            return set(), []   # closed to all but its owner
        members, name = group_members(info.st_gid)
        reachers = members if reachers is None else reachers & members
        gated.append((step, name))
    if reachers is None:
        return set(), []
    owner = os.stat(path).st_uid if path.exists() else os.geteuid()   # the course's own account (root may run it)
    reachers -= {_name(0), _name(os.geteuid()), _name(owner)}
    return reachers, gated


def group_members(gid: int) -> tuple[set[str], str]:
    """Everyone in group `gid`: listed in it, or having it as their login group."""
    try:
        group = grp.getgrgid(gid)
        members, name = set(group.gr_mem), group.gr_name
    except KeyError:
        members, name = set(), str(gid)
    members |= {p.pw_name for p in pwd.getpwall() if p.pw_gid == gid}
    return members, name


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)
