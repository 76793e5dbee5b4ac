"""Workers forked from the fork server (autograder/sandbox/forkserver.py): as confined as a worker
bubblewrap starts, nothing shared between submissions, and the usual start whenever the server
cannot serve. (test_sandbox_isolation.py runs all its probes against both kinds of worker.)"""

from __future__ import annotations

import os
import platform
import signal
import time
from dataclasses import replace

import pytest
from sandbox_helpers import FAST, call_in_worker_of_kind, needs_bwrap, wait_for_fork_server

from autograder.sandbox import forkserver_client
from autograder.sandbox.launcher import PROJECT_ROOT
from autograder.sandbox.plotting import cache_root

pytestmark = needs_bwrap

PROBE = {
    "codesign.py": """
        import os, random, socket, sys

        def confinement():
            status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
            fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
            return {
                "uid": os.getresuid(), "gid": os.getresgid(), "groups": os.getgroups(),
                "cwd": os.getcwd(), "root": sorted(os.listdir("/")), "env": dict(os.environ),
                "path": sys.path[1:], "hostname": socket.gethostname(),
                "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
                "cmdline": open("/proc/self/cmdline", "rb").read().decode(errors="replace"),
                "fds": fds[:-1],
                "namespaces": {n: os.stat(f"/proc/self/ns/{n}").st_ino for n in ("mnt", "pid", "net", "ipc", "uts")},   # the last: listdir's own
                "session_leader": os.getsid(0) == os.getpid(),
                **{key: status[key].strip() for key in ("NoNewPrivs", "CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd")},
            }

        def draws():
            import numpy
            return random.random(), float(numpy.random.random())

        def exists(path):
            return os.path.exists(path)
    """,
}


@pytest.fixture
def restore_fork_server():
    """Leaves the module as it was: enabled, with a working server (tests here break it)."""
    saved = forkserver_client.ENABLED
    yield
    forkserver_client.ENABLED = saved
    if forkserver_client._server is not None:
        forkserver_client._server.stop()
    forkserver_client._server = None
    forkserver_client._RESTARTS = 3


def _probe(sandbox, forked: bool):
    return call_in_worker_of_kind(sandbox, PROBE, "confinement", forked=forked)


def test_a_forked_worker_is_confined_like_a_started_one(sandbox, restore_fork_server):
    started_box, started = _probe(sandbox, forked=False)
    forked_box, forked = _probe(sandbox, forked=True)
    for key in ("groups", "cwd", "root", "env", "path", "hostname", "NoNewPrivs",
                "CapEff", "CapPrm", "CapAmb", "CapBnd", "CapInh"):
        assert forked[key] == started[key], key
    # Each sandbox has its own uid (and gid); both switched all three ids to it.
    for box, seen in ((forked_box, forked), (started_box, started)):
        assert seen["uid"] == seen["gid"] == (box.host_uid,) * 3
    assert forked["NoNewPrivs"] == "1" and int(forked["CapEff"], 16) == int(forked["CapPrm"], 16) == 0
    # Both empty the bounding and inheritable sets (lockdown.py; bubblewrap leaves them full).
    assert int(forked["CapBnd"], 16) == int(forked["CapInh"], 16) == 0
    assert forked["session_leader"]
    # Only its own descriptors: output (0-2: stdin is /dev/null), channel, the marker copy.
    assert forked["fds"] == started["fds"] == [0, 1, 2, 3, 4]
    # Its pid namespace: bwrap's pid 1, the placeholder, the worker. Nothing of the host, the
    # fork server or its helper (they are outside the namespace); its command line (the fork
    # server's) names no path of the grader's machine.
    assert forked["pids"] == [1, 2, 3] and started["pids"] == [1, 2]
    arguments = forked["cmdline"].split("\0")[1:]   # after the interpreter, as in a started worker
    assert arguments[:4] == ["-s", "-B", "-m", "forkserver"] and arguments[4].isdigit()
    assert not [a for a in arguments if str(PROJECT_ROOT) in a or str(cache_root()) in a]
    assert forked_box.call("codesign", "exists", (str(PROJECT_ROOT / "solutions"),)).value is False
    for name, inode in forked["namespaces"].items():   # neither the grader's nor another sandbox's
        assert inode not in (os.stat(f"/proc/self/ns/{name}").st_ino, started["namespaces"][name]), name


def test_forked_workers_do_not_share_random_state(sandbox, restore_fork_server):
    """Forked from one state, yet each worker draws as a fresh interpreter would."""
    wait_for_fork_server()
    draws = []
    for _ in range(2):
        box = sandbox(PROBE)
        assert box._resources.worker.forked
        draws.append(tuple(box.call("codesign", "draws").value))
    assert draws[0][0] != draws[1][0] and draws[0][1] != draws[1][1]


def test_a_killed_fork_server_is_replaced(sandbox, restore_fork_server):
    wait_for_fork_server()
    os.kill(forkserver_client._server.proc.pid, signal.SIGKILL)
    forkserver_client._server.proc.wait()
    box = sandbox(PROBE)   # the request fails: this worker starts the usual way
    assert not box._resources.worker.forked
    assert box.call("codesign", "exists", ("/",)).value is True
    wait_for_fork_server()   # a new server
    again = sandbox(PROBE)
    assert again._resources.worker.forked and again.call("codesign", "exists", ("/",)).value is True


def test_a_fork_server_that_cannot_enter_the_sandbox_gives_way(sandbox, restore_fork_server, monkeypatch):
    """The helper never gets the namespaces (here: the placeholder exits at once): the worker
    starts the usual way and no later worker is forked in this process."""
    wait_for_fork_server()
    monkeypatch.setattr(forkserver_client, "placeholder_argv", lambda fd: ["/bin/true"])
    box = sandbox(PROBE)
    assert box.call("codesign", "exists", ("/",)).value is True
    assert not box._resources.worker.forked
    assert "did not start" in forkserver_client.status()
    monkeypatch.undo()
    assert not sandbox(PROBE)._resources.worker.forked


HOSTILE = {
    "codesign.py": """
        import ctypes, os, resource, signal, sys, time

        def traced_and_stopped():
            ctypes.CDLL(None).ptrace(0, 0, 0, 0)   # PTRACE_TRACEME: the parent becomes our tracer
            os.kill(os.getpid(), signal.SIGUSR2)    # stop, as a traced process does on a signal
            time.sleep(0.5)
            os._exit(7)

        def traced_thread_stopped():
            import threading
            def stop():
                ctypes.CDLL(None).ptrace(0, 0, 0, 0)   # this thread: traced by the parent
                ctypes.CDLL(None).syscall(234, os.getpid(), threading.get_native_id(), signal.SIGSTOP)
            threading.Thread(target=stop).start()
            time.sleep(0.3)
            os._exit(0)

        def spawn_pool():
            import multiprocessing
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                return pool.map(abs, [-1, -2])

        def stopped_sibling():
            # A child sharing the worker's parent (CLONE_PARENT) asks that parent to trace it, stops.
            pid = ctypes.CDLL(None).syscall(56, 0x00008000 | signal.SIGCHLD, 0, 0, 0, 0)   # clone
            if pid == 0:
                ctypes.CDLL(None).ptrace(0, 0, 0, 0)
                os.kill(os.getpid(), signal.SIGSTOP)
                os._exit(0)
            time.sleep(0.5)
            return "still here"

        def cgroup_names_in_memory():
            import re
            found = set()
            for line in open("/proc/self/maps"):
                parts = line.split()
                start, end = (int(x, 16) for x in parts[0].split("-"))
                if "rw" not in parts[1] or end - start > 64 << 20 or (len(parts) > 5 and parts[5].startswith("[v")):
                    continue
                found |= set(re.findall(rb"cs349e-\\d+-[0-9a-f]{8}", ctypes.string_at(start, end - start)))
            return sorted(name.decode() for name in found)

        def exit_leaving_a_child():
            if os.fork() == 0:
                os.setsid()
                while True:
                    time.sleep(1)
            os._exit(0)

        def ok():
            return "ok"

        def headroom():
            with open("/proc/self/statm") as statm:
                mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            return resource.getrlimit(resource.RLIMIT_AS)[0] - mapped

        def frames():
            seen, frame = [], sys._getframe()
            while frame is not None:
                seen += [f"{frame.f_code.co_name}.{name}={value!r}"[:300] for name, value in frame.f_locals.items()]
                frame = frame.f_back
            return seen
    """,
}


@pytest.mark.parametrize("how", ["forked", "started"])
def test_a_worker_that_stops_under_its_own_tracer_is_a_crash(sandbox, restore_fork_server, how):
    """PTRACE_TRACEME then a signal: the parent (bubblewrap's pid 1, or the fork server's helper)
    sees the worker stopped. The call is a crash, the next call works, the grader does not fail."""
    forkserver_client.ENABLED = how == "forked"
    if how == "forked":
        wait_for_fork_server()
    box = sandbox(HOSTILE)
    assert box._resources.worker.forked is (how == "forked")
    outcome = box.call("codesign", "traced_and_stopped")
    assert outcome.status in ("crashed", "timeout"), outcome
    assert box.call("codesign", "ok").value == "ok"


@pytest.mark.parametrize("how", ["forked", "started"])
def test_a_worker_whose_thread_stops_under_its_tracer_leaves_nothing_behind(sandbox, restore_fork_server, how):
    """One thread asks to be traced by the parent and stops, the worker exits: the call is a
    crash and the sandbox's uid keeps no process (before: the fork server's helper waited forever
    for a worker it could not reap, holding bwrap's pid 1 and a zombie worker)."""
    forkserver_client.ENABLED = how == "forked"
    if how == "forked":
        wait_for_fork_server()
    box = sandbox(HOSTILE)
    uid = box.host_uid
    outcome = box.call("codesign", "traced_thread_stopped")
    assert outcome.status == "crashed", outcome
    assert box.call("codesign", "ok").value == "ok"
    box.close()
    deadline = time.monotonic() + 10
    while _processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_of(uid) == []


def _processes_of(uid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.mark.parametrize("how", ["forked", "started"])
def test_a_worker_that_exits_leaving_a_child_ends_its_call_at_once(sandbox, restore_fork_server, how):
    """The child keeps the channel open; the worker's end still ends the call (bubblewrap's pid 1
    ends with its worker; a forked worker's end is reported by the helper)."""
    forkserver_client.ENABLED = how == "forked"
    if how == "forked":
        wait_for_fork_server()
    box = sandbox(HOSTILE)
    outcome = box.call("codesign", "exit_leaving_a_child")
    # "crashed", not "timeout": the call ended with the worker, not when the child let go of the channel
    assert outcome.status == "crashed" and "exit status 0" in outcome.exc_message, outcome
    assert box.call("codesign", "ok").value == "ok"


def test_a_submission_that_shadows_a_preloaded_module_gets_a_started_worker(sandbox, restore_fork_server):
    """A forked worker already holds `calendar`, `random`, `worker`, ...: a student's file of that
    name would not be imported. Such a submission's worker is started the usual way."""
    wait_for_fork_server()
    files = {"calendar.py": "def mine():\n    return 'mine'\n",
             "codesign.py": "import calendar\n\ndef which():\n    return calendar.mine()\n"}
    box = sandbox(files)
    assert not box._resources.worker.forked
    assert box.call("codesign", "which").value == "mine"
    assert sandbox(HOSTILE)._resources.worker.forked   # others still are forked


def test_forked_and_started_workers_have_the_same_memory_headroom(sandbox, restore_fork_server):
    """RLIMIT_AS minus what is mapped at the first call: the preloaded libraries do not eat into
    a forked worker's address space."""
    headroom = {}
    for how in ("started", "forked"):
        forkserver_client.ENABLED = how == "forked"
        if how == "forked":
            wait_for_fork_server()
        box = sandbox(HOSTILE)
        assert box._resources.worker.forked is (how == "forked")
        headroom[how] = box.call("codesign", "headroom").value
    assert abs(headroom["forked"] - headroom["started"]) < 24 * 1024**2, headroom


def test_nothing_of_the_fork_servers_requests_is_in_reach(sandbox, restore_fork_server):
    """Student code can walk up its frames to the fork server's: the request is not left in them
    (it names only this sandbox's cgroup and environment, but frames are no place to keep it)."""
    wait_for_fork_server()
    box = sandbox(HOSTILE)
    assert box._resources.worker.forked
    seen = box.call("codesign", "frames").value
    assert any(entry.startswith("_worker.") for entry in seen)   # the fork server's frames are there
    assert not [entry for entry in seen if "cgroup_procs" in entry or "worker_path" in entry], seen


def test_a_fork_server_whose_files_live_under_tmp_starts_and_forks(sandbox, restore_fork_server, tmp_path, monkeypatch):
    """The server covers /tmp with its own tmpfs: what it imports from the host's /tmp (a
    checkout there, its .venv) must be bound back, or it dies during its imports."""
    import shutil
    copy = tmp_path / "sandbox_files"
    shutil.copytree(forkserver_client._FOLDER, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert str(copy).startswith("/tmp/")
    monkeypatch.setattr(forkserver_client, "_FOLDER", copy)
    if forkserver_client._server is not None:
        forkserver_client._server.stop()
    forkserver_client._server = None
    wait_for_fork_server()
    box = sandbox(HOSTILE)
    assert box._resources.worker.forked and box.call("codesign", "ok").value == "ok"


@pytest.mark.parametrize("how", ["forked", "started"])
def test_multiprocessing_spawn_works_in_both_workers(sandbox, restore_fork_server, how):
    """spawn (and forkserver) re-run __main__ by path in the child: a forked worker's __main__
    must be a started worker's (it was the fork server's, which no child can import)."""
    forkserver_client.ENABLED = how == "forked"
    if how == "forked":
        wait_for_fork_server()
    box = sandbox(HOSTILE, limits=replace(FAST, call_timeout=20.0))
    assert box._resources.worker.forked is (how == "forked")
    assert box.call("codesign", "spawn_pool").value == [1, 2]


@pytest.mark.skipif(platform.machine() != "x86_64", reason="raw clone(2) syscall number is x86_64's")
def test_a_stopped_tracee_beside_the_worker_ends_alone(sandbox, restore_fork_server):
    """A CLONE_PARENT child made the helper its tracer and stopped: that child ends, the worker
    goes on (under bubblewrap's pid 1 such a child hangs by itself)."""
    wait_for_fork_server()
    box = sandbox(HOSTILE)
    assert box._resources.worker.forked
    assert box.call("codesign", "stopped_sibling").value == "still here"


def test_no_other_sandboxs_request_is_in_a_workers_memory(sandbox, restore_fork_server):
    wait_for_fork_server()
    first = sandbox(HOSTILE)
    assert first._resources.worker.forked and first.call("codesign", "ok").value == "ok"
    second = sandbox(HOSTILE)
    own = {path.name for path in second._resources.cgroup.dirs.values()}
    found = set(second.call("codesign", "cgroup_names_in_memory").value)
    assert found <= own, found - own
