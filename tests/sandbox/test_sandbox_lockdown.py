"""One Lockdown for every worker (lockdown.py): a worker forked from the fork server and one
bubblewrap started end up with the same process state, and neither can make a user namespace."""

from __future__ import annotations

import os
import platform
import re

import pytest
from sandbox_helpers import call_in_worker_of_kind, needs_bwrap, needs_rlimits

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

        def unshare_by_other_doors():
            # What a filter that only looked at unshare/clone of this architecture would miss.
            libc = ctypes.CDLL(None, use_errno=True)
            doors = {}
            args = (ctypes.c_uint64 * 11)(CLONE_NEWUSER)   # struct clone_args: flags first
            pid = libc.syscall(435, args, ctypes.sizeof(args))   # clone3
            if pid == 0:
                os._exit(0)
            doors["clone3"] = (pid, ctypes.get_errno())
            doors["x32"] = (libc.syscall(0x40000000 | 272, CLONE_NEWUSER), ctypes.get_errno())
            return doors

        def unshare_via_int80():
            # The i386 system call (unshare is 310 there) from a 64-bit process: int 0x80.
            import mmap
            code = bytes.fromhex("b836010000" "bb00000010" "cd80" "c3")
            page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
            page.write(code)
            address = ctypes.addressof(ctypes.c_char.from_buffer(page))
            return ctypes.CFUNCTYPE(ctypes.c_int)(address)()

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
    return call_in_worker_of_kind(sandbox, PROBE, "state", forked=forked)


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


@pytest.mark.usefixtures("worker_start")
@pytest.mark.skipif(platform.machine() != "x86_64", reason="the attack is x86_64 machine code")
def test_the_filter_has_no_side_door(sandbox):
    """A hostile student's way around a filter on unshare/clone: clone3 (flags in memory), the x32
    numbers, the i386 entry point (int 0x80), which the filter must not read as x86_64 calls."""
    box = sandbox(PROBE)
    doors = box.call("codesign", "unshare_by_other_doors").value
    assert tuple(doors["clone3"]) == (-1, 38), doors           # ENOSYS: the C library falls back to clone
    assert doors["x32"][0] == -1, doors
    outcome = box.call("codesign", "unshare_via_int80")
    assert outcome.status == "crashed", outcome            # another architecture: the worker is killed
    assert box.call("codesign", "unshare_here").value[0] == -1   # and the next call gets a fresh worker


@needs_rlimits
def test_the_rlimits_fallback_gets_the_same_lockdown(sandbox):
    """Without bubblewrap only the lockdown stands between student code and root's leftovers: no
    setuid binary or file capability can raise it (no_new_privs, an empty bounding set)."""
    box = sandbox(PROBE, isolation="rlimits")
    status = box.call("codesign", "state").value["status"]
    assert status["Uid"].split() == [str(box.host_uid)] * 4 and status["Groups"] == ""
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
    assert all(int(status[c], 16) == 0 for c in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))
    assert box.call("codesign", "unshare_in_a_child").value == "(-1, 1)"
