"""Does a submission whose every call is slow stay within its time budget?"""

import time

from autograder.engine.cases import Call
from autograder.engine.invoke import StudentCode
from autograder.sandbox import Limits, Sandbox

SLOW = "import time\ndef slow(i):\n    time.sleep(0.25)\n    return i\n"


def test_calls_stop_within_one_call_timeout_of_the_deadline(tmp_path):
    (tmp_path / "codesign.py").write_text(SLOW)
    limits = Limits(call_timeout=0.3)
    with Sandbox(tmp_path, limits=limits) as box:
        code = StudentCode(box, "codesign", deadline=time.monotonic() + 2.0)
        code.load()
        started = time.monotonic()
        replies = code.call_many([Call("slow", (i,)) for i in range(40)])
        spent = time.monotonic() - started
    made = [r for r in replies if r.outcome is not None]
    assert spent < 2.0 + limits.call_timeout + 0.5  # unbounded chunks (1, 4, 16) would take 5.25 s
    assert 1 <= len(made) < 16 and all(r.outcome.value == r.call.args[0] for r in made)
    assert all("总时间已用完" in r.skipped for r in replies if r.outcome is None)
