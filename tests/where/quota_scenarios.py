"""Quota scenarios, run inside the cgroup v2 machine (python tests/where/quota_scenarios.py from
the checkout's root, as root or as a non-root user); prints one `WHERE-RESULT {json}` line.

- cpu: an honest classmate (examples' alice) graded alone at -j 2 (after one untimed run that
  warms the disk cache), then beside a CPU hog whose import starts spinning processes, then alone
  again (the emulated machine's speed follows the host's load: the two alone runs bracket it): the
  classmate's score and grading time each time.
- memory: two submissions whose import starts five processes that each hold 1 GiB, graded at -j 2;
  the grading tree's peak memory (benchmarks/process_tree.py: grader + sandboxes, summed PSS and
  RSS) and the machine's peak memory in use above what was in use before.
- what the grader recorded: isolation (and quota mechanism, where results record one) per result,
  grades.csv's isolation column, and the machine's cgroup facts.
Kept small: the machine is emulated (no KVM), about ten times slower than the host.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from process_tree import TreeSampler  # noqa: E402
ASSIGNMENT = "lec01_codesign"
HONEST = ROOT / "examples" / ASSIGNMENT / "submissions" / "alice"

CPU_HOG = '''
import os as _os, time as _time
for _ in range(4):  # spinning processes the grader did not ask for
    if _os.fork() == 0:
        _stop = _time.monotonic() + 90  # longer than the classmate takes, even emulated
        while _time.monotonic() < _stop:
            pass
        _os._exit(0)
'''

MEMORY_HOG = '''
import os as _os, time as _time
import numpy as _np
for _ in range(5):  # 5 x 1 GiB, each process well under a 2 GiB address-space limit
    if _os.fork() == 0:
        try:
            _held = _np.ones(2**30 // 8)
        except MemoryError:
            _os._exit(1)
        _time.sleep(20)
        _os._exit(0)
'''


def hogged(dest: Path, prologue: str) -> Path:
    """The honest submission with `prologue` run at import: full marks if the hog is contained."""
    shutil.copytree(HONEST, dest)
    code = dest / "codesign.py"
    code.write_text(prologue + "\n" + code.read_text(encoding="utf-8"), encoding="utf-8")
    return dest


def memory_in_use() -> int:
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    kib = lambda key: int(info[key].split()[0]) * 1024  # noqa: E731
    return kib("MemTotal") - kib("MemAvailable")


def grade(submissions: Path, out: Path, *, watch_memory: bool = False) -> dict:
    """`python -m autograder grade -j 2`; with `watch_memory`, while sampling its process tree and
    the machine's memory (not in timed runs: the samplers read every process's /proc files several
    times a second, on CPUs the classmate shares)."""
    baseline, peak, done = memory_in_use(), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], memory_in_use())
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    if watch_memory:
        sampler.start()
    start = time.monotonic()
    try:
        run = subprocess.Popen([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(submissions),
                                "--out", str(out), "-j", "2", "--force"], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        with TreeSampler(run.pid, interval=0.2) if watch_memory else nullcontext() as tree:
            log, _ = run.communicate()
    finally:
        done.set()
        if watch_memory:
            sampler.join()
    results = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (out / "results").glob("*.json")}
    grades = list(csv.DictReader((out / "grades.csv").open(encoding="utf-8"))) if (out / "grades.csv").exists() else []
    return {
        "returncode": run.returncode, "seconds": time.monotonic() - start, "log": log[-3000:],
        "tree_pss_bytes": tree.stats.peak_pss_bytes if tree else None,
        "tree_rss_bytes": tree.stats.peak_rss_bytes if tree else None,
        "machine_bytes": peak[0] - baseline if watch_memory else None,
        "scores": {name: r.get("score") for name, r in results.items()},
        "times": {name: r.get("execution_time") for name, r in results.items()},
        # the items each student did not get in full: what differs when a score differs
        "lost": {name: sorted(t.get("name", "")[:60] for t in r.get("tests", [])
                              if (t.get("score") or 0) < (t.get("max_score") or 0)) for name, r in results.items()},
        "recorded": {name: {k: v for k, v in r.get("extra_data", {}).get("submission", {}).items()
                            if k in ("isolation", "quotas", "quota")} for name, r in results.items()},
        "csv": {row["student"]: {k: v for k, v in row.items() if k in ("isolation", "quotas", "quota")} for row in grades},
    }


def cgroup_facts() -> dict:
    fs = subprocess.run(["stat", "-fc", "%T", "/sys/fs/cgroup"], capture_output=True, text=True).stdout.strip()
    uid = os.getuid()
    delegated = Path(f"/sys/fs/cgroup/user.slice/user-{uid}.slice/user@{uid}.service/cgroup.controllers")
    return {"uid": uid, "fs": fs, "own": Path("/proc/self/cgroup").read_text().strip(),
            "kernel": os.uname().release,
            "root_controllers": Path("/sys/fs/cgroup/cgroup.controllers").read_text().strip(),
            "user_manager_controllers": delegated.read_text().strip() if delegated.exists() else None}


def main() -> None:
    report = {"cgroup": cgroup_facts()}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        alone = tmp / "alone"
        shutil.copytree(HONEST, alone / "alice")
        grade(alone, tmp / "out-warm")   # untimed: the first run compiles and reads everything from disk
        report["cpu_alone"] = grade(alone, tmp / "out-alone")
        beside = tmp / "beside"
        shutil.copytree(HONEST, beside / "alice")
        hogged(beside / "hog", CPU_HOG)
        report["cpu_beside"] = grade(beside, tmp / "out-beside")
        report["cpu_alone_after"] = grade(alone, tmp / "out-alone-after")  # the host's load drifts
        memory = tmp / "memory"
        hogged(memory / "hog1", MEMORY_HOG)
        hogged(memory / "hog2", MEMORY_HOG)
        report["memory"] = grade(memory, tmp / "out-memory", watch_memory=True)
    print("WHERE-RESULT " + json.dumps(report, ensure_ascii=False))


if __name__ == "__main__":
    main()
