"""What every sandbox worker is started with, whichever isolation starts it: the `LaunchPlan`,
where things are as the worker sees them, its whole environment, and the loud warning a lowered
isolation prints. bwrap.py and uid_fallback.py build the plans; launcher.py picks one by the
grader's confinement.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .limits import Limits
from .lockdown import Lockdown

# "nobody": the uid inside a user namespace, and the one the fallback's reachability probe uses.
SANDBOX_UID = SANDBOX_GID = 65534
INSIDE_WORKDIR = "/submission"
SCRATCH_WORKDIR = "/tmp/work"            # the worker's cwd: links to the submission
INSIDE_WORKER_DIR = "/opt/sandbox"
WORKER_FILES = ("worker.py", "lockdown.py", "seccomp_filter.py", "private_disk.py", "codec.py", "nbrunner.py", "cell_outputs.py", "warm_notebook.py")   # all the sandbox sees of autograder/
_HERE = Path(__file__).resolve().parent
PROJECT_ROOT = _HERE.parents[1]

NOT_ISOLATED_WARNING = ("WARNING: sandbox without bubblewrap (isolation 'rlimits', asked explicitly): "
                        "student code shares every world-readable file (and the grader's network where "
                        "it cannot have one of its own); the project (solutions/, hidden tests) is closed to it.")


@dataclass(frozen=True)
class LaunchPlan:
    """Everything needed to start one worker, except the per-start config (fds, nonce)."""

    isolation: str               # the isolation's name, as results record it
    prefix: tuple[str, ...]      # bwrap and its options, or empty
    worker_path: str             # worker.py as the worker process sees it
    cwd: str                     # host directory to start in
    env: dict[str, str]
    drop_to: tuple[int, int] | None   # uid/gid the worker switches to after setting rlimits
    max_processes: int | None         # RLIMIT_NPROC headroom, None where it cannot apply (root)
    counted_uid: int | None           # RLIMIT_NPROC counts this uid's processes machine-wide
    worker_cwd: str = ""              # the worker's folder as it sees it (bubblewrap: set by bwrap)
    backend: "confinement.Isolation | None" = None   # what made it (launch_plan always sets it)
    cpus: tuple[int, ...] | None = None         # the CPUs the worker pins itself to (placement.py)
    scratch: dict | None = None                 # private scratch folders (Lockdown.scratch)
    new_network: bool = False                   # the worker makes its own network namespace
    new_ipc: bool = False                       # ... and an IPC namespace, where it can

    def argv(self, config_fd: str, info_fd: int | None = None) -> list[str]:
        """The command line; the worker reads its config from the pipe `config_fd` (never argv:
        student code can read its command line); `info_fd` asks bubblewrap to report its pid 1
        there (JSON)."""
        return self.wrap([sys.executable, "-s", "-B", self.worker_path, config_fd], info_fd)

    def wrap(self, command: list[str], info_fd: int | None = None) -> list[str]:
        """`command` run in the sandbox (after the bwrap prefix, if any)."""
        prefix = list(self.prefix)
        if info_fd is not None and prefix:
            prefix[1:1] = ["--info-fd", str(info_fd)]
        return [*prefix, *command]

    def lockdown(self, limits: Limits, memory_group: bool = False) -> Lockdown:
        """What a worker of this plan applies to itself before any student code runs;
        `memory_group`: a cgroup bounds the sandbox's memory."""
        return Lockdown(memory_bytes=limits.memory_bytes, cpu_seconds=int(limits.cpu_seconds),
                        file_bytes=limits.file_bytes, nproc=self.nproc_limit(), drop_to=self.drop_to,
                        # bubblewrap ends the sandbox with the grader (--die-with-parent); the
                        # fallback's worker asks the kernel itself.
                        parent_pid=None if self.backend.dies_with_grader else os.getpid(),
                        cpus=self.cpus, scratch=self.scratch, own_network=self.new_network,
                        own_ipc=self.new_ipc, memory_group=memory_group)

    def nproc_limit(self) -> int | None:
        """RLIMIT_NPROC for a worker starting now: `max_processes` beyond what the counted uid
        already runs (in a user namespace the count is per sandbox and starts at zero)."""
        if self.max_processes is None:
            return None
        already = processes_of(self.counted_uid) if self.counted_uid is not None else 0
        return already + self.max_processes


def _checked_env(env: Mapping[str, str]) -> dict[str, str]:
    base = _base_env("/tmp")
    for name, value in env.items():
        if not isinstance(name, str) or not name or "=" in name or not isinstance(value, str):
            raise ValueError(f"sandbox environment entries must be NAME=str, got {name!r}={value!r}")
        if name in base or name.startswith("CS349E_SANDBOX"):
            raise ValueError(f"sandbox environment variable {name} is set by the launcher")
    return dict(env)


def _base_env(home: str) -> dict[str, str]:
    """The worker's whole environment: nothing inherited from the grader."""
    from .plotting import sandbox_env   # (imported here: see plotting.py)
    venv_bin = str(Path(sys.prefix) / "bin")
    return {
        "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home if home != "/tmp" else "/tmp",
        "MPLCONFIGDIR": f"{home}/matplotlib",
        "MPLBACKEND": "Agg",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",       # output printed just before a crash is not lost
        "PYTHONIOENCODING": "utf-8",
        "PYTHONNOUSERSITE": "1",
        "OPENBLAS_NUM_THREADS": "1",   # one thread: threads count against RLIMIT_NPROC/AS
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        **sandbox_env(),
    }


def processes_of(uid: int) -> int:
    """How many processes `uid` runs now (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count
