"""Real `dask scheduler` / `dask worker` processes on loopback (127.0.0.1 only), each in a session
of its own so that a test can kill one worker whole, and every one ends with the run however it ends
(tests/process_groups.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import process_groups
from course_copy import clean_env

START_TIMEOUT = 60.0   # seconds for a process to start and register (a loaded machine is slow)


def dask_env() -> dict:
    """The machine's environment without the test's PYTHONPATH; one BLAS thread per process, as
    `python -m autograder` sets for itself (a worker's trusted side computes with numpy)."""
    env = clean_env()
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


@dataclass
class DaskProcesses:
    """Every process started here; `stop` ends them all."""

    logs: Path
    procs: list[subprocess.Popen] = field(default_factory=list)
    address: str = ""      # the scheduler's, once started
    client: object = None  # a distributed.Client the tests watch the cluster with

    def start(self, name: str, *args: str, cwd: Path) -> subprocess.Popen:
        # `python -m dask` is the `dask` command; run from `cwd`, which makes that folder's kit importable.
        log = open(self.logs / f"{name}.log", "wb")
        proc = process_groups.start([sys.executable, "-m", "dask", *args], cwd=cwd, env=dask_env(), stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        self.procs.append(proc)
        return proc

    def scheduler(self, cwd: Path) -> str:
        """Starts a scheduler on a free loopback port; returns its address."""
        file = self.logs / "scheduler.json"
        file.unlink(missing_ok=True)   # an earlier scheduler's address is not this one's
        proc = self.start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                          "--scheduler-file", str(file), cwd=cwd)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                return json.loads(file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        raise RuntimeError(f"the dask scheduler did not start: {self.log('scheduler')}")

    def worker(self, address: str, name: str, cwd: Path) -> subprocess.Popen:
        return self.start(name, "worker", address, "--name", name, "--nthreads", "1", "--host", "127.0.0.1",
                          "--no-dashboard", "--death-timeout", "60", cwd=cwd)

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")[-2000:]

    def kill(self, proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        """Ends the process and everything it started (its fork server, its sandboxes)."""
        process_groups.end(proc, sig)

    def stop(self) -> None:
        for proc in reversed(self.procs):   # workers before the scheduler
            if proc.poll() is None:
                self.kill(proc, signal.SIGTERM)


def wait_for_worker(client, name: str, timeout: float = START_TIMEOUT) -> str:
    """The address of the worker called `name` once it has registered."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for address, info in client.scheduler_info()["workers"].items():
            if info.get("name") == name:
                return address
        time.sleep(0.1)
    raise TimeoutError(f"worker {name} did not register within {timeout:.0f} s")


def wait_until_gone(client, address: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while address in client.scheduler_info()["workers"]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the scheduler still lists {address}")
        time.sleep(0.1)
