"""CPU placement: every open sandbox on CPUs of its own while there are enough of them.

A sandbox's cgroup caps how much CPU time it gets (cpu.max / cfs quota: one CPU), not where it
runs. A submission that forks spinners spreads them over every CPU: the scheduler pulls them
onto a classmate's CPU whenever the classmate's grader and worker pause to hand a request over,
and the quota lets them burst on all CPUs at the start of each period. So each sandbox also gets
a set of CPUs (`claim`): disjoint from every other open sandbox's of this user while there are
enough CPUs, shared by as few sandboxes as possible beyond that. The worker pins itself to them
before any student code runs (lockdown.py; every process and thread it starts inherits them) and
its seccomp filter refuses sched_setaffinity, so nothing in the sandbox can leave them. Plain
affinity works wherever the grader runs (root or not, cgroup v1 or v2, containers); the grader's
own processes stay free to run anywhere.

Claims are flock(2)ed files in a folder of the grader's user, so concurrent graders (`grade
-j N`, several grader processes) see each other's, and a claim ends with its process. The folder
is one no other user can create first or write into: /run/cs349e-cpus for root, else
$XDG_RUNTIME_DIR/cs349e-cpus, else ~/.cache/cs349e/cpu-claims (the home from the user database,
not $HOME); every folder on the way must belong to root or the grader and be closed to others'
writes (a sticky /tmp-like folder only above one of the grader's own). Where none qualifies,
placement is off and `problem()` says why (the grade summary prints it).
"""

from __future__ import annotations

import fcntl
import math
import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path

ENABLED = True   # benchmarks compare both
_LEVELS = 64     # sandboxes one CPU set may hold at once before claims stop being counted


@dataclass
class CpuClaim:
    """The CPUs one sandbox runs on, held until `release` (or until its process ends)."""

    cpus: tuple[int, ...]
    _fds: tuple[int, ...] = ()

    def release(self) -> None:
        for fd in self._fds:
            os.close(fd)   # closing the descriptor ends the lock
        self._fds = ()


def claim(cpu_share: float) -> CpuClaim | None:
    """The CPU set for a new sandbox that may keep `cpu_share` CPUs busy, or None where there is
    nothing to place it on (fewer than two sets' worth of CPUs, placement off, or no private
    folder for the claims): then it runs wherever the scheduler puts it."""
    if not ENABLED:
        return None
    sets = cpu_sets(sorted(os.sched_getaffinity(0)), max(1, math.ceil(cpu_share)))
    folder, _why = claims_folder()
    if len(sets) < 2 or folder is None:
        return None
    try:
        with _Lock(folder / "claims.lock"):   # counting and taking are one step for all graders
            counts = [_held(folder, cpus) for cpus in sets]
            chosen = sets[counts.index(min(counts))]
            for level in range(_LEVELS):
                fds = _take(folder, chosen, level)
                if fds is not None:
                    return CpuClaim(chosen, fds)
    except OSError:
        pass   # (e.g. out of descriptors): the sandbox runs unplaced, as on a one-CPU machine
    return None


def problem(cpu_share: float = 1.0) -> str | None:
    """Why sandboxes opened now would not be placed on CPUs of their own, or None."""
    if not ENABLED:
        return "CPU placement is switched off"
    allowed = sorted(os.sched_getaffinity(0))
    if len(cpu_sets(allowed, max(1, math.ceil(cpu_share)))) < 2:
        return f"{len(allowed)} CPU(s) allowed: not enough to give a sandbox CPUs of its own"
    return claims_folder()[1]


def cpu_sets(allowed: list[int], width: int) -> list[tuple[int, ...]]:
    """`allowed` cut into disjoint sets of `width` CPUs (what is left over joins the last set)."""
    count = len(allowed) // width
    sets = [tuple(allowed[i * width:(i + 1) * width]) for i in range(count)]
    if sets and len(allowed) > count * width:
        sets[-1] += tuple(allowed[count * width:])
    return sets


def describe(cpus: tuple[int, ...] | None) -> str:
    """"1", "0,2", or "" (not placed): how results record it."""
    return ",".join(map(str, cpus)) if cpus else ""


def _held(folder: Path, cpus: tuple[int, ...]) -> int:
    """How many sandboxes hold `cpus` now (levels whose lock is taken)."""
    held = 0
    for level in range(_LEVELS):
        fds = _take(folder, cpus, level)
        if fds is None:
            held += 1
        else:
            for fd in fds:
                os.close(fd)
    return held


def _take(folder: Path, cpus: tuple[int, ...], level: int) -> tuple[int, ...] | None:
    """The locks of `cpus` at `level`, or None (and none kept) where one is held elsewhere."""
    fds = []
    for cpu in cpus:
        fd = os.open(folder / f"cpu{cpu}.{level}", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fds.append(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            for taken in fds:
                os.close(taken)
            return None
    return tuple(fds)


class _Lock:
    def __init__(self, path: Path):
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)

    def __enter__(self):
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc_info):
        os.close(self._fd)


def claims_folder() -> tuple[Path | None, str | None]:
    """(this user's private folder of claims, None), or (None, why none can be used)."""
    reasons = []
    for folder in _candidates():
        why = _make_private(folder)
        if why is None:
            return folder, None
        reasons.append(why)
    return None, "no private folder for CPU claims: " + "; ".join(reasons)


def _candidates() -> list[Path]:
    euid = os.geteuid()
    found = [Path("/run/cs349e-cpus")] if euid == 0 else []
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        found.append(Path(runtime) / "cs349e-cpus")
    try:
        home = pwd.getpwuid(euid).pw_dir
    except KeyError:
        home = ""
    if home.startswith("/") and home != "/":
        found.append(Path(home) / ".cache" / "cs349e" / "cpu-claims")
    return found


def _make_private(folder: Path) -> str | None:
    """Makes `folder` (0700, with missing parents) and checks no other user can have made or can
    change any folder on the way; the reason where it cannot be used, else None."""
    euid = os.geteuid()
    path = Path("/")
    for part in folder.parts[1:]:
        path = path / part
        try:
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            info = os.lstat(path)
        except OSError as exc:
            return f"{path}: {exc.strerror}"
        if not stat.S_ISDIR(info.st_mode):
            return f"{path} is not a folder"
        if info.st_uid not in (0, euid):
            return f"{path} belongs to uid {info.st_uid}, not to this grader (uid {euid})"
        if path == folder:
            if info.st_uid != euid or info.st_mode & 0o077:
                return f"{path} is mode {stat.S_IMODE(info.st_mode):04o} owned by uid {info.st_uid}, not private"
        elif info.st_mode & 0o022 and not (info.st_mode & stat.S_ISVTX and info.st_uid == 0):
            return f"{path} is mode {stat.S_IMODE(info.st_mode):04o}: others may replace what is in it"
    return None
