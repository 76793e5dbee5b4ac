"""The README's fast lane, `pytest -m "not slow"`: does it select the in-process tests, leave out
every area and file tests/lanes.py names slow, and still hold hundreds of tests?"""

import subprocess
import sys

from lanes import SLOW_AREAS, SLOW_FILES
from core.script_output import REPO


def test_the_fast_lane_is_the_in_process_tests():
    done = subprocess.run([sys.executable, "-m", "pytest", "-m", "not slow", "--collect-only", "-q",
                           "-p", "no:cacheprovider"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    files = {line.split("::")[0].removeprefix("tests/") for line in ids}
    assert len(ids) > 500
    assert not {f for f in files if f.split("/")[0] in SLOW_AREAS or f in SLOW_FILES}
    assert {"solutions/test_quantize.py", "core/test_hw_specs.py", "build/test_leak.py"} <= files
