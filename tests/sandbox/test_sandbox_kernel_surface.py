"""A worker with a fresh kernel identity (lockdown.py): student code cannot reach the grader's
session keyring (a Kerberos ticket, any `user` key of the instructor's login), cannot add keys
anywhere, and the kernel interfaces the grader never needs (io_uring, userfaultfd, perf events,
bpf) are refused. Tried from a module and from a notebook cell, in forked and started workers
under bubblewrap, and in the uid fallback (its variant runs in test_sandbox_isolation_rlimits.py's
machine)."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import secrets

import pytest
from sandbox_helpers import needs_bwrap, needs_rlimits, notebook_json

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"),
                                reason="the probes name x86_64 and aarch64 system call numbers")

# (add_key, request_key, keyctl, io_uring_setup, io_uring_enter, io_uring_register, userfaultfd,
#  perf_event_open, bpf; the pidfd calls) on each architecture.
_NUMBERS = {
    "x86_64": dict(add_key=248, request_key=249, keyctl=250, io_uring_setup=425, io_uring_enter=426,
                   io_uring_register=427, userfaultfd=323, perf_event_open=298, bpf=321),
    "aarch64": dict(add_key=217, request_key=218, keyctl=219, io_uring_setup=425, io_uring_enter=426,
                    io_uring_register=427, userfaultfd=282, perf_event_open=241, bpf=280),
}
for _numbers in _NUMBERS.values():      # the same numbers on both
    _numbers.update(pidfd_send_signal=424, pidfd_open=434, pidfd_getfd=438)
NR = _NUMBERS.get(platform.machine(), {})
KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_SEARCH, KEYCTL_READ = 1, 10, 11

PROBES = f"""
import ctypes, os

NR = {NR!r}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def _call(name, *args):
    ctypes.set_errno(0)
    result = libc.syscall(NR[name], *args)
    return [int(result), ctypes.get_errno()]

def kernel_surface():
    found = {{}}
    params = (ctypes.c_uint32 * 30)()             # struct io_uring_params, zeroed
    params[2] = 0x2 | 0x4                         # flags: IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF
    params[3] = 0                                 # sq_thread_cpu
    found["io_uring_setup"] = _call("io_uring_setup", 4, params)
    found["io_uring_enter"] = _call("io_uring_enter", -1, 0, 0, 0, None, 0)
    found["io_uring_register"] = _call("io_uring_register", -1, 0, None, 0)
    found["userfaultfd"] = _call("userfaultfd", 0o2000000 | 1)   # O_CLOEXEC | UFFD_USER_MODE_ONLY
    attr = (ctypes.c_uint32 * 32)()               # struct perf_event_attr: a software clock
    attr[0], attr[1] = 1, 128                     # type PERF_TYPE_SOFTWARE, size
    found["perf_event_open"] = _call("perf_event_open", attr, 0, -1, -1, 0)
    found["bpf"] = _call("bpf", 0, None, 0)
    found["keyctl"] = _call("keyctl", 0, -3, 0)   # KEYCTL_GET_KEYRING_ID of the session keyring
    found["add_key"] = _call("add_key", b"user", b"planted", b"x", 1, -3)
    found["request_key"] = _call("request_key", b"user", b"planted", None, -3)
    # A pidfd of any process (the grader, pid 1): PIDFD_GET_INFO on it told every host process's
    # pid, parent and uids under the uid fallback while its /proc showed only the sandbox's own.
    found["pidfd_open"] = _call("pidfd_open", os.getppid() or 1, 0)
    found["pidfd_open_init"] = _call("pidfd_open", 1, 0)
    found["pidfd_getfd"] = _call("pidfd_getfd", 0, 0, 0)
    found["pidfd_send_signal"] = _call("pidfd_send_signal", 0, 0, None, 0)
    return found

def grader_key(description):
    # The grader's key: found in the session keyring, then read.
    key = libc.syscall(NR["keyctl"], 10, -3, b"user", description.encode(), 0)
    buffer = ctypes.create_string_buffer(4096)
    size = libc.syscall(NR["keyctl"], 11, key, buffer, 4096) if key > 0 else -1
    try:
        listed = open("/proc/keys").read()
    except OSError:
        listed = ""
    return {{"read": buffer.raw[:size].decode("latin-1") if size > 0 else "", "listed": listed}}
"""

def _syscall(name: str, *args) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(NR[name], *args)
    if result < 0:
        raise OSError(ctypes.get_errno(), f"{name}: {os.strerror(ctypes.get_errno())}")
    return result


@pytest.fixture
def grader_keyring():
    """The grader as an ssh login runs it: a session keyring holding a `user` key. (The test joins
    a keyring of its own first, so no real keyring of this machine is touched.) A fork server
    started now holds it as a grader's would."""
    from autograder.sandbox import forkserver_client
    _syscall("keyctl", KEYCTL_JOIN_SESSION_KEYRING, b"cs349e-test-grader")
    description, secret = f"cs349e-grader-{secrets.token_hex(4)}", secrets.token_hex(16)
    _syscall("add_key", b"user", description.encode(), secret.encode(), len(secret), KEY_SPEC_SESSION_KEYRING)
    saved = forkserver_client._server, forkserver_client.ENABLED
    forkserver_client._server = None
    yield description, secret
    if forkserver_client._server is not None:
        forkserver_client._server.stop()
    forkserver_client._server, forkserver_client.ENABLED = saved


def _grader_keyring_unchanged(description: str) -> None:
    assert _syscall("keyctl", KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, b"user", description.encode(), 0) > 0
    with pytest.raises(OSError) as planted:
        _syscall("keyctl", KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, b"user", b"planted", 0)
    assert planted.value.errno == errno.ENOKEY


def _assert_refused(surface: dict) -> None:
    for name, (result, err) in surface.items():
        assert result == -1 and err == errno.EPERM, (name, result, err, surface)


def _assert_held(box, grader_keyring) -> None:
    """From a module and from a notebook cell: every call refused, the grader's key unreachable."""
    description, secret = grader_keyring
    _assert_refused(box.call("codesign", "kernel_surface").value)
    seen = box.call("codesign", "grader_key", (description,)).value
    assert secret not in seen["read"] and description not in seen["listed"], seen
    notebook = box.run_notebook("handout.ipynb", ["surface", "key"])
    assert notebook.status == "ok" and not notebook.cell_errors, notebook
    _assert_refused(notebook.variables["surface"])
    key = notebook.variables["key"]
    assert secret not in key["read"] and description not in key["listed"], key
    _grader_keyring_unchanged(description)


def _submission(description: str) -> dict[str, str]:
    return {"codesign.py": PROBES,
            "handout.ipynb": notebook_json(PROBES, "surface = kernel_surface()",
                                           f"key = grader_key({description!r})")}


@needs_bwrap
@pytest.mark.parametrize("forked", [True, False], ids=["forked", "started"])
def test_student_code_cannot_reach_the_graders_keyring_or_the_kernels_extras(sandbox, grader_keyring, forked):
    from sandbox_helpers import wait_for_fork_server

    from autograder.sandbox import forkserver_client
    forkserver_client.ENABLED = forked
    if forked:
        wait_for_fork_server()
    box = sandbox(_submission(grader_keyring[0]))
    box.call("codesign", "kernel_surface")
    assert box._resources.worker.forked is forked
    _assert_held(box, grader_keyring)


@needs_rlimits
def test_the_rlimits_fallback_cannot_reach_the_graders_keyring_or_the_kernels_extras(sandbox, grader_keyring):
    _assert_held(sandbox(_submission(grader_keyring[0]), isolation="rlimits"), grader_keyring)


# A second round: calls that reach the grader, other processes, other CPUs or the machine's clock,
# and the same refused calls by the other doors of x86_64 (x32 numbers, the i386 `int 0x80`).
OTHER_DOORS = """
import ctypes, mmap, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def _call(nr, *args):
    ctypes.set_errno(0)
    return [int(libc.syscall(nr, *args)), ctypes.get_errno()]

def other_surface():
    parent = os.getppid()
    param = ctypes.c_int(1)
    when = (ctypes.c_long * 2)(0, 0)
    ldt_entry = (ctypes.c_uint32 * 4)(0, 0, 0xFFFF, 0x41)   # struct user_desc: entry 0, seg_32bit, useable
    ldt_read = ctypes.create_string_buffer(64)
    return {
        "ptrace_attach_parent": _call(101, 16, parent, 0, 0),
        "kcmp_parent": _call(312, os.getpid(), parent, 0, 0, 0),
        "fanotify_init": _call(300, 0x200, 0),                  # FAN_REPORT_FID, as unprivileged users may
        "sched_setscheduler_fifo": _call(144, 0, 1, ctypes.byref(param)),
        "setpriority_raise": _call(141, 0, 0, -5),
        "ioprio_set_realtime": _call(251, 1, 0, 1 << 13),
        "setns": _call(308, 0, 0),
        "mount": _call(165, b"none", b"/tmp", b"tmpfs", 0, None),
        "clock_settime": _call(227, 0, ctypes.byref(when)),
        # A 32-bit segment of its own in the LDT: kernel code with a history of leaks and
        # escalations (espfix, CVE-2015-5157/8830, CVE-2017-17053) that nothing here needs.
        "modify_ldt_write": _call(154, 1, ctypes.byref(ldt_entry), ctypes.sizeof(ldt_entry)),
        "modify_ldt_read": _call(154, 0, ctypes.byref(ldt_read), ctypes.sizeof(ldt_read)),
        "x32_keyctl": _call(250 | 0x40000000, 0, -3, 0),
        "x32_io_uring_setup": _call(425 | 0x40000000, 4, None),
    }

def int80_keyctl():
    # mov eax, 288 (i386 keyctl); xor ebx, ebx; int 0x80; ret
    code = bytes.fromhex("b820010000" "31db" "cd80" "c3")
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return ctypes.CFUNCTYPE(ctypes.c_int)(address)()
"""


@needs_bwrap
@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 numbers and machine code")
def test_other_doors_to_the_kernel_stay_closed(sandbox):
    box = sandbox({"codesign.py": OTHER_DOORS})
    found = box.call("codesign", "other_surface").value
    # ESRCH: the parent is outside the sandbox's pid namespace (as when bwrap's own init is the
    # parent), so there is no process to attach to or compare with: that door is closed too.
    closed = {name: (errno.EPERM, errno.EACCES, errno.EINVAL) + ((errno.ESRCH,) if name in ("ptrace_attach_parent", "kcmp_parent") else ())
              for name in found}
    assert all(result == -1 and err in closed[name] for name, (result, err) in found.items()), found
    assert found["x32_keyctl"][1] == found["x32_io_uring_setup"][1] == errno.EPERM
    # An i386 call is not this filter's architecture: the worker is killed, never answered.
    assert box.call("codesign", "int80_keyctl").status != "ok"


# inotify on a file every sandbox reads through its read-only view of the machine (the standard
# library here): a watch sits on the host's inode, under every mount namespace, so one student's
# sandbox would learn when and how often another student's code opens or reads it.
INOTIFY_NR = {"x86_64": dict(inotify_init=253, inotify_init1=294, inotify_add_watch=254),
              "aarch64": dict(inotify_init1=26, inotify_add_watch=27)}.get(platform.machine(), {})
WATCHER = f"""
import ctypes, os, numbers
NR = {INOTIFY_NR!r}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
_fd = []

def _call(name, *args):
    ctypes.set_errno(0)
    return [int(libc.syscall(NR[name], *args)), ctypes.get_errno()]

def watch():
    found = {{}}
    if "inotify_init" in NR:
        found["inotify_init"] = _call("inotify_init")
    found["inotify_init1"] = _call("inotify_init1", 0o4000)            # IN_NONBLOCK
    fd = found["inotify_init1"][0]
    if fd >= 0:
        _fd.append(fd)
        path = numbers.__file__.encode()
        found["inotify_add_watch"] = _call("inotify_add_watch", fd, path, 0x1 | 0x20)   # IN_ACCESS | IN_OPEN
    return found

def seen():
    if not _fd:
        return 0
    try:
        return len(os.read(_fd[0], 65536))
    except BlockingIOError:
        return 0
"""
READER = """
import numbers

def read_shared():
    with open(numbers.__file__, "rb") as handle:
        return len(handle.read())
"""


@needs_bwrap
def test_one_sandbox_cannot_watch_a_shared_file_for_another_students_reads(sandbox):
    """Before: inotify_init1 and inotify_add_watch succeeded and the watcher saw the other
    sandbox open and read the file; now both calls are refused and nothing is seen."""
    watcher = sandbox({"codesign.py": WATCHER})
    found = watcher.call("codesign", "watch").value
    reader = sandbox({"codesign.py": READER})
    assert reader.call("codesign", "read_shared").value > 0
    assert watcher.call("codesign", "seen").value == 0
    _assert_refused(found)


@needs_rlimits
def test_the_rlimits_fallback_refuses_inotify_too(sandbox):
    _assert_refused(sandbox({"codesign.py": WATCHER}, isolation="rlimits").call("codesign", "watch").value)


# Doors beside the filter's list: the new mount API (a fresh tmpfs or a detached copy of the root
# would be a way around the read-only view), userfaultfd through its device rather than its call,
# the kernel log, another process's memory placement, sysrq and the cgroup tree (moving oneself
# out of the sandbox's CPU and memory bounds).
SIDE_DOORS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def _call(nr, *args):
    ctypes.set_errno(0)
    return [int(libc.syscall(nr, *args)), ctypes.get_errno()]

def _open(path, flags):
    try:
        os.close(os.open(path, flags))
        return [0, 0]
    except OSError as exc:
        return [-1, exc.errno]

def side_doors():
    log = ctypes.create_string_buffer(4096)
    return {
        "fsopen_tmpfs": _call(430, b"tmpfs", 0),
        "open_tree_root": _call(428, -100, b"/", 1),                 # OPEN_TREE_CLONE
        "syslog_read_all": _call(103, 3, log, 4096),
        "move_pages_init": _call(279, 1, 0, None, None, None, 0),
        "dev_userfaultfd": _open("/dev/userfaultfd", os.O_RDWR),
        "sysrq_trigger": _open("/proc/sysrq-trigger", os.O_WRONLY),
        "cgroup_procs": _open("/sys/fs/cgroup/cgroup.procs", os.O_WRONLY),
    }
"""


@needs_bwrap
@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 numbers")
def test_doors_beside_the_filters_list_stay_closed(sandbox):
    found = sandbox({"codesign.py": SIDE_DOORS}).call("codesign", "side_doors").value
    closed = (errno.EPERM, errno.EACCES, errno.ENOENT, errno.EROFS)
    assert all(result == -1 and err in closed for result, err in found.values()), found


# Socket families the sandbox's network namespace does not confine. AF_VSOCK reaches the
# hypervisor and every VM socket of the host (CID 2) whatever the namespace: on a course server or
# grading container that is a VM, a way out of `--unshare-net`. Others (AF_ALG, AF_TIPC, AF_RDS,
# AF_PACKET...) are kernel code the grader never needs. Only creating a socket is tried here;
# nothing is connected to. The families libraries do use (Unix, IPv4/6 inside the namespace,
# netlink for getaddrinfo) keep working.
SOCKETS = """
import socket

def families():
    found = {}
    for name, family, kind in (("vsock", 40, socket.SOCK_STREAM), ("alg", 38, socket.SOCK_SEQPACKET),
                               ("tipc", 30, socket.SOCK_RDM), ("rds", 21, socket.SOCK_SEQPACKET),
                               ("packet", 17, socket.SOCK_DGRAM), ("bluetooth", 31, socket.SOCK_STREAM),
                               ("can", 29, socket.SOCK_RAW), ("xdp", 44, socket.SOCK_RAW),
                               ("unix", 1, socket.SOCK_STREAM), ("inet", 2, socket.SOCK_DGRAM),
                               ("inet6", 10, socket.SOCK_DGRAM), ("netlink", 16, socket.SOCK_RAW)):
        try:
            socket.socket(family, kind).close()
            found[name] = 0
        except OSError as exc:
            found[name] = exc.errno
    try:
        left, right = socket.socketpair()
        left.close(), right.close()
        found["socketpair"] = 0
    except OSError as exc:
        found["socketpair"] = exc.errno
    return found
"""
CONFINED_FAMILIES = {"unix", "inet", "inet6", "netlink", "socketpair"}


def _assert_only_confined_families(found: dict) -> None:
    assert {name for name, err in found.items() if err == 0} == CONFINED_FAMILIES, found
    refused = (errno.EAFNOSUPPORT, errno.EPERM, errno.EACCES, errno.EPROTONOSUPPORT, errno.ESOCKTNOSUPPORT)
    assert all(err in refused for name, err in found.items() if name not in CONFINED_FAMILIES), found


@needs_bwrap
def test_no_socket_family_the_network_namespace_does_not_confine(sandbox, worker_start):
    """Before: socket(AF_VSOCK) succeeded inside the sandbox (its network namespace does not
    cover VM sockets), forked or started."""
    box = sandbox({"codesign.py": SOCKETS})
    _assert_only_confined_families(box.call("codesign", "families").value)


@needs_rlimits
def test_the_rlimits_fallback_refuses_the_same_socket_families(sandbox):
    box = sandbox({"codesign.py": SOCKETS}, isolation="rlimits")
    _assert_only_confined_families(box.call("codesign", "families").value)


@needs_bwrap
def test_a_notebook_cell_gets_the_same_socket_families(sandbox):
    cell = SOCKETS + "\nfound = families()\n"
    box = sandbox({"handout.ipynb": notebook_json(cell)})
    outcome = box.run_notebook("handout.ipynb", ["found"])
    _assert_only_confined_families(outcome.variables["found"])


# Two sandboxes open at once (grade -j 2): a worker holds no descriptor but its own (the output
# pipe, its channel, /dev/null), none of the other sandbox's pipes or sockets, nor any file of the
# grader's (gradebook, answer-key store) inherited across the start or the fork.
DESCRIPTORS = """
import os

def descriptors():
    listed = os.listdir("/proc/self/fd")
    found = {}
    for fd in listed:
        try:
            found[int(fd)] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass   # the listing's own descriptor, closed by now
    return found
"""


@needs_bwrap
def test_two_open_sandboxes_hold_only_their_own_descriptors(sandbox, worker_start):
    boxes = [sandbox({"codesign.py": DESCRIPTORS}) for _ in range(2)]
    held = [box.call("codesign", "descriptors").value for box in boxes]
    for found in held:
        assert {0, 1, 2} <= set(found) and len(found) <= 5, found
        assert found[0] == "/dev/null", found
        assert all(target == "/dev/null" or target.startswith(("pipe:[", "socket:[")) for target in found.values()), found
    first, second = ({t for t in found.values() if t != "/dev/null"} for found in held)
    assert first and second and not first & second, held


@needs_rlimits
@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 numbers")
def test_the_rlimits_fallback_keeps_the_doors_beside_the_filter_closed_too(sandbox):
    """The same doors from the uid fallback, which has the host's /dev, /sys and cgroup tree
    (no bubblewrap view): an unprivileged uid of its own must still find each closed."""
    outcome = sandbox({"codesign.py": SIDE_DOORS}, isolation="rlimits").call("codesign", "side_doors")
    assert outcome.status == "ok", outcome
    found = outcome.value
    closed = (errno.EPERM, errno.EACCES, errno.ENOENT, errno.EROFS)
    assert all(result == -1 and err in closed for result, err in found.values()), found


SIGNALS = """
import os, signal

def pid():
    return os.getpid()

def signal_others(classmate, grader):
    found = {}
    for name, target in (("classmate", classmate), ("grader", grader)):
        try:
            os.kill(target, signal.SIGKILL)
            found[name] = "sent"
        except OSError as exc:
            found[name] = exc.errno
    try:
        os.kill(-1, signal.SIGCONT)     # every process this uid may signal: its own only
        found["all"] = "sent"
    except OSError as exc:
        found["all"] = exc.errno
    return found

def ok():
    return 1
"""


@pytest.mark.parametrize("isolation", [pytest.param("rlimits", marks=needs_rlimits), "bubblewrap"])
def test_a_sandbox_cannot_signal_a_classmates_worker_or_the_grader(sandbox, isolation):
    """Two students graded at once (-j 2): one kills the other's worker and the grader (by the pids
    a student learns from /proc or guesses), then signals every process it may. Each kill must be
    refused and the classmate keeps her score (her call answers)."""
    alice = sandbox({"codesign.py": SIGNALS}, isolation=isolation)
    mallory = sandbox({"codesign.py": SIGNALS}, isolation=isolation)
    assert alice.call("codesign", "ok", ()).value == 1
    target = alice._resources.worker.proc.pid    # her worker's host pid (bwrap's, under bubblewrap)
    outcome = mallory.call("codesign", "signal_others", (target, os.getpid()))   # this test is the grader
    assert outcome.status == "ok", outcome
    found = outcome.value
    assert found["grader"] in (errno.EPERM, errno.ESRCH) and found["classmate"] in (errno.EPERM, errno.ESRCH), found
    assert alice.call("codesign", "ok", ()).value == 1


PRIORITY = """
import os

def raise_priority():
    found = {}
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))   # a real-time spinner starves its CPU
        found["fifo"] = "set"
    except OSError as exc:
        found["fifo"] = exc.errno
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -10)
        found["nice"] = "set"
    except OSError as exc:
        found["nice"] = exc.errno
    import resource
    found["memlock"] = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
    return found
"""


@pytest.fixture
def generous_grader_limits():
    """A grader started from a shell or service that allows real-time priority and a higher
    priority (`ulimit -r 99 -e 40`, systemd's LimitRTPRIO=infinity) and unlimited locked memory."""
    import resource

    kept = {which: resource.getrlimit(which) for which in (resource.RLIMIT_RTPRIO, resource.RLIMIT_NICE,
                                                           resource.RLIMIT_MEMLOCK)}
    try:
        resource.setrlimit(resource.RLIMIT_RTPRIO, (99, 99))
        resource.setrlimit(resource.RLIMIT_NICE, (40, 40))
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError) as exc:
        for which, value in kept.items():
            resource.setrlimit(which, value)
        pytest.skip(f"this machine cannot give its grader such limits (no CAP_SYS_RESOURCE: {exc}): "
                    f"student code has nothing generous to inherit here")
    yield
    for which, value in kept.items():
        resource.setrlimit(which, value)


@pytest.mark.parametrize("isolation", [pytest.param("rlimits", marks=needs_rlimits), "bubblewrap"])
def test_student_code_gets_no_real_time_or_raised_priority_whatever_the_grader_was_allowed(
        sandbox, generous_grader_limits, isolation, monkeypatch):
    """A SCHED_FIFO spinner keeps every ordinary process off its CPU (a classmate's sandbox where
    placement is off, the grader's own threads) but for the kernel's 5 % reserve; locked memory
    cannot be reclaimed. The sandbox's limits are its own, not the grader's."""
    from autograder.sandbox import forkserver_client
    monkeypatch.setattr(forkserver_client, "ENABLED", False)   # a started worker inherits this process's limits
    outcome = sandbox({"codesign.py": PRIORITY}, isolation=isolation).call("codesign", "raise_priority")
    assert outcome.status == "ok", outcome
    found = outcome.value
    assert found["fifo"] == errno.EPERM and found["nice"] in (errno.EPERM, errno.EACCES), found
    assert 0 <= found["memlock"] <= 1 << 20, found



# sched_setattr's number on each architecture (struct sched_attr: size, policy, flags, nice, ...).
_SCHED_SETATTR = {"x86_64": 314, "aarch64": 274}.get(platform.machine())
LOWER_PRIORITY = f"""
import ctypes, os, threading

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def _try(step):
    try:
        step()
        return "set"
    except OSError as exc:
        return exc.errno

def _setattr_idle():
    attr = (ctypes.c_uint32 * 12)()
    attr[0], attr[1] = 48, os.SCHED_IDLE              # size, policy
    ctypes.set_errno(0)
    if libc.syscall({_SCHED_SETATTR}, 0, attr, 0) != 0:
        raise OSError(ctypes.get_errno(), "sched_setattr")

def lower_priority():
    found = {{
        "idle": _try(lambda: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))),
        "batch": _try(lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))),
        "setattr": _try(_setattr_idle),
        "nice": _try(lambda: os.nice(19)),
        "setpriority": _try(lambda: os.setpriority(os.PRIO_PROCESS, 0, 19)),
        "group": _try(lambda: os.setpriority(os.PRIO_PGRP, 0, 19)),
        "user": _try(lambda: os.setpriority(os.PRIO_USER, os.getuid(), 19)),
    }}
    thread = {{}}
    def in_thread():   # a thread of its own, by its own id
        thread["idle"] = _try(lambda: os.sched_setscheduler(threading.get_native_id(), os.SCHED_IDLE, os.sched_param(0)))
        thread["policy"] = os.sched_getscheduler(threading.get_native_id())
    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join()
    found["thread"] = thread["idle"]
    found["now"] = [os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0), thread["policy"]]
    return found
"""


def _assert_priority_kept(found: dict) -> None:
    refused = {name: err for name, err in found.items() if name != "now"}
    assert all(err == errno.EPERM for err in refused.values()), found
    assert found["now"] == [os.SCHED_OTHER, os.getpriority(os.PRIO_PROCESS, 0), os.SCHED_OTHER], found


@pytest.mark.parametrize("isolation", [pytest.param("rlimits", marks=needs_rlimits), "bubblewrap"])
def test_student_code_cannot_lower_its_own_priority_to_look_starved(sandbox, isolation):
    """Lowering one's own priority needs no privilege: at SCHED_IDLE (or nice 19), any ordinary
    process on the sandbox's CPU kept it from running, so an honest call looked starved by the
    machine, 'machine overloaded' on every run, never graded
    (test_machine_load.test_a_submission_that_lowers_its_own_priority_is_graded_not_called_starved).
    The sandbox runs at the priority the grader gave it."""
    outcome = sandbox({"codesign.py": LOWER_PRIORITY}, isolation=isolation).call("codesign", "lower_priority")
    assert outcome.status == "ok", outcome
    _assert_priority_kept(outcome.value)


@needs_bwrap
def test_a_notebook_cell_cannot_lower_its_priority_either(sandbox):
    box = sandbox({"handout.ipynb": notebook_json(LOWER_PRIORITY + "\nfound = lower_priority()\n")})
    outcome = box.run_notebook("handout.ipynb", ["found"])
    assert outcome.status == "ok" and not outcome.cell_errors, outcome
    _assert_priority_kept(outcome.variables["found"])


OPEN_FILES = """
import os

_held = []

def open_all():
    try:
        while len(_held) < 200_000:
            _held.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as exc:
        return len(_held), exc.errno
    return len(_held), 0
"""


@pytest.mark.parametrize("isolation", [pytest.param("rlimits", marks=needs_rlimits), "bubblewrap"])
def test_open_files_are_bounded_by_the_sandbox_not_the_grader(sandbox, isolation):
    """Each open file is kernel memory no RLIMIT_AS counts (a container's default allows 1 048 576
    of them, ~250 MB per student; without a cgroup nothing else bounds it). The sandbox has its
    own bound, however many the grader may open."""
    outcome = sandbox({"codesign.py": OPEN_FILES}, isolation=isolation).call("codesign", "open_all")
    assert outcome.status == "ok", outcome
    opened, err = outcome.value
    assert err == errno.EMFILE and opened <= 4096, outcome.value
