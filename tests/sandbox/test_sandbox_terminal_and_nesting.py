"""Two more doors tried from student code (both held when tried): typing into the grader's
terminal (TIOCSTI, the bubblewrap CVE-2017-5226 kind) and values nested far past any recursion
limit in a reply, which the trusted parent must decode without recursing."""

from __future__ import annotations

import pytest
from sandbox_helpers import needs_bwrap, needs_rlimits

from autograder.sandbox import Unsupported

TERMINAL = """
import fcntl, os, termios

def type_into_terminal():
    # Push a command into whatever terminal the worker can reach: its standard streams, /dev/tty.
    tried = {}
    for fd in (0, 1, 2):
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, b"x")
            tried[fd] = "typed"
        except OSError as exc:
            tried[fd] = exc.errno
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
        fcntl.ioctl(tty, termios.TIOCSTI, b"x")
        tried["tty"] = "typed"
    except OSError as exc:
        tried["tty"] = exc.errno
    return tried

def nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return {"deep": value}
"""


@needs_bwrap
def test_student_code_types_nothing_into_the_graders_terminal(sandbox):
    tried = sandbox({"codesign.py": TERMINAL}).call("codesign", "type_into_terminal").value
    assert "typed" not in tried.values(), tried


@needs_bwrap
def test_a_reply_nested_past_the_recursion_limit_reaches_the_parent_as_data(sandbox):
    """The parent decodes it (or refuses it) as data: no RecursionError in the trusted process."""
    box = sandbox({"codesign.py": TERMINAL})
    outcome = box.call("codesign", "nested", (100_000,))
    assert outcome.status in ("ok", "too_large", "unsupported"), outcome
    if outcome.status == "ok" and not isinstance(outcome.value, Unsupported):   # else: refused, as data
        depth, value = 0, outcome.value["deep"]
        while isinstance(value, list) and value:
            value, depth = value[0], depth + 1
        assert depth == 100_000 or isinstance(value, Unsupported)


@pytest.mark.parametrize("isolation", [pytest.param("rlimits", marks=needs_rlimits),
                                       pytest.param("bubblewrap", marks=needs_bwrap)])
def test_student_code_types_nothing_into_a_terminal_the_grader_was_started_from(tmp_path, isolation):
    """The grader run from an instructor's terminal (a pty as its controlling terminal and standard
    streams, legacy TIOCSTI allowed as on most kernels): a character pushed into it would be read
    by the instructor's shell as typed once the grader ends. Run in a child on a fresh pty."""
    import json
    import os
    import pty

    from autograder.sandbox import Sandbox
    from sandbox_helpers import FAST, write_files

    folder = write_files(tmp_path / "student", {"codesign.py": TERMINAL})
    pid, master = pty.fork()
    if pid == 0:
        code = 3
        try:
            with Sandbox(folder, limits=FAST, isolation=isolation) as box:
                tried = box.call("codesign", "type_into_terminal").value
            os.write(1, b"RESULT" + json.dumps(tried).encode() + b"\n")   # fd 1 is the pty (pytest holds sys.stdout)
            code = 0
        finally:
            os._exit(code)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, seen[-2000:]
    tried = json.loads(seen.split(b"RESULT", 1)[1].splitlines()[0])
    assert "typed" not in tried.values(), tried
