"""The parent's memory does not depend on what a submission replies or prints: replies beyond a
call's bound are refused unread (even from a worker that ignores the bound), forged end-of-output
markers are plain output, and the marker nonce is nowhere the student's code can read it."""

from __future__ import annotations

import resource

import numpy as np
from sandbox_helpers import FAST

from autograder.sandbox import Call
from autograder.sandbox.codec import MARKER_HEAD, MARKER_TAIL, end_marker
from autograder.sandbox.output import OutputCollector

HOSTILE = {
    "codesign.py": """
        import json, os, socket, struct, sys, time
        import numpy as np

        def fifty_mb(*args):
            return np.zeros(6_250_000)

        def small(*args):
            return np.arange(4.0)

        def request_seen():
            # The worker's request for this call, found by walking up the frames.
            frame = sys._getframe(1)
            while frame is not None:
                spec = frame.f_locals.get("spec")
                if isinstance(spec, dict) and spec.get("function") == "request_seen":
                    return json.dumps(spec, sort_keys=True)
                frame = frame.f_back
            return None

        def lying_frame():
            # Write a frame announcing 1 GiB straight to the channel, past the worker's checks.
            for fd in range(3, 64):
                try:
                    sock = socket.socket(fileno=os.dup(fd))
                    if sock.type == socket.SOCK_STREAM:
                        sock.sendall(struct.pack("<4sIQ", b"SBX1", 2, 1 << 30) + b"{}" + b"\\0" * (1 << 20))
                except OSError:
                    pass
            time.sleep(30)

        def secrets_visible():
            found = {}
            for path in ("/proc/self/cmdline", "/proc/self/environ"):
                try:
                    found[path] = open(path, "rb").read().decode("latin-1")
                except OSError as exc:
                    found[path] = str(exc)
            for fd in map(int, os.listdir("/proc/self/fd")):
                try:   # any readable pipe or file (not the channel socket: that would eat requests)
                    target = os.readlink(f"/proc/self/fd/{fd}")
                    found[f"fd {fd}"] = target
                    if fd > 2 and not target.startswith("socket:"):
                        os.set_blocking(fd, False)
                        found[f"fd {fd}"] += os.read(fd, 1 << 16).decode("latin-1")
                except OSError:
                    pass
            return found
    """,
}


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_a_reply_beyond_its_bound_is_refused_and_never_allocated(sandbox):
    box = sandbox(HOSTILE)
    assert box.call("codesign", "small").status == "ok"   # warm: the first decode allocates a little
    before = _peak_rss_bytes()
    worker = box._resources.worker
    outcomes = box.call_many([Call("codesign", "fifty_mb", (i,), reply_bytes=100_000) for i in range(20)])
    assert {o.status for o in outcomes} == {"too_large"}
    assert all(o.value is None for o in outcomes)
    # 20 replies of 50 MB: not one of them was read into the parent, and the worker carries on.
    assert _peak_rss_bytes() - before < 30 * 2**20
    assert box._resources.worker is worker
    ok = box.call("codesign", "small", reply_bytes=100_000)
    assert ok.status == "ok" and np.array_equal(ok.value, np.arange(4.0))


def test_a_worker_that_ignores_the_bound_is_cut_off_from_the_frame_prefix(sandbox):
    box = sandbox(HOSTILE)
    before = _peak_rss_bytes()
    outcome = box.call("codesign", "lying_frame", reply_bytes=100_000)
    assert outcome.status == "protocol_error" and "exceeds" in outcome.exc_message
    assert _peak_rss_bytes() - before < 30 * 2**20
    assert box.call("codesign", "small").status == "ok"   # a fresh worker carries on


def test_the_marker_nonce_is_not_readable_inside_the_sandbox(sandbox):
    box = sandbox(HOSTILE)
    nonce = box._resources.worker.output._prefix[len(MARKER_HEAD):-1].decode()
    outcome = box.call("codesign", "secrets_visible")
    assert outcome.status == "ok", outcome
    assert "/proc/self/cmdline" in outcome.value
    leaks = [where for where, text in outcome.value.items() if nonce in text]
    assert leaks == []


def test_forged_markers_with_fresh_ids_are_plain_output():
    collector = OutputCollector(b"n0nce", cap=1000)
    collector.expect([7])
    forged = b"".join(end_marker(b"n0nce", 10**9 + i) for i in range(200_000))
    for start in range(0, len(forged), 65536):
        collector.feed(forged[start:start + 65536])
    assert collector._finished == {}
    collector.feed(b"real output" + end_marker(b"n0nce", 7))
    text = collector.take(7)
    assert text.endswith("real output") or "bytes dropped" in text
    assert len(collector._kept) == 0 and collector._finished == {}


def test_forged_marker_for_a_request_in_flight_only_ends_its_segment():
    collector = OutputCollector(b"n0nce", cap=1000)
    collector.expect([3, 4])
    collector.feed(b"a" + end_marker(b"n0nce", 3) + b"b" + end_marker(b"n0nce", 3) + b"c" + MARKER_TAIL)
    assert set(collector._finished) == {3}
    assert collector.take(3) == "a"


def test_a_calls_reply_bound_never_reaches_the_sandbox(sandbox):
    """The bound is the grader's, computed from the expected answer: a "must raise" case has the
    smallest. Student code reads the request it is called from, so the bound stays outside."""
    box = sandbox(HOSTILE)
    bounded = box.call("codesign", "request_seen", reply_bytes=123_457)
    unbounded = box.call("codesign", "request_seen")
    assert bounded.status == unbounded.status == "ok" and bounded.value is not None
    assert "123457" not in bounded.value
    assert json_without_id(bounded.value) == json_without_id(unbounded.value)


def json_without_id(text: str) -> dict:
    import json
    spec = json.loads(text)
    spec.pop("id")
    return spec
