"""The uid fallback's POSIX message queues where the host mounts /dev/mqueue (systemd does). The
sandbox has an IPC namespace of its own, but the queue folder it saw was the host's mount, and a
queue is made through the folder in the namespace of its mount: a student's `open("/dev/mqueue/x",
O_CREAT)` put a queue in the host's table, where a classmate graded at once (`-j 2`) opened it
and read what was sent through it, and the host's queues (256 by default) could be used up."""

from __future__ import annotations

import ctypes
import os
import subprocess
import uuid

import pytest
from sandbox_helpers import needs_rlimits

pytestmark = needs_rlimits

QUEUES = """
import ctypes, os

libc = ctypes.CDLL(None, use_errno=True)
libc.mq_timedsend.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_void_p]
libc.mq_timedreceive.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]

def post(name, answer):
    fd = os.open("/dev/mqueue/" + name, os.O_CREAT | os.O_RDWR, 0o666)
    os.fchmod(fd, 0o666)
    libc.mq_timedsend(fd, answer.encode(), len(answer), 0, None)
    return sorted(os.listdir("/dev/mqueue"))

def fetch(name):
    found = {"listed": sorted(os.listdir("/dev/mqueue"))}
    try:
        fd = os.open("/dev/mqueue/" + name, os.O_RDWR | os.O_NONBLOCK)
    except OSError as exc:
        found["opened"] = exc.errno
        return found
    buffer = ctypes.create_string_buffer(8192)
    size = libc.mq_timedreceive(fd, buffer, 8192, None, None)
    found["read"] = buffer.raw[:size].decode() if size > 0 else ""
    return found
"""


@pytest.fixture
def host_queue_folder():
    """/dev/mqueue as a systemd host mounts it (the host's IPC namespace's queues, mode 1777)."""
    folder = "/dev/mqueue"
    made = not os.path.isdir(folder)
    if made:
        os.mkdir(folder, 0o1777)
    mounted = subprocess.run(["mount", "-t", "mqueue", "mqueue", folder], capture_output=True).returncode == 0
    if not mounted:
        pytest.skip("no mqueue folder can be mounted here")
    yield folder
    subprocess.run(["umount", folder], check=False)
    if made:
        os.rmdir(folder)


def test_two_fallback_sandboxes_share_no_queue_through_the_hosts_folder(sandbox, host_queue_folder):
    name, answer = f"answers-{uuid.uuid4().hex[:8]}", "lec01: 114/114"
    poster = sandbox({"codesign.py": QUEUES}, isolation="rlimits")
    reader = sandbox({"codesign.py": QUEUES}, isolation="rlimits")
    posted = poster.call("codesign", "post", (name, answer))
    assert posted.status == "ok", posted
    assert name not in os.listdir(host_queue_folder)          # not in the host's table
    fetched = reader.call("codesign", "fetch", (name,))
    assert fetched.status == "ok", fetched
    assert name not in fetched.value["listed"] and answer not in str(fetched.value), fetched.value
