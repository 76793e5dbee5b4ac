"""The Gradescope runner now grades in its own process, with the answer keys and the solutions
imported (the key of the student's variant is computed there): is any of that inherited by the
worker student code runs in? A worker must start from a fresh interpreter image, never from a
fork of the grader, and must not read the grader's memory through /proc."""

from __future__ import annotations

import os

import pytest
from sandbox_helpers import needs_rlimits

import solutions.lec01_codesign.answers  # noqa: F401 - the grader holds the keys, as the runner does

PROBE = {
    "codesign.py": """
        import os, sys

        def inherited():
            return sorted(m for m in sys.modules if m.split(".")[0] in ("solutions", "autograder", "pytest"))

        def grader_memory(pid):
            read = []
            for path in (f"/proc/{pid}/mem", f"/proc/{pid}/environ", f"/proc/{pid}/maps"):
                try:
                    with open(path, "rb") as f:
                        read.append((path, len(f.read(64))))
                except OSError as err:
                    read.append((path, type(err).__name__))
            return read
    """,
}


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_a_worker_inherits_nothing_of_the_grader_that_holds_the_keys(sandbox, isolation):
    box = sandbox(PROBE, isolation=isolation)
    assert box.call("codesign", "inherited", ()).value == []
    for path, got in box.call("codesign", "grader_memory", (os.getpid(),)).value:
        assert not isinstance(got, int), f"{path} of the grader was readable: {got} bytes"


AMPLIFIES = {
    "codesign.py": """
        import os, sys
        import numpy as np

        def big_from_small():
            # The worker's own reply, written by hand: one 8 MB buffer, named by 64 array nodes.
            f = sys._getframe(1)
            server = spec = None
            while f is not None:
                loc = f.f_locals
                if spec is None and isinstance(loc.get("spec"), dict):
                    spec = loc["spec"]
                if server is None and hasattr(loc.get("self"), "send_frame"):
                    server = loc["self"]
                f = f.f_back
            enc = server.codec.Encoder(1 << 26)
            node = enc.value(np.ones(1 << 20))
            server.end_marker(spec["id"])
            server.send_frame(enc.frame({"id": spec["id"], "status": "ok", "value": [node] * 64}))
            os._exit(0)
    """,
}


def test_a_reply_cannot_make_the_grader_hold_more_than_it_sent(sandbox):
    """A reply of 8 MB whose 64 array nodes all name the same buffer: decoded as sent, the grader
    would hold 512 MB of it (with the header's room, thousands of times the reply: the grader's
    memory, and every classmate graded in it). The reply is malformed; the grader holds no copy."""
    import tracemalloc

    box = sandbox(AMPLIFIES)
    tracemalloc.start()
    try:
        outcome = box.call("codesign", "big_from_small", ())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert outcome.status == "protocol_error", outcome.status
    assert "malformed value" in outcome.exc_message
    assert peak < 64 * 2**20, f"the grader held {peak / 2**20:.0f} MiB for an 8 MiB reply"


SAME_BUFFER_VARIABLES = '''
import sys
import numpy as np
f, codec = sys._getframe(0), None
while f is not None:
    owner = f.f_locals.get("self")
    if codec is None and hasattr(owner, "send_frame") and hasattr(owner, "codec"):
        codec = owner.codec
    f = f.f_back
encode, seen = codec.Encoder._array, {}
def same_node(self, arr, tag):   # every answer names the first one's bytes
    key = (arr.__array_interface__["data"][0], id(self))
    if key not in seen:
        seen[key] = encode(self, arr, tag)
    return seen[key]
codec.Encoder._array = same_node
big = np.ones(1 << 20)
q1 = q2 = q3 = q4 = q5 = q6 = q7 = q8 = [big] * 8
'''


def test_a_notebooks_answers_cannot_make_the_grader_hold_more_than_it_sent(sandbox):
    """The same through a notebook's answers, which the grader decodes one by one from one reply:
    8 MB sent, 512 MB held as sent."""
    import tracemalloc

    from sandbox_helpers import notebook_json

    box = sandbox({"codesign.py": "", "handout.ipynb": notebook_json(SAME_BUFFER_VARIABLES)})
    tracemalloc.start()
    try:
        outcome = box.run_notebook("handout.ipynb", [f"q{i}" for i in range(1, 9)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"the grader held {peak / 2**20:.0f} MiB for an 8 MiB reply"
    assert not any(isinstance(value, list) for value in outcome.variables.values())
