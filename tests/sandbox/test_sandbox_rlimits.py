"""The fallback without bubblewrap: a plain child with rlimits, still safe for the grader."""

from __future__ import annotations

from dataclasses import replace

from sandbox_helpers import FAST

RL = dict(isolation="rlimits")

CODE = {
    "codesign.py": """
        import os, resource, sys
        import numpy as np

        def ok(x):
            print("value", x)
            return np.asarray(x) * 2

        def spin():
            while True:
                pass

        def hard_exit():
            os._exit(5)

        def sys_exit():
            sys.exit(1)

        def huge():
            return np.ones(10**11)

        def creeping():
            hoard = []
            while True:
                hoard.append(np.empty(64 * 1024**2, dtype=np.uint8))

        def env():
            return dict(os.environ), os.getcwd()

        def limits():
            return {name: resource.getrlimit(getattr(resource, name))[0]
                    for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE")}

        def import_solutions():
            import solutions
    """,
}


def test_fallback_reports_rlimits_and_calls_work(sandbox):
    box = sandbox(CODE, **RL)
    assert box.isolation == "rlimits"
    outcome = box.call("codesign", "ok", ([1.5, 2.0],))
    assert outcome.status == "ok" and outcome.value.tolist() == [3.0, 4.0]
    assert outcome.output == "value [1.5, 2.0]\n"


def test_fallback_applies_rlimits_and_a_scrubbed_environment(sandbox, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET", "s3cret")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    box = sandbox(CODE, **RL)
    limits = box.call("codesign", "limits").value
    assert limits == {"RLIMIT_AS": FAST.memory_bytes, "RLIMIT_CPU": FAST.cpu_seconds,
                      "RLIMIT_FSIZE": FAST.file_bytes, "RLIMIT_CORE": 0}
    env, cwd = box.call("codesign", "env").value
    assert cwd == str(box.workdir)
    assert "GRADER_SECRET" not in env and "NBGRADER_EXECUTION" not in env
    assert env["CS349E_TRUSTED_GRADING"] == "1" and env["OMP_NUM_THREADS"] == "1"


def test_fallback_does_not_put_the_project_on_sys_path(sandbox):
    assert sandbox(CODE, **RL).call("codesign", "import_solutions").exc_type == "ModuleNotFoundError"


def test_fallback_timeouts_and_crashes_recover(sandbox):
    box = sandbox(CODE, **RL)
    assert box.call("codesign", "spin", timeout=0.5).status == "timeout"
    crashed = box.call("codesign", "hard_exit")
    assert crashed.status == "crashed" and "exit status 5" in crashed.exc_message
    assert box.call("codesign", "sys_exit").exc_type == "SystemExit"
    assert box.call("codesign", "ok", (1,)).value == 2


def test_fallback_memory_cap(sandbox):
    box = sandbox(CODE, limits=replace(FAST, memory_bytes=768 * 1024**2), **RL)
    assert box.call("codesign", "huge").exc_type == "MemoryError"
    creeping = box.call("codesign", "creeping")
    assert creeping.status == "crashed" or creeping.exc_type == "MemoryError"
    assert box.call("codesign", "ok", (1,)).value == 2
