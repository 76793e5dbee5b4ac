"""The uid fallback's IPC: each sandbox an IPC namespace of its own where the platform allows one,
so a SysV segment or POSIX queue a student makes is never in the host's tables (where the next
student given the same uid, or a classmate graded at once, could attach to it), and the result
records which namespaces the sandbox had."""

from __future__ import annotations

import pytest
from sandbox_helpers import needs_rlimits

from autograder.sandbox import confinement

pytestmark = needs_rlimits

IPC = {
    "codesign.py": """
        import ctypes, os

        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p

        def make_segment():
            ident = libc.shmget(0, 4096, 0o666 | 0o1000)   # IPC_PRIVATE, IPC_CREAT, readable by all
            if ident < 0:
                raise OSError(ctypes.get_errno(), "shmget")
            address = libc.shmat(ident, None, 0)
            ctypes.memmove(address, b"a previous student's answers", 28)
            return ident, os.getuid()

        def uid():
            return os.getuid()
    """,
}


def _host_segments() -> list[tuple[int, int]]:
    """(shmid, creator uid) of every SysV segment in the host's IPC namespace."""
    with open("/proc/sysvipc/shm", encoding="ascii") as handle:
        lines = handle.read().splitlines()
    columns = lines[0].split()
    return [(int(row[columns.index("shmid")]), int(row[columns.index("cuid")]))
            for row in (line.split() for line in lines[1:])]


def test_a_segment_made_in_the_fallback_is_not_in_the_hosts_table(sandbox):
    box = sandbox(IPC, isolation="rlimits")
    outcome = box.call("codesign", "make_segment", ())
    assert outcome.status == "ok", outcome
    _, uid = outcome.value
    assert uid not in {creator for _, creator in _host_segments()}
    assert box.own_ipc is True


def test_the_fallback_records_its_own_network_and_ipc(sandbox):
    box = sandbox(IPC, isolation="rlimits")
    assert box.call("codesign", "make_segment", ()).status == "ok"
    assert box.own_network is confinement.UID_FALLBACK.own_network is True
    assert box.own_ipc is True


def test_bubblewrap_records_its_namespaces_too(sandbox):
    box = sandbox(IPC)
    # (no segment: in this machine no cgroup holds the sandbox, and bubblewrap's namespace cannot
    # bound them, so a segment is refused there: test_sandbox_memory_outside_address_space.py)
    assert box.call("codesign", "uid", ()).status == "ok"
    assert box.own_network is True and box.own_ipc is True


def test_a_fallback_result_records_its_own_network_and_ipc(tmp_path):
    """What the staff read in results/<student>.json: whether the uid fallback had a network and an
    IPC namespace of its own (it shares the host's where the platform refuses them)."""
    import shutil

    from autograder.engine.grader import grade_submission
    from autograder.engine.registry import REPO_ROOT
    from autograder.engine.roster import read_roster
    from autograder.engine.results import SubmissionResult

    student = next(iter(read_roster(REPO_ROOT / "roster.txt")))
    (tmp_path / student).mkdir()
    shutil.copyfile(REPO_ROOT / "solutions" / "lec01_codesign" / "codesign.py", tmp_path / student / "codesign.py")
    result = grade_submission("lec01_codesign", tmp_path / student, isolation="rlimits")
    recorded = SubmissionResult.from_dict(result.to_dict())
    assert recorded.isolation == "rlimits"
    assert recorded.own_network is True and recorded.own_ipc is True
    assert recorded.own_proc is _hidepid_mountable()


def _hidepid_mountable() -> bool:
    """Whether this kernel mounts a proc with hidepid=invisible (Linux 5.8+), as the fallback does."""
    import os
    import subprocess

    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount -t proc -o hidepid=invisible proc /proc"], capture_output=True)
    return probe.returncode == 0 and os.geteuid() == 0


def test_the_fallback_records_whether_its_proc_lists_only_its_own_processes(sandbox):
    """The staff read whether the host's processes (their command lines) were readable."""
    box = sandbox(IPC, isolation="rlimits")
    outcome = box.call("codesign", "make_segment", ())
    assert outcome.status == "ok", outcome
    assert box.own_proc is _hidepid_mountable()
    assert sandbox(IPC).own_proc is True   # bubblewrap: a pid namespace of its own


PROCESSES = {
    "codesign.py": """
        import os

        def command_lines():
            seen = []
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as handle:
                            seen.append(handle.read().decode("utf-8", "replace"))
                    except OSError:
                        pass
            return seen
    """,
}


@pytest.mark.parametrize("isolation", ["rlimits", "bubblewrap"])
def test_no_process_of_another_account_is_listed_in_the_sandbox(sandbox, isolation):
    """The host's processes (the instructor's shell, a database started with its password on the
    command line, a classmate's worker graded at once) are not in the sandbox's /proc: bubblewrap
    has a pid namespace, the uid fallback a /proc of its own that shows only its uid's processes
    (hidepid=invisible, where the kernel has it: Linux 5.8+)."""
    import subprocess
    import sys
    import uuid

    secret = f"--password=cs349e-{uuid.uuid4().hex}"
    host = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", secret])
    try:
        outcome = sandbox(PROCESSES, isolation=isolation).call("codesign", "command_lines", ())
        assert outcome.status == "ok", outcome
        assert not [line for line in outcome.value if secret in line]
        assert outcome.value, "the sandbox still sees its own processes"
    finally:
        host.kill()
        host.wait()


CHANNELS = {
    "codesign.py": """
        import ctypes, os

        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        KEY = 0x349E0001

        def publish(text):
            ident = libc.shmget(KEY, 4096, 0o666 | 0o1000)          # IPC_CREAT, open to every uid
            address = libc.shmat(ident, None, 0)
            ctypes.memmove(address, text.encode(), len(text))
            queue = libc.mq_open(b"/cs349e-answers", os.O_CREAT | os.O_WRONLY, 0o666, None)
            if queue >= 0:
                libc.mq_send(queue, text.encode(), len(text), 0)
            return ident, queue

        def listen():
            ident = libc.shmget(KEY, 0, 0)
            segment = ctypes.string_at(libc.shmat(ident, None, 0), 16).rstrip(b"\\0").decode() if ident >= 0 else None
            queue = libc.mq_open(b"/cs349e-answers", os.O_RDONLY | os.O_NONBLOCK)
            message = None
            if queue >= 0:
                buffer = ctypes.create_string_buffer(8192)
                size = libc.mq_receive(queue, buffer, 8192, None)
                message = buffer.raw[:size].decode() if size > 0 else None
            return segment, message
    """,
}


def test_two_students_graded_at_once_cannot_pass_answers_through_ipc(sandbox):
    """-j 2 with the uid fallback: one student's code publishes its answers in a SysV segment and a
    POSIX message queue under a fixed key and name, open to every uid; the classmate's code,
    graded at the same time, reads them. Each sandbox's IPC namespace is its own: nothing arrives."""
    alice = sandbox(CHANNELS, isolation="rlimits")
    bob = sandbox(CHANNELS, isolation="rlimits")
    published = alice.call("codesign", "publish", ("q1=42",))
    assert published.status == "ok" and published.value[0] >= 0, published
    outcome = bob.call("codesign", "listen", ())
    assert outcome.status == "ok", outcome
    assert outcome.value == [None, None] or outcome.value == (None, None), outcome.value
