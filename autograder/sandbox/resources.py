"""What one Sandbox holds that must be released even if it is never closed (weakref.finalize in
session.py): its worker, its cgroup, its host uid (with what that uid left behind), its CPUs and
its private folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import cgroups, disk_budget, leftovers, placement, reaper
from .limits import Limits
from .outcomes import SandboxError
from .uids import release_uid, retire_uid
from .process import WorkerProcess
from .workdir import remove_tree


class SandboxResources:
    """What must be released even if the Sandbox is never closed (see weakref.finalize)."""

    def __init__(self, root: Path):
        self.root = root
        self.worker: WorkerProcess | None = None
        self.uid: int | None = None   # claimed host uid, given back once the worker is dead
        self.sweep_uid = False        # its files are removed first (a backend without namespaces)
        self.cgroup = cgroups.NO_GROUP   # its own group where the quota backend gives one
        self.cpus: placement.CpuClaim | None = None   # given back once the worker is dead
        self.disk_watch: disk_budget.DiskWatch | None = None   # where no tmpfs caps its writes

    def cap_disk(self, worker: WorkerProcess, limits: Limits) -> str:
        """How this ready worker's writes are capped: a tmpfs (bubblewrap's, or the fallback
        worker's own), else the watchdog, started here for the rest of the sandbox's life."""
        if not worker.plan.backend.reaps_by_uid or (worker.private_disk and self.disk_watch is None):
            return disk_budget.TMPFS
        if self.disk_watch is None:
            # and the machine's other folders every uid may write into (leftovers' kept walk)
            shared = (*leftovers.SHARED_SCRATCH, *leftovers.world_writable_folders())
            self.disk_watch = disk_budget.DiskWatch(self.root, self.uid, limits, shared)
            self.disk_watch.start()
        worker.why_stopped = lambda: self.disk_watch.overrun or self.disk_watch.unmeasured
        return disk_budget.WATCHDOG

    def disk_overrun(self) -> str | None:
        """Why the watchdog stopped this sandbox for good for what the student wrote, or None.
        Raises SandboxError where it stopped it because it could not measure: the grader's failure,
        which no result may record as the student's."""
        if self.disk_watch is None:
            return None
        if self.disk_watch.unmeasured is not None:
            raise SandboxError(f"{self.disk_watch.unmeasured}; the sandbox was stopped and no result was "
                               f"recorded: grade again (the next run measures afresh)")
        return self.disk_watch.overrun

    def stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None

    def release(self) -> None:
        if self.disk_watch is not None:   # before the uid can go to another sandbox
            self.disk_watch.stop()
        self.stop_worker()
        self.cgroup.remove()
        self.cgroup = cgroups.NO_GROUP
        if self.uid is not None and self.sweep_uid:
            # No pid namespace ended with the worker: a process of its uid that left it would
            # still write into the folder while it goes (and could keep removal from ending).
            reaper.kill_uid(self.uid)
        remove_tree(self.root)
        if self.uid is not None:
            if self.sweep_uid:
                # No mount or IPC namespace ended with the worker: what its uid left in the
                # host's shared folders is removed before the uid is ever given out again.
                left = leftovers.remove_all_of(self.uid)
                if left:
                    print(f"WARNING: sandbox uid {self.uid} is retired: could not remove what it left "
                          f"({'; '.join(left[:5])})", file=sys.stderr, flush=True)
                    retire_uid(self.uid)
            release_uid(self.uid)
            self.uid = None
        if self.cpus is not None:
            self.cpus.release()
            self.cpus = None
