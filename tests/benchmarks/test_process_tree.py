"""Does the process-tree sampler see the memory and CPU of grandchildren, which RUSAGE misses?"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from process_tree import TreeSampler, descendants  # noqa: E402

# A child that starts a grandchild holding ~200 MB and burning CPU for a moment.
GRANDCHILD = "import time; b = bytearray(200 * 2**20); t = time.process_time()\nwhile time.process_time() - t < 0.6: pass"
CHILD = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {GRANDCHILD!r}])"


def test_sampler_sums_the_whole_tree():
    proc = subprocess.Popen([sys.executable, "-c", CHILD])
    with TreeSampler(proc.pid, interval=0.05) as sampler:
        proc.wait()
    stats = sampler.stats
    assert stats.samples >= 3 and stats.peak_processes >= 2
    assert stats.peak_rss_bytes >= 200 * 2**20
    assert 0 < stats.peak_pss_bytes <= stats.peak_rss_bytes
    assert stats.cpu_seconds >= 0.4


def test_descendants_of_a_leaf_is_itself():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    try:
        assert descendants(proc.pid) == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
