"""How much a uid-fallback sandbox may write, and the watchdog that holds it there where no capped
tmpfs can (a container: no mount namespace).

Under bubblewrap the only writable places are tmpfs of `Limits.file_bytes`. The uid fallback's
writable copy of the submission and its HOME sit in the grader's temporary folder, on its disk,
where RLIMIT_FSIZE caps each file but not how many. Its budget is bubblewrap's: `file_bytes` in
all, and BUDGET_ENTRIES new files and folders. Where the worker can make a mount namespace it puts
its folder on a tmpfs of that size itself (private_disk.py). Elsewhere a thread of the grader
measures, every SAMPLE_SECONDS, what the sandbox's uid has written: its folder beyond what the
grader put there, its files and folders in the shared scratch folders (/tmp, /dev/shm...) and the
machine's other world-writable folders (leftovers.py), and the files its processes hold open
after deleting them; past the budget it ends every process of
the uid and keeps why, for the request that was running and every later one. A writer can add
what it writes between two readings (stated in docs/sandbox.md); the files go at close as before.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from pathlib import Path

from . import reaper
from .limits import Limits
from .open_files import deleted_but_open
from .workdir import MAX_ENTRIES

BUDGET_ENTRIES = MAX_ENTRIES   # new files and folders: as many as a whole submission may hold
SAMPLE_SECONDS = 0.5           # as often as the sandbox's meters read a running notebook
# Between readings the free space of the disks measured is looked at (one statvfs each, a few
# microseconds): a drop larger than what is left of the budget brings the next reading forward,
# so a fast writer is seen within POLL_SECONDS instead of SAMPLE_SECONDS.
POLL_SECONDS = 0.01
# How each sandbox's writes were capped, as results record it.
TMPFS, WATCHDOG = "tmpfs", "watchdog"


def budget_bytes(limits: Limits) -> int:
    """What one sandbox may write in all: as much as bubblewrap's one writable tmpfs holds."""
    return limits.file_bytes


def tmpfs_spec(folder: Path, limits: Limits) -> dict:
    """What the worker's lockdown needs to put `folder` on a tmpfs of the budget (private_disk.py);
    a few inodes more than the budget for the overlay's own folders and the copied-up parents."""
    return {"folder": os.path.realpath(folder), "bytes": budget_bytes(limits), "entries": BUDGET_ENTRIES + 16}


def overrun_text(limits: Limits, written: int, entries: int) -> str:
    """Why the sandbox was stopped, in the students' language."""
    if entries > BUDGET_ENTRIES:
        return f"写入的文件和文件夹超过 {BUDGET_ENTRIES} 个（沙箱的写入上限），代码被停止"
    return f"写入的文件超过 {budget_bytes(limits) / 1024**2:g} MB（沙箱的写入上限），代码被停止"


HIDDEN_TEXT = ("代码里有进程把自己设成了不可转储（PR_SET_DUMPABLE），评分程序无法计量它打开的文件占了多少磁盘，"
               "代码被停止")


class DiskWatch:
    """One sandbox's watchdog thread: started once a worker says its folder is not on a capped
    tmpfs, stopped at close. `overrun` is None, or why the uid's processes were ended for what the
    student wrote; `unmeasured` is None, or why a reading failed (its processes were ended too:
    writes nobody measures are not allowed to go on, but the failure is the grader's)."""

    def __init__(self, root: Path, uid: int, limits: Limits, shared: tuple[str, ...]):
        self.root, self.uid, self.limits, self.shared = root, uid, limits, shared
        self.overrun: str | None = None
        self.unmeasured: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_bytes = self._start_entries = 0
        self._left = budget_bytes(limits)   # of the budget at the last reading
        self._devices: dict[int, str] = {}  # a folder on each disk measured
        self._last_free: list[int] = []     # their free bytes at the last reading
        self._root_id = (-1, -1)            # the sandbox's folder (device, inode)
        self._hidden: set[int] = set()      # processes whose open files were closed to the last reading
        self._hidden_since: dict[int, float] = {}

    def start(self) -> None:
        if self._thread is not None:
            return
        # what the grader put there (the copy, the worker's files, the font cache) is not the student's
        self._start_bytes, self._start_entries = _tree(str(self.root), None, sys.maxsize)
        root = os.stat(self.root)
        self._root_id = (root.st_dev, root.st_ino)
        for folder in (str(self.root), *self.shared):
            try:
                self._devices.setdefault(os.stat(folder).st_dev, folder)
            except OSError:
                pass
        self._last_free = self._free()
        self._thread = threading.Thread(target=self._watch, name=f"disk-watch-{self.uid}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    @property
    def stopped(self) -> bool:
        """Has the watchdog ended the sandbox for good (for the student's writes or its own failure)?"""
        return self.overrun is not None or self.unmeasured is not None

    def check(self) -> bool:
        """Measures once; past the budget, ends the uid's processes. Whether it is over."""
        if self.overrun is None:
            written, entries = self.written()
            self._left = budget_bytes(self.limits) - written
            if written > budget_bytes(self.limits) or entries > BUDGET_ENTRIES:
                self.overrun = overrun_text(self.limits, written, entries)
                print(f"WARNING: sandbox uid {self.uid} stopped: it wrote {written} bytes in {entries} new "
                      f"entries, past its budget", file=sys.stderr, flush=True)
            elif hiding := self._hiding_since_a_reading_ago():
                self.overrun = HIDDEN_TEXT
                print(f"WARNING: sandbox uid {self.uid} stopped: its process(es) {sorted(hiding)} closed their "
                      f"open files to the grader (non-dumpable, and no CAP_SYS_PTRACE here)", file=sys.stderr, flush=True)
        if self.overrun is not None:
            reaper.kill_uid(self.uid)   # again at each reading: a worker started since goes too
        return self.overrun is not None

    def written(self) -> tuple[int, int]:
        """(bytes, entries) the sandbox's uid added to the disk so far, each reading cut short once
        past the budget (so one costs at most the budget's entries to walk)."""
        most = BUDGET_ENTRIES + self._start_entries + 1
        size, entries = _tree(str(self.root), None, most)
        size, entries = size - self._start_bytes, entries - self._start_entries
        for folder in self.shared:
            if entries > BUDGET_ENTRIES:
                break
            # the sandbox's own folder may lie in one (TMPDIR=/tmp): measured above already
            more_size, more = _tree(folder, self.uid, BUDGET_ENTRIES - entries + 1, skip=self._root_id)
            size, entries = size + more_size, entries + more
        held, self._hidden = deleted_but_open(self.uid, set(self._devices))
        return size + held, entries

    def _hiding_since_a_reading_ago(self) -> set[int]:
        """The processes whose open files were closed to the grader at this reading and SAMPLE_SECONDS
        ago or more: a worker is closed for the moment between its uid switch and its prctl."""
        now = time.monotonic()
        self._hidden_since = {pid: self._hidden_since.get(pid, now) for pid in self._hidden}
        return {pid for pid, since in self._hidden_since.items() if now - since >= SAMPLE_SECONDS}

    def _free(self) -> list[int]:
        """Free bytes on each disk measured."""
        free = []
        for folder in self._devices.values():
            try:
                info = os.statvfs(folder)
            except OSError:
                continue
            free.append(info.f_bavail * info.f_frsize)
        return free

    def _filling(self) -> bool:
        """Has a disk measured lost more free space since the last reading than the budget has left?"""
        return any(before - now > self._left for now, before in zip(self._free(), self._last_free))

    def _watch(self) -> None:
        due = time.monotonic()
        while not self._stop.wait(POLL_SECONDS):
            if time.monotonic() < due and (self.stopped or not self._filling()):
                continue
            try:
                if self.unmeasured is None:
                    self.check()
                else:
                    reaper.kill_uid(self.uid)   # again at each reading: a worker started since goes too
            except Exception as exc:   # never silently unwatched: the sandbox stops instead
                self.unmeasured = f"the grader could not measure what sandbox uid {self.uid} wrote ({exc})"
                print(f"WARNING: sandbox uid {self.uid} stopped: its writes could not be measured ({exc})",
                      file=sys.stderr, flush=True)
                reaper.kill_uid(self.uid)
            due, self._last_free = time.monotonic() + SAMPLE_SECONDS, self._free()


def _tree(top: str, owner: int | None, most: int, skip: tuple[int, int] = (-1, -1)) -> tuple[int, int]:
    """(bytes on disk, entries) below `top`, links not followed, no recursion; with `owner`, only
    what that uid owns and what is below its folders (the shared scratch folders hold others'),
    never the folder `skip` (device, inode). Stops counting past `most` entries."""
    size = entries = 0
    stack = [top]
    while stack and entries < most:
        try:
            listing = os.scandir(stack.pop())
        except OSError:   # gone meanwhile, or not a folder
            continue
        with listing:
            for entry in listing:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if (owner is not None and info.st_uid != owner) or (info.st_dev, info.st_ino) == skip:
                    continue
                size += info.st_blocks * 512
                entries += 1
                if stat.S_ISDIR(info.st_mode):
                    stack.append(entry.path)
    return size, entries
