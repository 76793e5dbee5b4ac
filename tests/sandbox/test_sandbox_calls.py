"""Calls into student code: values, exceptions, timeouts and crashes, and recovery after each."""

from __future__ import annotations

import signal
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sandbox_helpers import FAST

from autograder.sandbox import Call, Rebuilt, Sandbox, Unsupported

ROOT = Path(__file__).resolve().parents[2]

GOOD = {
    "codesign.py": """
        import numpy as np

        def add(a, b):
            print("adding", a, b)
            return a + b

        def describe(*args, **kwargs):
            return {"args": list(args), "kwargs": kwargs}

        def scaled(x, factor=2.0):
            return np.asarray(x) * factor

        def volume(box):
            return box.volume()

        def type_name(box):
            return type(box).__name__, box.name

        def make_object_array():
            return np.array([1, None], dtype=object)

        def too_big():
            return np.zeros(2_000_000)

        class Weird(ValueError):
            pass

        def raise_weird():
            raise Weird("custom bad input")

        def bad_input(x):
            if x < 0:
                raise ValueError(f"x must be non-negative, got {x}")
            return x
    """,
}


def test_plain_call_returns_value_and_output(sandbox):
    box = sandbox(GOOD)
    outcome = box.call("codesign", "add", (2, 3))
    assert outcome.status == "ok" and outcome.value == 5
    assert outcome.output == "adding 2 3\n"
    assert outcome.seconds > 0


def test_arguments_of_every_kind_arrive_intact(sandbox):
    box = sandbox(GOOD)
    arr = np.linspace(-1, 1, 7, dtype=np.float32)
    outcome = box.call("codesign", "describe", (arr, (1, 2), None), {"k": np.float64(0.5)})
    assert outcome.status == "ok"
    back = outcome.value
    np.testing.assert_array_equal(back["args"][0], arr)
    assert back["args"][0].dtype == np.float32
    assert back["args"][1:] == [(1, 2), None]
    assert back["kwargs"] == {"k": 0.5} and type(back["kwargs"]["k"]) is np.float64


SHAPES = """
    class Box:
        def __init__(self, name, sides):
            self.name, self.sides = name, sides

        @classmethod
        def from_dict(cls, data):
            return cls(data["name"], data["sides"])

        def volume(self):
            w, h, d = self.sides
            return w * h * d
"""
BOX = Rebuilt("shapes:Box.from_dict", {"name": "crate", "sides": [2, 3, 4]})


def test_rebuilt_arguments_use_the_declared_factory_of_the_trusted_copy(sandbox, tmp_path):
    """A Rebuilt value becomes factory(data) inside, from the overlay copy of its module."""
    trusted = tmp_path / "trusted_shapes.py"
    trusted.write_text(textwrap.dedent(SHAPES))
    box = sandbox(dict(GOOD, **{"shapes.py": "raise ImportError('student copy must not be used')"}),
                  overlay={"shapes.py": trusted}, factories=["shapes:Box.from_dict"])
    outcome = box.call("codesign", "volume", (BOX,))
    assert outcome.status == "ok", outcome
    assert outcome.value == 24
    assert box.call("codesign", "type_name", (BOX,)).value == ("Box", "crate")


def test_undeclared_factories_never_reach_the_worker(sandbox, tmp_path):
    box = sandbox(GOOD)
    with pytest.raises(ValueError, match="not declared"):
        box.call("codesign", "volume", (BOX,))
    with pytest.raises(ValueError, match="must look like"):
        Sandbox(tmp_path, factories=["os.system"])


def test_unencodable_result_comes_back_as_marker(sandbox):
    box = sandbox(GOOD)
    outcome = box.call("codesign", "make_object_array")
    assert outcome.status == "ok"
    assert isinstance(outcome.value, Unsupported) and "object" in str(outcome.value)


def test_oversized_result_is_refused_with_a_message(sandbox):
    box = sandbox(GOOD, limits=replace(FAST, result_bytes=1_000_000))
    outcome = box.call("codesign", "too_big")
    assert outcome.status == "too_large" and outcome.value is None
    assert "limit" in outcome.exc_message
    assert box.call("codesign", "add", (1, 1)).value == 2


def test_exceptions_are_reported_with_type_mro_and_own_traceback(sandbox):
    box = sandbox(GOOD)
    outcome = box.call("codesign", "bad_input", (-1,))
    assert outcome.status == "raised" and outcome.exc_type == "ValueError"
    assert "non-negative" in outcome.exc_message
    assert 'File "codesign.py"' in outcome.traceback and "worker.py" not in outcome.traceback
    weird = box.call("codesign", "raise_weird")
    assert weird.exc_type == "Weird" and "ValueError" in weird.exc_mro


def test_missing_function_is_attribute_error(sandbox):
    box = sandbox(GOOD)
    outcome = box.call("codesign", "nope")
    assert outcome.status == "raised" and outcome.exc_type == "AttributeError"


def test_import_check_lists_public_callables(sandbox):
    box = sandbox(GOOD)
    outcome = box.import_check("codesign")
    assert outcome.status == "ok"
    assert "add" in outcome.value and "Weird" in outcome.value and "np" not in outcome.value
    assert outcome.value == sorted(outcome.value)


@pytest.mark.parametrize("files, exc_type", [
    ({"codesign.py": "def f(:\n    pass\n"}, "SyntaxError"),
    ({}, "ModuleNotFoundError"),
    ({"codesign.py": "import solutions\n"}, "ModuleNotFoundError"),
    ({"codesign.py": "import sys\nsys.exit(3)\n"}, "SystemExit"),
])
def test_import_failures_are_raised_during_import(sandbox, files, exc_type):
    box = sandbox(files)
    first = box.call("codesign", "anything")
    assert first.status == "raised" and first.exc_type == exc_type and first.during_import
    assert box.import_check("codesign").exc_type == exc_type


def test_empty_module_imports_but_has_no_functions(sandbox):
    box = sandbox({"codesign.py": ""})
    assert box.import_check("codesign").value == []
    assert box.call("codesign", "add").exc_type == "AttributeError"


HOSTILE = {
    "codesign.py": """
        import ctypes, os, signal, sys, time

        def ok():
            return "fine"

        def exit_quietly():
            sys.exit(4)

        def hard_exit():
            print("bye")
            os._exit(7)

        def segfault():
            ctypes.string_at(0)

        def interrupt():
            raise KeyboardInterrupt

        def sigint_self():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)

        def spin():
            while True:
                pass

        def spin_swallowing():
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass

        def sleep_forever():
            time.sleep(3600)

        def close_channel():
            for fd in range(3, 64):
                try:
                    os.close(fd)
                except OSError:
                    pass
            return "closed"
    """,
}


def test_sys_exit_in_a_function_is_raised_systemexit(sandbox):
    box = sandbox(HOSTILE)
    outcome = box.call("codesign", "exit_quietly")
    assert outcome.status == "raised" and outcome.exc_type == "SystemExit"
    assert "4" in outcome.exc_message
    assert box.call("codesign", "ok").value == "fine"


def test_keyboard_interrupt_is_raised_not_fatal(sandbox):
    box = sandbox(HOSTILE)
    assert box.call("codesign", "interrupt").exc_type == "KeyboardInterrupt"
    assert box.call("codesign", "sigint_self").exc_type == "KeyboardInterrupt"
    assert box.call("codesign", "ok").value == "fine"


@pytest.fixture
def grader_ignoring_sigint():
    """A grader started as a background job of a script (or under nohup-like wrappers) inherits
    SIGINT and SIGQUIT ignored, and may run with signals blocked."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGQUIT)}
    for sig in saved:
        signal.signal(sig, signal.SIG_IGN)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@pytest.mark.usefixtures("worker_start", "grader_ignoring_sigint")
def test_how_the_grader_was_started_does_not_change_student_code_signals(sandbox):
    """Student code sees the signal state of a fresh interpreter, whatever the grader inherited:
    a submission that interrupts itself gets KeyboardInterrupt wherever it is graded."""
    box = sandbox({"codesign.py": textwrap.dedent(HOSTILE["codesign.py"]) + textwrap.dedent("""
        def signal_state():
            blocked = open("/proc/self/status").read().split("SigBlk:")[1].split()[0]
            return (signal.getsignal(signal.SIGINT) is signal.default_int_handler,
                    signal.getsignal(signal.SIGQUIT) == signal.SIG_DFL, int(blocked, 16))
    """)})
    assert box.call("codesign", "signal_state").value == (True, True, 0)
    assert box.call("codesign", "sigint_self").exc_type == "KeyboardInterrupt"
    assert box.call("codesign", "ok").value == "fine"


@pytest.mark.parametrize("function, reason", [
    ("hard_exit", "exit status 7"),
    ("segfault", "SIGSEGV"),
])
def test_crashes_are_reported_and_the_next_call_works(sandbox, function, reason):
    box = sandbox(HOSTILE)
    outcome = box.call("codesign", function)
    assert outcome.status == "crashed" and reason in outcome.exc_message
    if function == "hard_exit":
        assert outcome.output.startswith("bye")
    assert box.call("codesign", "ok").value == "fine"


def test_worker_that_closes_its_channel_is_crashed_and_replaced(sandbox):
    box = sandbox(HOSTILE)
    outcome = box.call("codesign", "close_channel")
    assert outcome.status in ("crashed", "protocol_error")
    assert box.call("codesign", "ok").value == "fine"


@pytest.mark.parametrize("function, cause", [("spin", "cpu"), ("spin_swallowing", "cpu"), ("sleep_forever", "blocked")])
def test_timeout_kills_the_worker_and_the_next_call_reimports(sandbox, function, cause):
    """A call that never returns is ended for what it did with its time (its own CPU time spent,
    or asleep), not by a wall-clock guard; its worker goes, and the next call gets a fresh one."""
    box = sandbox(HOSTILE)
    worker = box._resources.worker
    assert worker is not None
    outcome = box.call("codesign", function, timeout=0.5)
    assert outcome.status == "timeout" and "0.5 s" in outcome.exc_message
    assert outcome.timeout_cause == cause
    assert box.call("codesign", "ok").value == "fine"
    assert box._resources.worker is not worker


def test_import_that_never_finishes_times_out_once(sandbox):
    """An import stuck in a loop costs import_timeout once, not once per call."""
    box = sandbox({"codesign.py": "while True:\n    pass\n"}, limits=replace(FAST, import_timeout=1.0))
    first = box.call("codesign", "f")
    assert first.status == "timeout" and first.during_import
    again = box.call_many([Call("codesign", "f"), Call("codesign", "g")])
    assert [o.status for o in again] == ["timeout", "timeout"]
    assert all(o.seconds == first.seconds for o in again)  # cached, not re-run


def test_call_many_keeps_per_call_outcomes_and_recovers_after_a_timeout(sandbox):
    box = sandbox(HOSTILE)
    calls = [Call("codesign", "ok"), Call("codesign", "spin"), Call("codesign", "ok"),
             Call("codesign", "hard_exit"), Call("codesign", "ok")]
    outcomes = box.call_many(calls, timeout=0.5)
    assert [o.status for o in outcomes] == ["ok", "timeout", "ok", "crashed", "ok"]
    assert outcomes[3].output.startswith("bye")


def test_call_many_attributes_output_to_each_call(sandbox):
    box = sandbox(GOOD)
    outcomes = box.call_many([Call("codesign", "add", (i, i)) for i in range(50)])
    assert [o.value for o in outcomes] == [2 * i for i in range(50)]
    assert [o.output for o in outcomes] == [f"adding {i} {i}\n" for i in range(50)]


def test_bad_names_and_arguments_are_refused_before_anything_runs(sandbox):
    box = sandbox(GOOD)
    with pytest.raises(ValueError, match="module name"):
        box.call("../codesign", "add")
    with pytest.raises(ValueError, match="function name"):
        box.call("codesign", "add; import os")
    with pytest.raises(ValueError, match="cannot send"):
        box.call("codesign", "add", (object(), 1))
    with pytest.raises(ValueError, match="str keys"):
        box.call("codesign", "add", (), {1: 2})
    with pytest.raises(ValueError, match="timeout"):
        box.call("codesign", "add", (1, 2), timeout=0)


def test_a_closed_sandbox_refuses_calls(sandbox):
    from autograder.sandbox import SandboxError
    box = sandbox(GOOD)
    box.close()
    with pytest.raises(SandboxError, match="closed"):
        box.call("codesign", "add", (1, 2))


def test_state_is_deterministic_across_sandboxes(sandbox):
    """The same submission gives the same values and output in two sandboxes."""
    files = {"codesign.py": "import os\ndef f():\n    print(hash('abc'), os.getcwd())\n"
                            "    return sorted({'b', 'a', 'c'}), hash('abc')\n"}
    first, second = sandbox(files).call("codesign", "f"), sandbox(files).call("codesign", "f")
    assert (first.value, first.output) == (second.value, second.output)


def test_garbage_on_the_private_channel_is_a_protocol_error(sandbox):
    """Student code can find the worker's socket; what it writes there is refused, not trusted."""
    box = sandbox({"codesign.py": """
        import os, socket

        def channel():
            for fd in os.listdir("/proc/self/fd"):
                try:
                    if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                        return int(fd)
                except OSError:
                    pass

        def garbage():
            os.write(channel(), b"\\x80\\x04\\x95 definitely not a frame" * 10)
            return "sent"

        def forged():
            import json, struct
            head = json.dumps({"id": 999999, "status": "ok", "value": 1}).encode()
            os.write(channel(), struct.pack("<4sIQ", b"SBX1", len(head), 0) + head)
            return "sent"

        def ok():
            return "fine"
    """})
    garbage = box.call("codesign", "garbage")
    assert garbage.status == "protocol_error" and "magic" in garbage.exc_message
    assert box.call("codesign", "ok").value == "fine"
    forged = box.call("codesign", "forged")
    assert forged.status == "protocol_error" and "999999" in forged.exc_message
    assert box.call("codesign", "ok").value == "fine"
