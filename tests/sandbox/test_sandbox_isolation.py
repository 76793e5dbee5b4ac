"""Under bubblewrap: what student code can see, write, reach and leave behind, in a worker
bubblewrap started and in one forked from the fork server (every test runs with both)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from sandbox_helpers import FAST, needs_bwrap, needs_rlimits, processes_with, running, zombie_children

from autograder.sandbox import Sandbox
from autograder.sandbox.launcher import SANDBOX_UID

ROOT = Path(__file__).resolve().parents[2]
pytestmark = needs_bwrap

PROBE = {
    "codesign.py": """
        import os, socket, sys

        def read(path):
            with open(path, "rb") as handle:
                return len(handle.read())

        def write(path):
            with open(path, "w") as handle:
                handle.write("pwned")
            return "written"

        def chmod(path):
            os.chmod(path, 0o777)
            return "changed"

        def exists(path):
            return os.path.exists(path)

        def listdir(path):
            return sorted(os.listdir(path))

        def connect(host, port):
            socket.create_connection((host, port), timeout=2).close()
            return "connected"

        def identity():
            return {"uid": os.getuid(), "gid": os.getgid(), "pid": os.getpid(), "cwd": os.getcwd(),
                    "env": dict(os.environ), "path": list(sys.path)}

        def import_it(name):
            __import__(name)
            return "imported"
    """,
}


@pytest.fixture(autouse=True)
def _each_worker_start(worker_start):
    return worker_start


def test_isolation_is_bubblewrap(sandbox):
    assert sandbox(PROBE).isolation == "bubblewrap"


def test_project_files_are_invisible(sandbox, tmp_path):
    """No solutions/, no autograder/, no tests/, nothing outside the submission copy."""
    box = sandbox(PROBE)
    secret = tmp_path / "answer_key.txt"
    secret.write_text("42")
    for path in [ROOT / "solutions" / "lec01_codesign" / "codesign.py", Path(__file__),
                 ROOT / "autograder" / "sandbox" / "session.py", ROOT / "hw_specs.py", secret]:
        assert path.exists()
        outcome = box.call("codesign", "read", (str(path),))
        assert outcome.status == "raised" and outcome.exc_type == "FileNotFoundError", path
    # Only a Python install that lives inside the project (CI's .venv) may show up there.
    inside = {Path(p).relative_to(ROOT).parts[0] for p in (sys.prefix, sys.base_prefix)
              if Path(p).is_relative_to(ROOT)}
    listing = box.call("codesign", "listdir", (str(ROOT),))
    assert (listing.exc_type == "FileNotFoundError" if not inside else set(listing.value) == inside)
    assert box.call("codesign", "listdir", ("/opt/sandbox",)).value == ["cell_outputs.py", "codec.py", "lockdown.py",
                                                                        "nbrunner.py", "private_disk.py",
                                                                        "seccomp_filter.py", "warm_notebook.py",
                                                                        "worker.py"]


def test_importing_solutions_or_autograder_fails(sandbox):
    box = sandbox(PROBE)
    for name in ("solutions", "autograder", "autograder.sandbox.session"):
        assert box.call("codesign", "import_it", (name,)).exc_type == "ModuleNotFoundError"


@pytest.mark.parametrize("path", ["/usr/evil.py", "/opt/sandbox/worker.py", "/etc/passwd",
                                  "/evil.py", "/proc/1/environ"])
def test_writing_outside_the_submission_fails(sandbox, path):
    box = sandbox(PROBE)
    outcome = box.call("codesign", "write", (path,))
    assert outcome.status == "raised" and "Error" in outcome.exc_type


def test_system_and_python_files_cannot_be_changed(sandbox):
    import numpy
    box = sandbox(PROBE)
    for path in ("/opt/sandbox/worker.py", numpy.__file__, "/usr/bin/env"):
        outcome = box.call("codesign", "chmod", (path,))
        assert outcome.status == "raised" and outcome.exc_type in ("PermissionError", "OSError"), path


@pytest.mark.parametrize("path", ["codesign.py", "/submission/codesign.py"])
def test_the_submission_copy_is_read_only(sandbox, path):
    """Writes go only to the size-capped /tmp: files in /submission would land on the host disk,
    and a submitted file (also through its link in the working folder) cannot be rewritten."""
    box = sandbox(PROBE)
    outcome = box.call("codesign", "write", (path,))
    assert outcome.status == "raised" and outcome.exc_type == "OSError", outcome
    assert "Read-only file system" in outcome.exc_message
    assert box.call("codesign", "chmod", ("/submission",)).status == "raised"
    assert sorted(p.name for p in box.workdir.iterdir()) == ["codesign.py"]


def test_new_files_in_the_working_folder_go_to_tmp(sandbox):
    """A notebook saving a figure next to itself works, and the file never reaches the host."""
    box = sandbox(PROBE)
    assert box.call("codesign", "write", ("figure.png",)).value == "written"
    assert box.call("codesign", "read", ("figure.png",)).value == len("pwned")
    assert sorted(p.name for p in box.workdir.iterdir()) == ["codesign.py"]


def test_tmp_is_writable_and_never_touches_the_submission(sandbox, submission):
    box = sandbox(PROBE)
    assert box.call("codesign", "write", ("/tmp/scratch.txt",)).value == "written"
    assert box.call("codesign", "read", ("/tmp/scratch.txt",)).value == len("pwned")
    assert sorted(p.name for p in box.workdir.iterdir()) == ["codesign.py"]
    original = submission(PROBE, name="student0")
    assert sorted(p.name for p in original.iterdir()) == ["codesign.py"]


def test_runs_unprivileged_with_a_scrubbed_environment(sandbox, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "s3cret")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    box = sandbox(PROBE, env={"CS349E_TRUSTED_GRADING": "1"})  # what the engine passes
    ident = box.call("codesign", "identity").value
    # A root grader gives each sandbox a host uid of its own; in a user namespace it is 65534.
    assert ident["uid"] == (box.host_uid if os.geteuid() == 0 else SANDBOX_UID) != 0
    assert ident["cwd"] == "/tmp/work"
    env = ident["env"]
    assert "GRADER_SECRET" not in env and "NBGRADER_EXECUTION" not in env
    assert env["CS349E_TRUSTED_GRADING"] == "1" and env["MPLBACKEND"] == "Agg"
    assert env["PYTHONHASHSEED"] == "0" and env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1"
    assert ident["path"][0] == "/tmp/work" and "/opt/sandbox" not in ident["path"]


def test_the_launcher_sets_no_variable_of_a_lecture(sandbox):
    """Lecture-specific variables come from the caller (`env=`), never from the launcher."""
    env = sandbox(PROBE).call("codesign", "identity").value["env"]
    assert not [name for name in env if name.startswith("CS349E_")]


@pytest.mark.parametrize("env", [{"PATH": "/evil"}, {"HOME": "/root"}, {"A=B": "1"}, {"X": 1}])
def test_caller_environment_cannot_replace_the_base_one(sandbox, env):
    with pytest.raises(ValueError, match="environment"):
        sandbox(PROBE, env=env)


def test_network_is_unreachable(sandbox):
    """Even the grader's own loopback listener cannot be reached."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        box = sandbox(PROBE)
        outcome = box.call("codesign", "connect", ("127.0.0.1", port))
        assert outcome.status == "raised" and outcome.exc_type in (
            "ConnectionRefusedError", "OSError", "TimeoutError")
        assert box.call("codesign", "connect", ("1.1.1.1", 80)).status == "raised"


LINGER = """
    import os, subprocess, sys, time

    def spawn(marker):
        # One ordinary child, one that leaves the session, one double-forked daemon.
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker],
                         start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker])
            os._exit(0)
        time.sleep(0.5)
        return "spawned"
"""


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_processes_left_running_die_with_the_sandbox(sandbox, isolation):
    marker = f"linger-{uuid.uuid4().hex}"
    box = sandbox({"codesign.py": LINGER}, isolation=isolation)
    assert box.call("codesign", "spawn", (marker,)).value == "spawned"
    assert len(processes_with(marker)) == 3
    box.close()
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []
    assert zombie_children() == []
    assert not box.workdir.parent.exists()


LEAVE = """
    import os, sys, time

    def leave(marker):
        # A daemon that leaves the session and drops every variable the grader gave it.
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker], {})
            os._exit(0)
        time.sleep(0.5)
        return "left"
"""


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_a_process_that_drops_its_environment_dies_with_the_sandbox_without_a_cgroup(
        sandbox, isolation, monkeypatch):
    from autograder.sandbox import cgroups
    monkeypatch.setattr(cgroups, "create", lambda limits: None)   # a machine without cgroups
    marker = f"leave-{uuid.uuid4().hex}"
    box = sandbox({"codesign.py": LEAVE}, isolation=isolation)
    assert box.quotas == "rlimits"
    assert box.call("codesign", "leave", (marker,)).value == "left"
    assert len(processes_with(marker)) == 1
    box.close()
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = processes_with(marker)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []


HYDRA = """
    import os, sys, time

    CHAIN = (
        "import os, time\\n"
        "while True:\\n"
        "    try:\\n"
        "        if os.fork():\\n"
        "            os._exit(0)\\n"    # the parent leaves, the child goes on: a new pid every step
        "    except OSError:\\n"
        "        time.sleep(0.01)\\n"
    )

    def hydra(marker):
        if os.fork() == 0:
            os.setsid()
            os.execve(sys.executable, [sys.executable, "-c", CHAIN, marker], {})
        time.sleep(0.5)
        return "running"
"""


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_a_process_that_keeps_changing_its_pid_dies_with_the_sandbox(sandbox, isolation, monkeypatch):
    """A hostile student's process outruns a kill by pid (it forks and exits in a loop, outside the
    session, without the grader's environment, no cgroup): it still ends with the sandbox."""
    from autograder.sandbox import cgroups
    monkeypatch.setattr(cgroups, "create", lambda limits: None)
    marker = f"hydra-{uuid.uuid4().hex}"
    box = sandbox({"codesign.py": HYDRA}, isolation=isolation)
    def seen(seconds: float) -> bool:
        # Each step lives a moment: one scan of /proc often misses it, many in a row do not.
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if processes_with(marker):
                return True
        return False

    assert box.call("codesign", "hydra", (marker,)).value == "running"
    assert seen(5)
    box.close()
    time.sleep(0.5)
    survived = seen(1)
    while seen(0.5):   # (cleaning up after a failure needs the same persistence)
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
    assert not survived


def test_processes_left_running_die_when_the_worker_is_restarted(sandbox):
    marker = f"linger-{uuid.uuid4().hex}"
    box = sandbox({"codesign.py": textwrap.dedent(LINGER) + "\ndef spin():\n    while True:\n        pass\n"})
    box.call("codesign", "spawn", (marker,))
    assert box.call("codesign", "spin", timeout=0.3).status == "timeout"
    time.sleep(0.2)
    assert processes_with(marker) == []


def test_fork_bomb_is_contained(sandbox):
    """A fork bomb hits RLIMIT_NPROC (EAGAIN), then times out; the grader carries on.

    As root each sandbox has a host uid of its own, so the count is the sandbox's alone; the
    slack only covers what the worker itself runs.
    """
    bomb = {"codesign.py": """
        import os, time

        def count_forks():
            children = 0
            try:
                while True:
                    if os.fork() == 0:
                        time.sleep(600)
                        os._exit(0)
                    children += 1
            except OSError as exc:
                return children, exc.errno

        def bomb():
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
    """}
    limits = replace(FAST, max_processes=12)
    box = sandbox(bomb, limits=limits)
    slack = 16  # processes other sandboxes may start or end meanwhile
    children, errno = box.call("codesign", "count_forks").value
    assert errno == 11 and 0 < children < limits.max_processes + slack  # EAGAIN
    assert box.call("codesign", "bomb", timeout=1.0).status == "timeout"
    children, errno = box.call("codesign", "count_forks").value  # a fresh worker, a fresh budget
    assert errno == 11 and 0 < children < limits.max_processes + slack
    before = sum(1 for e in os.scandir("/proc") if e.name.isdigit())
    box.close()
    assert sum(1 for e in os.scandir("/proc") if e.name.isdigit()) < before


def test_huge_allocation_fails_inside_only(sandbox):
    """RLIMIT_AS turns both one absurd and many reasonable allocations into MemoryError."""
    limits = replace(FAST, memory_bytes=768 * 1024**2)
    box = sandbox({"codesign.py": """
        import numpy as np

        def huge():
            return np.ones(10**11)

        def creeping():
            hoard = []
            while True:
                hoard.append(np.empty(64 * 1024**2, dtype=np.uint8))

        def fine():
            return float(np.ones(10**6).sum())
    """}, limits=limits)
    outcome = box.call("codesign", "huge")
    assert outcome.status == "raised" and outcome.exc_type == "MemoryError"
    creeping = box.call("codesign", "creeping")
    assert creeping.status == "crashed" or creeping.exc_type == "MemoryError", creeping
    assert box.call("codesign", "fine").value == 1e6


def test_printing_200_mb_is_truncated_and_does_not_stall(sandbox):
    box = sandbox({"codesign.py": """
        import sys

        def flood():
            chunk = "x" * (1 << 20) + "\\n"
            for _ in range(200):
                sys.stdout.write(chunk)
            return "done"

        def flood_forever():
            while True:
                print("spam" * 100, file=sys.stderr)
    """})
    outcome = box.call("codesign", "flood", timeout=10)   # "ok" within its timeout: the flood was drained
    assert outcome.status == "ok" and outcome.value == "done"
    assert len(outcome.output) < FAST.output_bytes + 100
    dropped = int(outcome.output.rsplit("[… ", 1)[1].split()[0])
    assert dropped + FAST.output_bytes == 200 * ((1 << 20) + 1)
    forever = box.call("codesign", "flood_forever", timeout=1.0)
    assert forever.status == "timeout" and "bytes dropped" in forever.output


def test_files_larger_than_the_limit_cannot_be_written(sandbox):
    limits = replace(FAST, file_bytes=1_000_000)
    box = sandbox({"codesign.py": """
        def big(path):
            with open(path, "wb") as handle:
                handle.write(b"x" * 2_000_000)
            return "written"
    """}, limits=limits)
    for path in ("big.bin", "/tmp/big.bin"):
        outcome = box.call("codesign", "big", (path,))
        assert outcome.status == "raised" and outcome.exc_type == "OSError", path


def test_close_removes_everything_and_is_idempotent(submission):
    box = Sandbox(submission(PROBE), limits=FAST, isolation="bubblewrap")
    assert box.call("codesign", "identity").status == "ok"
    root = box.workdir.parent
    box.close()
    box.close()
    assert not root.exists()
    assert zombie_children() == []


def test_forgotten_sandbox_is_cleaned_up_by_the_garbage_collector(submission):
    import gc
    box = Sandbox(submission(PROBE), limits=FAST, isolation="bubblewrap")
    root = box.workdir.parent
    del box
    gc.collect()
    assert not root.exists()


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_sandbox_dies_with_a_killed_grader(submission, isolation):
    """If the grader itself is SIGKILLed mid-call, neither the worker nor anything it started lives
    on (under bubblewrap: the pid namespace; the fallback: a watcher ends the sandbox's uid)."""
    marker = f"orphan-{uuid.uuid4().hex}"
    folder = submission({"codesign.py": textwrap.dedent(LINGER) + WAIT})
    grader = subprocess.Popen(
        [sys.executable, "-c",
         "from pathlib import Path\nfrom autograder.sandbox import Sandbox\n"
         f"box = Sandbox(Path({str(folder)!r}), isolation={isolation!r})\n"
         f"print(box.call('codesign', 'spawn', ({marker!r},)).status, box._resources.worker.proc.pid,"
         " box.workdir.parent, flush=True)\n"
         "box.call('codesign', 'wait', timeout=600)\n"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        status, worker_pid, private_dir = grader.stdout.readline().split()
        assert status == "ok" and len(set(processes_with(marker)) - {grader.pid}) == 3
    finally:
        grader.kill()
        grader.wait()
    survivors = processes_with(marker)
    try:
        deadline = time.monotonic() + 5
        while (running(int(worker_pid)) or survivors) and time.monotonic() < deadline:
            time.sleep(0.05)
            survivors = processes_with(marker)
        assert not running(int(worker_pid))
        assert survivors == []
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(private_dir)  # a killed grader cannot remove its sandbox folder


WAIT = """
def wait():
    time.sleep(600)
"""
