"""The uid fallback's disk watchdog counts the files a sandbox's processes hold open after deleting
them (test_sandbox_fallback_disk.py). It read them through /proc/<pid>/fd as root; a container's
root (Docker's default capabilities) has no CAP_SYS_PTRACE, so the kernel refused every one and the
watchdog counted nothing: a student could keep up to 4,096 deleted files open in each of 16
processes, each under the 64 MB file cap, and fill the grading machine's disk for the whole class."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

from autograder.engine.registry import REPO_ROOT

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="only a root grader gives up its uid"),
    pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) is not installed"),
]

UID = 61_337   # a uid no account uses: the sandbox's
HELD = 8 * 1024 * 1024
# Docker's default: root without CAP_SYS_PTRACE (its bounding set lacks it)
AS_IN_A_CONTAINER = ["setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace"]


def _holder(path: str, *, dumpable: bool) -> subprocess.Popen:
    """A process of the sandbox's uid that writes HELD bytes into `path` and keeps it open."""
    code = textwrap.dedent(f"""
        import ctypes, sys
        if not {dumpable}:
            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0
        handle = open({path!r}, "r+b")
        handle.write(b"x" * {HELD})
        handle.flush()
        print("held", flush=True)
        sys.stdin.read()
    """)
    holder = subprocess.Popen(["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", sys.executable, "-c", code],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def _measured(device: int, *prefix: str) -> subprocess.CompletedProcess:
    code = (f"from autograder.sandbox.open_files import deleted_but_open; "
            f"held, hidden = deleted_but_open({UID}, {{{device}}}); print(held, sorted(hidden))")
    return subprocess.run([*prefix, sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)


@pytest.fixture
def deleted_file():
    """A file the sandbox's uid may write, in a folder it cannot change, deleted once it is open."""
    folder = tempfile.mkdtemp(prefix="cs349e-held-", dir="/var/tmp")
    os.chmod(folder, 0o755)
    path = os.path.join(folder, "held")
    with open(path, "wb"):
        pass
    os.chown(path, UID, UID)
    holders = []

    def hold(*, dumpable: bool = True) -> tuple[int, int]:
        holders.append(_holder(path, dumpable=dumpable))
        device = os.stat(path).st_dev
        os.unlink(path)
        return device, holders[-1].pid

    yield hold
    for holder in holders:
        holder.kill()
        holder.wait()
    shutil.rmtree(folder)


@pytest.mark.parametrize("prefix", [[], AS_IN_A_CONTAINER], ids=["root", "root without CAP_SYS_PTRACE"])
def test_a_deleted_file_held_open_is_counted(deleted_file, prefix):
    device, _ = deleted_file()
    result = _measured(device, *prefix)
    assert result.returncode == 0, result.stderr
    held, hidden = result.stdout.split(maxsplit=1)
    assert int(held) >= HELD and hidden.strip() == "[]", result.stdout


def test_a_process_that_hides_its_files_is_named_where_they_cannot_be_read(deleted_file):
    """A non-dumpable process's open files are closed even to its own uid without CAP_SYS_PTRACE: the
    reading cannot count them, so it names the process rather than count 0 (the watchdog then stops
    the sandbox, test_sandbox_fallback_disk.py)."""
    device, holder = deleted_file(dumpable=False)
    result = _measured(device, *AS_IN_A_CONTAINER)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", f"[{holder}]"], result.stdout


def test_with_cap_sys_ptrace_a_non_dumpable_process_is_read_as_root(deleted_file):
    device, _ = deleted_file(dumpable=False)
    result = _measured(device)
    held, hidden = result.stdout.split(maxsplit=1)
    assert int(held) >= HELD and hidden.strip() == "[]", result.stdout
