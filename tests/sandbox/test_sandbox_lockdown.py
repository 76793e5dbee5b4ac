"""One Lockdown for every worker (lockdown.py): a worker forked from the fork server and one
bubblewrap started end up with the same process state, and neither can make a user namespace."""

from __future__ import annotations

import os
import re

import pytest
from sandbox_helpers import needs_bwrap

pytestmark = needs_bwrap

PROBE = {
    "codesign.py": """
        import ctypes, os, subprocess, sys

        CLONE_NEWUSER = 0x10000000
        NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time",
                      "time_for_children", "user", "uts")

        def state():
            status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
            # (the folder cannot be listed by a process that changed its uid: it is not dumpable)
            ns = {name: os.stat(f"/proc/self/ns/{name}").st_ino for name in NAMESPACES
                  if os.path.exists(f"/proc/self/ns/{name}")}
            return {"status": {k: v.strip() for k, v in status.items()},
                    "limits": open("/proc/self/limits").read(),
                    "cgroup": open("/proc/self/cgroup").read(), "namespaces": ns}

        def unshare_here():
            libc = ctypes.CDLL(None, use_errno=True)
            return libc.unshare(CLONE_NEWUSER), ctypes.get_errno()

        def unshare_in_a_child():
            # A fresh single-threaded child, as an attacker would use (unshare refuses threads).
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:
                libc = ctypes.CDLL(None, use_errno=True)
                code = libc.unshare(CLONE_NEWUSER)
                os.write(write_end, str((code, ctypes.get_errno())).encode())
                os._exit(0)
            os.waitpid(pid, 0)
            return os.read(read_end, 100).decode()

        def unshare_command():
            run = subprocess.run(["unshare", "--user", "--map-root-user", "id", "-u"],
                                 capture_output=True, text=True)
            return run.returncode, run.stdout.strip()
    """,
}
# Fields of /proc/self/status that differ between any two processes (ids, sizes, counters).
_VOLATILE = re.compile(r"^(Tgid|Ngid|Pid|PPid|TracerPid|NStgid|NSpid|NSpgid|NSsid|Uid|Gid|FDSize|Vm\w+|Rss\w+|"
                       r"HugetlbPages|voluntary_ctxt_switches|nonvoluntary_ctxt_switches|SigQ|State|"
                       r"Threads|Cpus_allowed\w*|Mems_allowed\w*|CoreDumping)$")


def _host_namespaces() -> dict[str, int]:
    return {name: os.stat(f"/proc/self/ns/{name}").st_ino for name in os.listdir("/proc/self/ns")}


def _state(sandbox, forked: bool):
    from autograder.sandbox import forkserver_client
    from sandbox_helpers import wait_for_fork_server
    forkserver_client.ENABLED = forked
    if forked:
        wait_for_fork_server()
    box = sandbox(PROBE)
    outcome = box.call("codesign", "state")
    assert outcome.status == "ok", outcome
    # The test is about both kinds: it says so only if each worker really is of its kind.
    assert box._resources.worker.forked is forked
    return box, outcome.value


@pytest.fixture
def fork_server_setting():
    from autograder.sandbox import forkserver_client
    saved = forkserver_client.ENABLED
    yield
    forkserver_client.ENABLED = saved


def test_forked_and_started_workers_have_the_same_process_state(sandbox, fork_server_setting):
    started_box, started = _state(sandbox, forked=False)
    forked_box, forked = _state(sandbox, forked=True)
    same = {k: v for k, v in started["status"].items() if not _VOLATILE.match(k)}
    assert {k: forked["status"].get(k) for k in same} == same
    # The whole lockdown, in both: no privileges at all, no way back, the user-namespace filter.
    for box, seen in ((started_box, started), (forked_box, forked)):
        status = seen["status"]
        assert status["Uid"].split() == [str(box.host_uid)] * 4 and status["Gid"].split() == [str(box.host_uid)] * 4
        assert status["Groups"] == "" and status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
        assert all(int(status[c], 16) == 0 for c in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))
    # Limits: the same but for the address space, raised by what the fork server preloaded.
    def without_address_space(text):
        return [line for line in text.splitlines() if not line.startswith("Max address space")]
    assert without_address_space(forked["limits"]) == without_address_space(started["limits"])
    # Each in its own cgroup namespace (its group is its root), the same namespaces as the host's
    # kept and every other one new, and never another sandbox's.
    assert forked["cgroup"] == started["cgroup"]
    host = _host_namespaces()
    kept = {n for n, link in started["namespaces"].items() if link == host.get(n)}
    assert {n for n, link in forked["namespaces"].items() if link == host.get(n)} == kept
    assert {"pid", "net", "ipc", "uts", "mnt"}.isdisjoint(kept)
    for name in set(started["namespaces"]) - kept:
        assert forked["namespaces"][name] != started["namespaces"][name], name


@pytest.mark.usefixtures("worker_start")
def test_no_user_namespace_can_be_made_inside_the_sandbox(sandbox):
    box = sandbox(PROBE)
    code, err = box.call("codesign", "unshare_here").value
    assert code == -1 and err in (1, 22), (code, err)   # EPERM (EINVAL: a threaded process)
    assert box.call("codesign", "unshare_in_a_child").value == "(-1, 1)"
    returncode, uid = box.call("codesign", "unshare_command").value
    assert returncode != 0 and uid != "0"
