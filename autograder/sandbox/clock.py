"""Whose time is it? Timeouts that decide a score count the student's own CPU time.

A request gets `seconds` of CPU time (all processes of its sandbox together). Wall-clock time is
only an outer guard. When a request runs past `seconds` of wall time the parent looks at the
sandbox's scheduler statistics (/proc/<tid>/schedstat: time on a CPU, time waiting for one):

- CPU time used >= seconds                 -> "cpu": the student's code is too slow (charged)
- on a CPU or waiting for one < half the
  wall time, and none of its tasks is
  runnable at three readings in a row      -> "blocked": it sleeps or waits on I/O (charged)
- otherwise it was starved by load: keep waiting, up to GUARD_FACTOR × seconds of wall time,
  then "load" (not the student's fault: the caller retries instead of charging it), if it was
  runnable at half the readings taken at random times meanwhile (else "blocked")
- the submission's wall-clock ceiling       -> "deadline" (charged: the whole budget is spent)
"""

from __future__ import annotations

import functools
import math
import os
import secrets
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from .outcomes import TimeoutCause

GUARD_FACTOR = 10.0   # a machine 10× oversubscribed still finishes honest work
ACTIVE_SHARE = 0.5   # below this share of wall time on (or queued for) a CPU, the code is blocked
BASE_DELAY = 0.05    # seconds into a request before the meter is first read
# A running request's meter is also read at random times this far apart (readings that only
# record, never judge): a submission cannot time its crowd (`crowded`), nor its moments on a CPU,
# around readings it cannot foresee. The guard's "load" needs it runnable at half of them.
PEEK_SECONDS = (0.05, 0.3)
MIN_PEEKS = 5   # fewer say nothing
# 'blocked' rests on no task being runnable at one moment, and listing a sandbox's processes races
# their exits (the parent read asleep in waitpid, its child gone before its own line was read):
# that many readings in a row, this far apart, must agree.
QUIET_READINGS = 3
QUIET_GAP = 0.02
_random = secrets.SystemRandom()

# () -> (cpu seconds, run-queue wait seconds, some task runnable now, some task below the grader's
# priority now or before: `_lowered`, or, without a cgroup, crowding its own CPUs: `crowded`). A
# task's wait is added to its schedstat only when it next runs: one that a busy machine keeps from
# running at all shows no wait, only its state ("R").
Meter = Callable[[], "tuple[float, float, bool, bool] | None"]
# A meter's attribute: True where its CPU time counts the processes that exited too (a cgroup's).
# Without it, the guard's "load" needs the time seen on a CPU or waiting for one: a call that
# forked child after child, each spinning 0.1 s and gone before the next reading (SIGCHLD
# ignored: not even the parent's cutime keeps their time), was always runnable with next to no
# CPU time, 'machine overloaded' on every run, never graded.
SEES_EXITED = "sees_exited"


@dataclass(frozen=True)
class Usage:
    """What a Sandbox's requests took so far (Sandbox.usage)."""
    wall: float     # seconds requests took
    cpu: float      # CPU seconds the sandbox used meanwhile
    active: float   # CPU seconds plus seconds its tasks waited for a CPU


class Budget:
    """The time one request may take; `check` decides, when a wake-up time is reached, whether it
    is over and why. The meter is first read BASE_DELAY seconds in (most calls are over by then
    and cost no reading); those first seconds count as CPU time."""

    def __init__(self, seconds: float, meter: Meter | None, ceiling: float):
        self.seconds = seconds
        self.ceiling = ceiling
        self._meter = meter
        self._sees_exited = bool(getattr(meter, SEES_EXITED, False))
        self.lowered = False
        self.start = time.monotonic()
        self.guard = self.start + seconds * GUARD_FACTOR
        self._base: tuple[float, float] | None = None
        self._head = 0.0   # seconds before the base reading, counted as CPU time
        first = self.start + (min(BASE_DELAY, seconds) if meter else seconds)
        self._wake = min(first, ceiling)
        self._peek_at = first if meter else math.inf
        self._peeks = self._runnable_peeks = 0
        self._quiet = 0   # readings in a row that found it idle and no task runnable

    def wake_at(self) -> float:
        return min(self._wake, self._peek_at)

    def check(self, now: float) -> TimeoutCause | None:
        """None (and a later wake-up time) while the request may go on, else why it must stop."""
        if now >= self._peek_at:
            self._peek_at = now + _random.uniform(*PEEK_SECONDS)
            if now < self._wake:
                sample = self._meter()   # also recorded by its PriorityWatch (lowered, crowded)
                if sample is not None:
                    self._peeks += 1
                    self._runnable_peeks += bool(sample[2])
                return None
        if now >= self.ceiling:
            return TimeoutCause.DEADLINE
        elapsed = now - self.start
        sample = self._meter() if self._meter else None
        if sample is None:   # nothing to tell load from slowness: wall time counts
            return TimeoutCause.CPU if elapsed >= self.seconds else self._later(self.start + self.seconds)
        if self._base is None:
            self._base, self._head = sample, elapsed
            return self._later(self.start + self.seconds)
        cpu = sample[0] - self._base[0] + self._head
        waited = sample[1] - self._base[1]
        if cpu >= self.seconds:
            return TimeoutCause.CPU
        if (cpu - self._head) + waited < ACTIVE_SHARE * (elapsed - self._head) and not sample[2]:
            self._quiet += 1
            if self._quiet >= QUIET_READINGS:
                return TimeoutCause.BLOCKED
            return self._later(now + QUIET_GAP)
        self._quiet = 0
        self.lowered = self.lowered or (len(sample) > 3 and bool(sample[3]))
        if now >= self.guard:
            if self.lowered:   # the sandbox lowered its own priority: the wait is its own doing
                return TimeoutCause.CPU
            if self._peeks >= MIN_PEEKS and self._runnable_peeks < ACTIVE_SHARE * self._peeks:
                # runnable only when judged: asleep at the readings it could not foresee
                return TimeoutCause.BLOCKED
            seen = (cpu - self._head) + waited >= ACTIVE_SHARE * (elapsed - self._head)
            # time no reading saw went to the sandbox's own processes that exited (see SEES_EXITED)
            return TimeoutCause.LOAD if self._sees_exited or seen else TimeoutCause.CPU
        return self._later(now + max(self.seconds - cpu, 0.05))

    def _later(self, when: float) -> None:
        self._wake = min(when, self.guard, self.ceiling)
        return None


class SampledBudget(Budget):
    """A Budget that also reads the meter every `every` seconds, keeping the most run-queue wait
    the sandbox's live tasks showed: how long a notebook, run in a child process whose own count
    is gone once it exits, was kept from a CPU. Its judgments are Budget's, at Budget's times."""

    def __init__(self, seconds: float, meter: Meter | None, ceiling: float, every: float):
        first = meter() if meter else None
        self.first_wait = self.most_wait = first[1] if first else None

        def recording():
            sample = meter()
            if sample is not None and self.most_wait is not None:
                self.most_wait = max(self.most_wait, sample[1])
            return sample

        setattr(recording, SEES_EXITED, getattr(meter, SEES_EXITED, False))
        super().__init__(seconds, recording if meter else None, ceiling)
        self._peek_at = math.inf   # its own readings, every `every` seconds, record instead
        self._every = every
        self._due = self._wake               # when Budget itself judges next
        self._wake = min(self._due, self.start + every)

    def check(self, now: float) -> TimeoutCause | None:
        if now < self._due:
            self._meter()
            self._wake = min(self._due, now + self._every)
            return None
        cause = super().check(now)
        if cause is None:
            self._due = self._wake
            self._wake = min(self._due, now + self._every)
        return cause

    def waited(self) -> float | None:
        """Seconds the sandbox's tasks waited for a CPU so far (at the last reading); None
        without a meter."""
        if self.first_wait is None:
            return None
        self._meter()
        return max(self.most_wait - self.first_wait, 0.0)


class PriorityWatch:
    """One Sandbox's meters, whose readings also say whether the sandbox was ever seen below the
    grader's priority (`_lowered`): sticky for the Sandbox's life, as a student may lower it for
    one call and raise it back. Such a sandbox is never starved by the machine."""

    def __init__(self):
        self.lowered = False

    def watch(self, meter: Meter) -> Meter:
        def reading():
            sample = meter()
            if sample is None:
                return None
            self.lowered = self.lowered or (len(sample) > 3 and bool(sample[3]))
            return (*sample[:3], self.lowered)
        setattr(reading, SEES_EXITED, getattr(meter, SEES_EXITED, False))
        return reading


def schedstat(tids: Iterable[int]) -> tuple[float, float, bool, bool]:
    """(seconds on a CPU, seconds waiting in a run queue, is one of them runnable now, does one
    of them run at a lower priority than the grader's own: see `lowered`) over live tasks `tids`."""
    cpu = waited = 0
    runnable = lowered = False
    for tid in tids:
        try:
            with open(f"/proc/{tid}/schedstat", "rb") as handle:
                fields = handle.read().split()
            cpu += int(fields[0])
            waited += int(fields[1])
            with open(f"/proc/{tid}/stat", "rb") as handle:
                stat = handle.read().rpartition(b")")[2].split()
            runnable = runnable or stat[0] == b"R"
            lowered = lowered or _lowered(tid, stat)
        except (OSError, ValueError, IndexError):
            pass
    return cpu / 1e9, waited / 1e9, runnable, lowered


_SCHED_BATCH, _SCHED_IDLE = 3, 5


def _lowered(tid: int, stat: list[bytes]) -> bool:
    """Whether task `tid` (its /proc stat fields after the name) runs below the grader's priority:
    a higher nice, SCHED_BATCH or SCHED_IDLE, or its session's autogroup at a positive nice. The
    sandbox's filter refuses the calls that set the first two (lockdown.py); the third is a write
    to /proc/self/autogroup, which a process that made itself dumpable again (or any it execs)
    may do: at nice 19 its session got 15/1039 of a CPU beside an ordinary process, and honest
    work looked starved ('machine overloaded' on every run) where the sandbox has no cgroup."""
    nice, policy = int(stat[16]), int(stat[38])
    own_nice, own_policy = _grader_priority()
    if nice > own_nice or (policy in (_SCHED_BATCH, _SCHED_IDLE) and policy != own_policy):
        return True
    try:
        with open(f"/proc/{tid}/autogroup", "rb") as handle:
            words = handle.read().split()
    except OSError:
        return False   # no autogroups in this kernel
    return len(words) == 3 and words[1] == b"nice" and int(words[2]) > 0


@functools.cache
def _grader_priority() -> tuple[int, int]:
    """(nice, scheduling policy) of the grader, which its sandboxes start with."""
    return os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)


def uid_processes(uid: int) -> list[int]:
    """Every process whose real, effective or saved uid is `uid`: the uid fallback's sandbox,
    wherever its processes went (reaper.py ends them by the same rule)."""
    found, wanted = [], str(uid).encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as handle:
                uids = next((line.split()[1:4] for line in handle if line.startswith(b"Uid:")), [])
        except OSError:
            continue
        if wanted in uids:
            found.append(int(name))
    return found


def tree_processes(pid: int) -> list[int]:
    """`pid` and its descendants (processes that left the tree are lost)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        try:
            threads = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        found.append(current)
        for tid in threads:
            try:
                with open(f"/proc/{current}/task/{tid}/children", "rb") as handle:
                    queue += [int(child) for child in handle.read().split()]
            except (OSError, ValueError):
                pass
    return found


def tree_tasks(pid: int) -> list[int]:
    """Every thread of `pid` and of its descendants (processes that left the tree are lost)."""
    return _threads(tree_processes(pid))


def _threads(pids: Iterable[int]) -> list[int]:
    tasks = []
    for pid in pids:
        try:
            tasks += [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
        except (OSError, ValueError):
            pass
    return tasks


def group_cpu(pids: Iterable[int]) -> float:
    """CPU seconds of processes `pids`: each one's threads, the dead ones too, and its children
    it waited for (/proc/<pid>/stat utime, stime, cutime, cstime). Summing its live threads' own
    counts lost every thread that had ended: a call whose threads (hashing, which releases the
    GIL) each lived 0.3 s crowded itself off its CPU with next to no CPU time seen, 'load'."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
            ticks += sum(int(field) for field in fields[11:15])
        except (OSError, ValueError):
            pass
    return ticks / _TICKS


_TICKS = os.sysconf("SC_CLK_TCK")


def crowded(tids: Iterable[int]) -> bool:
    """Are more of tasks `tids` runnable now than there are CPUs they may run on? Then their wait
    for a CPU is their own doing. Without a cgroup a child reaped unwaited for (SIGCHLD ignored)
    takes its CPU time with it: a call spinning beside 22 such children, each started when one
    ended, had 0.2 s of CPU time seen in 5 s and waited the rest, 'load' on every run."""
    runnable, cpus = 0, set()
    for tid in tids:
        try:
            with open(f"/proc/{tid}/stat", "rb") as handle:
                if handle.read().rpartition(b")")[2].split()[:1] != [b"R"]:
                    continue
            cpus |= os.sched_getaffinity(tid)
            runnable += 1
        except OSError:
            pass
    return runnable > len(cpus)


def process_meter(processes: Callable[[], list[int]]) -> Meter:
    """A meter over the processes `processes()` lists now, for machines without a usable cgroup.
    A process that exited unwaited for took its CPU time with it (SEES_EXITED); a sandbox seen
    `crowded` counts as lowered (its wait is its own: never 'load')."""
    def sample():
        pids = processes()
        tasks = _threads(pids)
        _cpu, waited, runnable, lowered = schedstat(tasks)
        return group_cpu(pids), waited, runnable, lowered or crowded(tasks)
    setattr(sample, SEES_EXITED, False)
    return sample


def tree_meter(pid: int) -> Meter:
    """A meter over a process tree."""
    return process_meter(lambda: tree_processes(pid))


def uid_meter(pid: int, uid: int) -> Meter:
    """A meter over the worker's tree and every process of the sandbox's own uid, for the uid
    fallback without a cgroup. Its tree alone missed a double-forked daemon (no pid namespace:
    it goes to the host's init): a call spinning beside a dozen of them waited for a CPU the
    whole time with little CPU time of its own, 'load' on every run, never graded."""
    return process_meter(lambda: sorted(set(tree_processes(pid)) | set(uid_processes(uid))))
