"""Watch a process and all its descendants from /proc while it runs.

A background thread samples every `interval` seconds:
- the memory of the whole tree, peak kept: the plain sum of resident sets (counts pages that
  forked processes share once per process: an upper bound) and the sum of proportional set
  sizes (shared pages split fairly);
- the CPU time of every process at its last sample (a process's final `interval` is missed;
  unlike RUSAGE_CHILDREN this includes processes killed and reaped outside the tree);
- the most threads one grader process and one sandboxed worker had, and how many workers ran
  at once;
- every distinct bubblewrap start (bwrap forks an init for the new pid namespace: only the
  outer bwrap counts): a sandbox when it binds a submission, otherwise a probe of whether
  bubblewrap works here.
Linux only.
"""

import os
import resource
import threading
from dataclasses import dataclass, field
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            kids += [int(k) for k in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except OSError:
        pass
    return kids


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it, breadth first."""
    seen, queue = [], [pid]
    while queue:
        current = queue.pop(0)
        seen.append(current)
        queue += _children(current)
    return seen


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _rss_bytes(pid: int) -> int:
    parts = _read(f"/proc/{pid}/statm").split()
    return int(parts[1]) * PAGE if len(parts) > 1 else 0


def _pss_bytes(pid: int) -> int:
    for line in _read(f"/proc/{pid}/smaps_rollup").splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def _stat(pid: int) -> tuple[int, float, int]:
    """(parent pid, user + system CPU seconds, start time in ticks since boot) from /proc/<pid>/stat."""
    stat = _read(f"/proc/{pid}/stat")
    fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) "
    if len(fields) < 20:
        return 0, 0.0, 0
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS, int(fields[19])


def _threads_and_name(pid: int) -> tuple[int, str]:
    fields = dict(line.split(":\t", 1) for line in _read(f"/proc/{pid}/status").splitlines() if ":\t" in line)
    return int(fields.get("Threads", "0")), fields.get("Name", "").strip()


def _cmdline(pid: int) -> str:
    return _read(f"/proc/{pid}/cmdline").replace("\0", " ")


@dataclass
class TreeStats:
    samples: int = 0
    peak_rss_bytes: int = 0
    peak_pss_bytes: int = 0
    peak_processes: int = 0
    max_threads_trusted: int = 0  # the grader's own processes (parent and its -j workers)
    max_threads_sandboxed: int = 0  # student workers
    peak_concurrent_workers: int = 0  # includes a worker's forked notebook child
    sandbox_starts: set = field(default_factory=set)  # bwrap pids binding a submission
    probe_starts: set = field(default_factory=set)  # bwrap pids binding none
    cpu_by_process: dict = field(default_factory=dict)  # (pid, start tick) -> (kind, CPU seconds)

    @property
    def cpu_seconds(self) -> float:
        return sum(cpu for _, cpu in self.cpu_by_process.values())

    def cpu_seconds_of(self, kind: str) -> float:
        """CPU of one kind of process: "grader", "sandboxed" or "other" (bwrap itself, tools)."""
        return sum(cpu for k, cpu in self.cpu_by_process.values() if k == kind)


class TreeSampler:
    """`with TreeSampler(proc.pid) as sampler: proc.wait()`, then read `sampler.stats`."""

    def __init__(self, pid: int, interval: float = 0.1):
        self.pid, self.interval = pid, interval
        self.stats = TreeStats()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def _sample(self) -> None:
        stats = self.stats
        pids = descendants(self.pid)
        stats.samples += 1
        stats.peak_processes = max(stats.peak_processes, len(pids))
        stats.peak_rss_bytes = max(stats.peak_rss_bytes, sum(_rss_bytes(p) for p in pids))
        stats.peak_pss_bytes = max(stats.peak_pss_bytes, sum(_pss_bytes(p) for p in pids))
        workers = 0
        names = {pid: _threads_and_name(pid) for pid in pids}
        for pid in pids:
            ppid, cpu, start = _stat(pid)
            threads, name = names[pid]
            cmd = _cmdline(pid)
            kind = "other"
            if name == "bwrap" and names.get(ppid, (0, ""))[1] != "bwrap":
                (stats.sandbox_starts if " /submission" in cmd else stats.probe_starts).add((pid, start))
            elif "worker.py" in cmd:
                kind = "sandboxed"
                workers += 1
                stats.max_threads_sandboxed = max(stats.max_threads_sandboxed, threads)
            elif name.startswith("python"):
                kind = "grader"
                stats.max_threads_trusted = max(stats.max_threads_trusted, threads)
            stats.cpu_by_process[pid, start] = (kind, cpu)
        stats.peak_concurrent_workers = max(stats.peak_concurrent_workers, workers)


def cpu_seconds_of_children() -> float:
    """User + system CPU of every waited-for descendant so far (RUSAGE_CHILDREN)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def peak_child_rss_bytes() -> int:
    """The largest resident set of any single waited-for descendant (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
