"""Resource limits of one sandboxed worker."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    """Every bound the sandbox puts on student code; all sizes in bytes, all times in seconds.

    Call, import and cell timeouts count the sandbox's own CPU time where the machine can
    measure it (clock.py), with wall-clock time only as an outer guard; the parent kills the
    worker. Memory and processes are capped per sandbox by a cgroup where one can be created
    (cgroups.py), and per process by rlimits everywhere; tmpfs sizes cap files.
    """

    call_timeout: float = 10.0        # per function call
    import_timeout: float = 20.0      # first import of a student module
    cell_timeout: float = 20.0        # per notebook cell (inside the worker)
    notebook_timeout: float = 120.0   # whole notebook (the parent's hard backstop)
    memory_bytes: int = 2 * 1024**3   # the whole sandbox (cgroup), and RLIMIT_AS of each process
    output_bytes: int = 64 * 1024     # captured stdout+stderr kept per call
    max_processes: int = 16           # processes the student may run at once (RLIMIT_NPROC, pids.max)
    # Additions beyond the engine's fixed fields:
    result_bytes: int = 64 * 1024**2  # largest reply (return value, notebook variables) accepted
    file_bytes: int = 64 * 1024**2    # largest file the student may write; also the /tmp size
    cpu_seconds: int = 300            # RLIMIT_CPU of the worker: a backstop, not a timeout
    start_timeout: float = 20.0       # worker start-up (interpreter + numpy) before giving up
    submission_timeout: float = 240.0  # wall-clock ceiling of one Sandbox's whole life (all calls
    #                                    and the notebook): past it the sandbox is killed
    cpu_share: float = 1.0            # CPUs one sandbox may keep busy at once (cgroup quota)

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"Limits.{field.name} must be a number, got {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"Limits.{field.name} must be positive and finite, got {value!r}")
            if field.type == "int" and not isinstance(value, int):
                raise ValueError(f"Limits.{field.name} must be an int, got {value!r}")
