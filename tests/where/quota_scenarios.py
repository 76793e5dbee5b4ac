"""Quota scenarios, run inside the cgroup v2 machine (python tests/where/quota_scenarios.py
[--parts cpu,memory] from the checkout's root, as root or as a non-root user); prints one
`WHERE-RESULT {json}` line.

- first, untimed: the course's bytecode compiled and every student's answer keys stored (the
  report names those a store carried from an earlier run already held), in one process (the reference's shared work done once, as a batch does it; it also reads from disk all
  a grading reads), so no timed grading pays a first run's costs.
- the honest classmate is examples' alice without the end-to-end lab's two measuring cells (she
  leaves them for her own machine and loses those items in every run): emulated, each runs about
  ten times its native seconds, at the notebook cells' CPU limit, so her score would depend on
  how busy the host was; and they were most of each grading's time here.
- cpu: an honest classmate graded alone at -j 2, then beside a CPU hog whose
  import starts spinning processes, then alone again (the emulated machine's speed follows the
  host's load: the two alone runs bracket it): the classmate's score and grading time each time.
- memory: two submissions whose import starts five processes that each hold 1 GiB, graded at -j 2
  (their code only: the hogs live in codesign.py's import, which the function items run; without
  a notebook each sandbox's life is that import and those calls); the grading tree's peak memory
  (benchmarks/process_tree.py: grader + sandboxes, summed PSS and RSS) and the machine's peak
  memory in use above what was in use before.
- what the grader recorded: isolation (and quota mechanism, where results record one) per result,
  grades.csv's isolation column, and the machine's cgroup facts.
Kept small: the machine is emulated (no KVM), about ten times slower than the host.
"""

from __future__ import annotations

import argparse
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


LAB_CELLS = ("encoder, sentences, pairs, encoder_provenance = load_encoder()",  # each format's whole-model
             "for name, (scheme, rotate) in END_FORMATS.items():")                 # forward pass


def honest(dest: Path, *, notebook: bool = True) -> Path:
    """The honest classmate's files in `dest`: alice's, her notebook without the lab's measuring
    cells (without `notebook`, codesign.py alone)."""
    shutil.copytree(HONEST, dest, ignore=None if notebook else shutil.ignore_patterns("*.ipynb"))
    if notebook:
        path = dest / "handout.ipynb"
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = [c for c in nb["cells"] if c["cell_type"] == "code" and any(m in "".join(c["source"]) for m in LAB_CELLS)]
        assert len(cells) == len(LAB_CELLS), "the end-to-end lab's measuring cells moved: update LAB_CELLS"
        for cell in cells:
            cell["source"] = "# 这一节留到自己的电脑上运行\n"
        path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return dest


def hogged(dest: Path, prologue: str, *, notebook: bool = True) -> Path:
    """The honest submission with `prologue` run at import: its marks if the hog is contained."""
    honest(dest, notebook=notebook)
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


# Untimed, before any grading: what a course's first grading pays once (bytecode, the keys of its
# students' variants, the files read from disk). Under emulation each grading process that met a
# new variant redid the reference's shared forward pass, at about ten times its native cost there.
PREPARE = """
import compileall
compileall.compile_dir(".", maxlevels=0, quiet=1)
for package in ("autograder", "solutions"):
    compileall.compile_dir(package, quiet=1)
from autograder.engine.key_cache import is_stored
from autograder.engine.variants import canonical_json, keys_for, params_for
stored = [s for s in {students!r} if is_stored({assignment!r}, canonical_json(params_for({assignment!r}, s)))]
print("STORED-BEFORE " + ",".join(stored))
for student in {students!r}:
    keys_for({assignment!r}, student)
"""


PARTS = {"cpu": ("alice", "hog"), "memory": ("hog1", "hog2")}  # each part's students


def prepare(students: tuple[str, ...]) -> tuple[float, list[str]]:
    """Seconds taken, and the students whose keys were stored before (a store carried from an earlier run)."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", PREPARE.format(students=students, assignment=ASSIGNMENT)], cwd=ROOT,
                          check=True, stdout=subprocess.PIPE, text=True)
    stored = [line.removeprefix("STORED-BEFORE ") for line in done.stdout.splitlines() if line.startswith("STORED-BEFORE ")]
    return time.monotonic() - start, [s for s in stored[-1].split(",") if s] if stored else []


def main(parts: list[str]) -> None:
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise SystemExit(f"quota_scenarios.py: unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}")
    students = tuple(s for part in parts for s in PARTS[part])
    seconds, stored = prepare(students)
    report = {"cgroup": cgroup_facts(), "parts": parts, "prepare_seconds": seconds, "keys_stored_before": stored}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if "cpu" in parts:
            alone = tmp / "alone"
            honest(alone / "alice")
            report["cpu_alone"] = grade(alone, tmp / "out-alone")
            beside = tmp / "beside"
            honest(beside / "alice")
            hogged(beside / "hog", CPU_HOG)
            report["cpu_beside"] = grade(beside, tmp / "out-beside")
            report["cpu_alone_after"] = grade(alone, tmp / "out-alone-after")  # the host's load drifts
        if "memory" in parts:
            memory = tmp / "memory"
            hogged(memory / "hog1", MEMORY_HOG, notebook=False)
            hogged(memory / "hog2", MEMORY_HOG, notebook=False)
            report["memory"] = grade(memory, tmp / "out-memory", watch_memory=True)
    print("WHERE-RESULT " + json.dumps(report, ensure_ascii=False))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="quota scenarios on the cgroup v2 machine")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    main([part for part in parser.parse_args().parts.split(",") if part])
