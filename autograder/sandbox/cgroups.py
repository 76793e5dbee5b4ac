"""Per-sandbox quotas with a control group: memory, processes and CPU for the whole sandbox.

Each Sandbox gets one cgroup below the grader's own (v2, or the cpu/cpuacct/memory/pids
hierarchies of v1), holding every process it ever starts: memory.max caps what the sandbox holds
in total (not per process), pids.max its processes and threads, cpu.max (cfs quota) the CPUs it
may use at once; its CPU time is read from the group, so a call's timeout counts the student's
own CPU time (clock.py). Workers enter the group before they exec (`prefix`), so no child can be
started outside it.

How sandboxes are bounded is chosen once per grader process (`confinement.quotas()`, from the
layout `probe_layout` finds): cgroup v1, cgroup v2, cgroup v2 delegated (a non-root grader in a
subtree it owns, e.g. under `systemd-run --user --scope -p Delegate=yes`) or per-process rlimits
(`NoQuota`, whose sandboxes get the empty `NO_GROUP`). The two hierarchies' files differ
(`_V1Files`, `_V2Files`); what a sandbox's group does is the same. On cgroup v2 a group may
hand controllers to its children only while it holds no process itself; under systemd or in a
container the grader's own group holds the grader, so the grader first moves every process of
its group into a leaf child (`cs349e-graders`), then enables the controllers (the "leaf
pattern"). Where no cgroup can be written (read-only /sys/fs/cgroup, no delegation), `support()`
says why (cgroup_scope.py: what the grader lacks then, and how to get it) and the sandbox falls back to per-process rlimits and a small process limit;
`Sandbox.quotas` records which one applied, and every result says so.
"""

from __future__ import annotations

import errno
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from .clock import SEES_EXITED, schedstat, tree_meter
from .limits import Limits

_V1_CONTROLLERS = ("cpu", "cpuacct", "memory", "pids")
_V2_CONTROLLERS = ("cpu", "memory", "pids")
_CFS_PERIOD_US = 100_000
# Tasks a sandbox runs besides the student's: bubblewrap's monitor and its pid 1.
_OVERHEAD_TASKS = 4
# Moves the shell into every group named before "--", then becomes the command after it.
_ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


class _V2Files:
    """The unified hierarchy: one group holds every controller."""

    unified = True
    threads = "cgroup.threads"
    peak = "memory.peak"

    @staticmethod
    def configure(dirs: dict[str, Path], limits: Limits, quota: str, pids: str) -> None:
        group = dirs["memory"]
        _write(group / "memory.max", str(limits.memory_bytes))
        _write(group / "memory.swap.max", "0", optional=True)
        _write(group / "pids.max", pids)
        _write(group / "cpu.max", f"{quota} {_CFS_PERIOD_US}")

    @staticmethod
    def cpu_seconds(dirs: dict[str, Path]) -> float | None:
        for line in (dirs["cpu"] / "cpu.stat").read_text().splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
        return None

    @staticmethod
    def kill_at_once(dirs: dict[str, Path]) -> bool:
        return _write(dirs["memory"] / "cgroup.kill", "1", optional=True)


class _V1Files:
    """One hierarchy per controller (cpu, cpuacct, memory, pids)."""

    unified = False
    threads = "tasks"
    peak = "memory.max_usage_in_bytes"

    @staticmethod
    def configure(dirs: dict[str, Path], limits: Limits, quota: str, pids: str) -> None:
        _write(dirs["memory"] / "memory.limit_in_bytes", str(limits.memory_bytes))
        _write(dirs["memory"] / "memory.memsw.limit_in_bytes", str(limits.memory_bytes), optional=True)
        _write(dirs["pids"] / "pids.max", pids)
        _write(dirs["cpu"] / "cpu.cfs_period_us", str(_CFS_PERIOD_US))
        _write(dirs["cpu"] / "cpu.cfs_quota_us", quota)

    @staticmethod
    def cpu_seconds(dirs: dict[str, Path]) -> float | None:
        return int((dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9

    @staticmethod
    def kill_at_once(dirs: dict[str, Path]) -> bool:
        return False   # no cgroup.kill: every process is killed by pid


@dataclass(frozen=True)
class _Layout:
    files: type   # _V1Files or _V2Files
    bases: dict[str, Path]   # controller -> the grader's own group in its hierarchy


class SandboxCgroup:
    """One sandbox's group: created with the sandbox's limits, removed with it."""

    bounded = True

    def __init__(self, layout: _Layout, limits: Limits):
        self._layout = layout
        name = f"cs349e-{os.getpid()}-{secrets.token_hex(4)}"
        self.dirs: dict[str, Path] = {}
        try:
            for controller, base in layout.bases.items():
                path = base / name
                if path not in self.dirs.values():
                    path.mkdir()
                self.dirs[controller] = path
            self._configure(limits)
        except BaseException:
            self.remove()
            raise

    def _configure(self, limits: Limits) -> None:
        quota = str(max(1000, int(limits.cpu_share * _CFS_PERIOD_US)))
        pids = str(limits.max_processes + _OVERHEAD_TASKS)
        self._layout.files.configure(self.dirs, limits, quota, pids)

    def prefix(self) -> tuple[str, ...]:
        """Command-line prefix: the started process joins the group, then execs the command."""
        return ("/bin/sh", "-c", _ENTER, "cs349e-cgroup", *self.procs_files(), "--")

    def procs_files(self) -> list[str]:
        """Where a process writes its pid to join the group (one file per v1 hierarchy)."""
        return sorted({str(d / "cgroup.procs") for d in self.dirs.values()})

    def cpu_seconds(self) -> float | None:
        """CPU time of every process the sandbox ever ran (dead ones included)."""
        try:
            return self._layout.files.cpu_seconds(self.dirs)
        except (OSError, ValueError):
            return None

    def tasks(self) -> list[int]:
        try:
            return [int(t) for t in (self.dirs["cpu"] / self._layout.files.threads).read_text().split()]
        except (OSError, ValueError):
            return []

    def meter(self, pid: int | None = None):
        """(CPU seconds, run-queue wait seconds) of the sandbox, for clock.Budget (every process
        of the group, whichever is the worker `pid`)."""
        def sample():
            cpu = self.cpu_seconds()
            if cpu is None:
                return None
            return (cpu, *schedstat(self.tasks())[1:])
        setattr(sample, SEES_EXITED, True)   # the group's CPU time counts its dead processes too
        return sample

    def peak_memory_bytes(self) -> int | None:
        try:
            return int((self.dirs["memory"] / self._layout.files.peak).read_text())
        except (OSError, ValueError):
            return None

    def kill(self) -> None:
        """SIGKILL every process in the group (also those that left the worker's session)."""
        if self._layout.files.kill_at_once(self.dirs):
            return
        for _ in range(50):
            pids = set()
            for path in set(self.dirs.values()):
                try:
                    pids |= {int(p) for p in (path / "cgroup.procs").read_text().split()}
                except (OSError, ValueError):
                    pass
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.002)

    def remove(self) -> None:
        """Kills what is left and removes the group (retrying while killed tasks exit)."""
        self.kill()
        for path in sorted(set(self.dirs.values()), reverse=True):
            for _ in range(200):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        break
                    time.sleep(0.005)
        self.dirs = {}


class _NoGroup:
    """The group of a sandbox without one (NoQuota): rlimits cap each process instead, and the
    worker's process tree is all that can be measured."""

    bounded = False
    dirs: dict[str, Path] = {}

    def prefix(self) -> tuple[str, ...]:
        return ()

    def procs_files(self) -> list[str]:
        return []

    def cpu_seconds(self) -> float | None:
        return None

    def tasks(self) -> list[int]:
        return []

    def meter(self, pid: int | None = None):
        return tree_meter(pid)

    def peak_memory_bytes(self) -> int | None:
        return None

    def kill(self) -> None:
        pass

    def remove(self) -> None:
        pass


NO_GROUP = _NoGroup()


def create(limits: Limits) -> SandboxCgroup | None:
    """A group for one sandbox in this process's layout, or None where cgroups cannot be used
    (see `support`) or this group could not be made."""
    layout = _layout()
    if isinstance(layout, str):
        return None
    try:
        return SandboxCgroup(layout, limits)
    except OSError:
        return None


def support() -> str | None:
    """None when sandboxes get a cgroup each, else why not (one line)."""
    layout = _layout()
    return layout if isinstance(layout, str) else None


@functools.cache
def _layout() -> _Layout | str:
    """Where this process may create sandbox groups, or why it cannot. Probed once per process
    by creating (and removing) a group with every limit set."""
    try:
        mounts = _mounts()
        own = _own_groups()
    except OSError as exc:
        return f"cannot read /proc: {exc.strerror}"
    layout = _v2_layout(mounts, own) or _v1_layout(mounts, own)
    if layout is None:
        return "no writable cgroup hierarchy with the cpu, memory and pids controllers"
    _sweep(layout)
    try:
        SandboxCgroup(layout, Limits()).remove()
    except OSError as exc:
        return f"cannot create a cgroup below {next(iter(layout.bases.values()))}: {exc.strerror or exc}"
    return layout


probe_layout = _layout


def _sweep(layout: _Layout) -> None:
    """Removes empty groups left by graders that died before closing their sandboxes."""
    for base in set(layout.bases.values()):
        try:
            entries = list(base.glob("cs349e-*-*"))
        except OSError:
            continue
        for path in entries:
            try:
                pid = int(path.name.split("-")[1])
                os.kill(pid, 0)
                continue   # its grader still runs
            except ProcessLookupError:
                pass
            except (ValueError, OSError):
                continue
            try:
                path.rmdir()   # fails while a process is still inside: then it stays
            except OSError:
                pass


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root inside the hierarchy, fs type, super options) of cgroup mounts."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[4], fields[3], tail[0], set(tail[2].split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """controller (or "" for v2) -> this process's group path."""
    groups = {}
    with open("/proc/self/cgroup", encoding="utf-8") as handle:
        for line in handle:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                groups[controller] = path
    return groups


def _inside(mount: str, root: str, path: str) -> Path | None:
    if not (path == root or path.startswith(root.rstrip("/") + "/")):
        return None
    return Path(mount) / path[len(root.rstrip("/")):].lstrip("/")


def _v2_layout(mounts, own) -> _Layout | None:
    if "" not in own:
        return None
    for mount, root, fstype, _ in mounts:
        if fstype != "cgroup2":
            continue
        base = _inside(mount, root, own[""])
        if base is None:
            continue
        if base.name == LEAF:   # an earlier grader moved this process there: its group is the parent
            base = base.parent
        try:
            available = set((base / "cgroup.controllers").read_text().split())
            if not set(_V2_CONTROLLERS) <= available:
                continue
            _enable_v2_controllers(base)
        except OSError:
            continue
        return _Layout(_V2Files, {c: base for c in _V2_CONTROLLERS})
    return None


LEAF = "cs349e-graders"   # where the grader's processes go so its group can hand down controllers


def _enable_v2_controllers(base: Path) -> None:
    """Enables the controllers for the groups below `base`, the grader's own group.

    The kernel refuses (EBUSY) while `base` itself holds processes ("no internal processes"), as
    it does under systemd (a scope or service holds the grader) and in a container's cgroup
    namespace (its root group holds every process of the container): those processes, the grader
    among them, move into the leaf child LEAF first (a few rounds: a process may fork meanwhile)."""
    for _ in range(20):
        enabled = set((base / "cgroup.subtree_control").read_text().split())
        missing = [c for c in _V2_CONTROLLERS if c not in enabled]
        if not missing:
            return
        try:
            _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
        _move_processes(base, base / LEAF)
    raise OSError(errno.EBUSY, f"{base} keeps holding processes")


def _move_processes(source: Path, leaf: Path) -> None:
    leaf.mkdir(exist_ok=True)
    for pid in (source / "cgroup.procs").read_text().split():
        try:
            _write(leaf / "cgroup.procs", pid)
        except ProcessLookupError:
            pass   # it ended meanwhile


def _v1_layout(mounts, own) -> _Layout | None:
    bases = {}
    for controller in _V1_CONTROLLERS:
        for mount, root, fstype, options in mounts:
            if fstype == "cgroup" and controller in options and controller in own:
                base = _inside(mount, root, own[controller])
                if base is not None and os.access(base, os.W_OK):
                    bases[controller] = base
                    break
        if controller not in bases:
            return None
    return _Layout(_V1Files, bases)


def _write(path: Path, value: str, optional: bool = False) -> bool:
    try:
        with open(path, "w", encoding="ascii") as handle:
            handle.write(value)
        return True
    except OSError:
        if optional:
            return False
        raise
