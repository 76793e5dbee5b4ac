"""Grading on a Dask cluster (`grade --scheduler`) against a local `grade -j 2`, on this machine.

Run from the repository root (needs pip install '.[cluster]'):

    python benchmarks/bench_cluster.py [--runs 3] [--class-size 10] [--students 100] [--seed 0]

Starts a local cluster: a `dask scheduler` and 2 `dask worker --nthreads 1` processes on
127.0.0.1, started from this checkout (ended when the benchmark ends).

1. Side by side: a class of --class-size (the example students, copied round-robin) graded
   alternately with `python -m autograder grade -j 2 --force` and `... --scheduler ADDRESS
   --force`, --runs times each; the median wall times and their ratio. The cluster's first run
   (workers load the assignment and start their fork servers) is shown apart: a cluster serves
   many batches. The two gradebooks are compared byte for byte.
2. A simulated course on the cluster path: --students submissions (benchmarks/simulate_course.py's
   mix of correct, buggy and hostile ones), graded once through the scheduler; the throughput
   (submissions per second) and the instructor's peak memory (ru_maxrss of the `grade` process,
   which is all the instructor's machine runs), next to the same figure for the side-by-side
   class: the growth per student extrapolates to a larger course.

Memory: the instructor's side only — peak resident set (ru_maxrss) of the `grade --scheduler`
process; the workers' memory is each node's own (every sandbox is capped as in a local run).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "engine"), str(ROOT / "tests" / "cluster"),
                str(ROOT / "benchmarks")]

from dask_processes import DaskProcesses, dask_env, wait_for_worker  # noqa: E402
from simulate_course import plan_class, read_grades, write_class  # noqa: E402

ASSIGNMENT = "lec01_codesign"
EXAMPLES = ROOT / "examples" / ASSIGNMENT / "submissions"
MB = 1024**2


def grade(submissions: Path, out: Path, *extra: str) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of one `python -m autograder grade` run."""
    cmd = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(submissions), "--out", str(out), "--force",
           *extra]
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=dask_env(), stdout=subprocess.DEVNULL, stderr=log)
        _, status, usage = os.wait4(proc.pid, 0)   # this process's own rusage: its peak RSS
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            log.seek(0)
            raise SystemExit(f"{' '.join(cmd[3:])} exited {proc.returncode}: {log.read().decode()[-3000:]}")
    return wall, usage.ru_maxrss * 1024


def example_class(folder: Path, size: int) -> Path:
    examples = sorted(EXAMPLES.iterdir())
    for i in range(size):
        shutil.copytree(examples[i % len(examples)], folder / f"{examples[i % len(examples)].name}{i:03d}")
    return folder


def side_by_side(address: str, work: Path, size: int, runs: int) -> int:
    submissions = example_class(work / "class", size)
    cold, cold_rss = grade(submissions, work / "cluster", "--scheduler", address)
    local, cluster, rss = [], [], []
    for _ in range(runs):   # alternating: both see the same background load
        local.append(grade(submissions, work / "local", "-j", "2")[0])
        wall, peak = grade(submissions, work / "cluster", "--scheduler", address)
        cluster.append(wall)
        rss.append(peak)
    same = (work / "local" / "grades.csv").read_bytes() == (work / "cluster" / "grades.csv").read_bytes()
    lm, cm = statistics.median(local), statistics.median(cluster)
    print(f"1. {size} submissions, {runs} runs each, alternating (median wall time of the whole command)")
    print(f"   local  grade -j 2                 {lm:6.2f} s   {size / lm:5.2f} submissions/s   "
          f"(runs: {', '.join(f'{t:.1f}' for t in local)})")
    print(f"   dask   grade --scheduler (2 x 1)  {cm:6.2f} s   {size / cm:5.2f} submissions/s   "
          f"(runs: {', '.join(f'{t:.1f}' for t in cluster)}; first, cold workers: {cold:.1f} s)")
    print(f"   ratio  cluster / local            {cm / lm:6.2f}x wall time")
    print(f"   grades.csv byte-identical: {'yes' if same else 'NO'}; instructor peak RSS "
          f"{statistics.median(rss) / MB:.0f} MB (cold run {cold_rss / MB:.0f} MB)")
    return statistics.median(rss)


def course(address: str, work: Path, students: int, seed: int, small_rss: int, small_size: int) -> bool:
    rng = random.Random(seed)
    submissions = work / "course"
    roster = write_class(plan_class(students, rng), submissions, work / "course-work", rng)
    kinds = {kind: sum(1 for k, _ in roster.values() if k == kind) for kind in ("correct", "buggy", "hostile")}
    wall, peak = grade(submissions, work / "course-out", "--scheduler", address)
    grades = read_grades(work / "course-out")
    per_student = max(0.0, (peak - small_rss) / max(1, students - small_size))
    print(f"\n2. simulated course on the cluster path: {students} submissions "
          f"({', '.join(f'{n} {k}' for k, n in kinds.items())}), seed {seed}")
    print(f"   wall time {wall:.1f} s, throughput {students / wall:.2f} submissions/s "
          f"({wall / students:.2f} s per submission on 2 workers)")
    print(f"   instructor peak RSS {peak / MB:.0f} MB ({small_rss / MB:.0f} MB for {small_size}): "
          f"{per_student / 1024:.0f} KB more per student")
    hours = 10_000 / (students / wall) / 3600
    print(f"   extrapolated to 10,000 submissions: {hours:.1f} h on these 2 workers ({hours * 2 / 64 * 60:.0f} min on "
          f"64 worker cores, if the throughput scales with the workers); instructor peak RSS "
          f"≈ {(peak + per_student * (10_000 - students)) / MB:.0f} MB")
    print(f"   grades.csv rows {len(grades)} / {students}")
    return len(grades) == students


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--class-size", type=int, default=10)
    parser.add_argument("--students", type=int, default=100, help="size of the simulated course (0: skip it)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before (the machine may be shared: "
          f"read the ratios)\n")
    with tempfile.TemporaryDirectory(prefix="cs349e-bench-cluster-") as tmp:
        work = Path(tmp)
        (work / "logs").mkdir()
        processes = DaskProcesses(work / "logs")
        try:
            address = processes.scheduler(cwd=ROOT)
            for name in ("bench-worker-1", "bench-worker-2"):
                processes.worker(address, name, cwd=ROOT)
            from distributed import Client
            with Client(address, timeout=60, set_as_default=False) as client:
                for name in ("bench-worker-1", "bench-worker-2"):
                    wait_for_worker(client, name)
            small_rss = side_by_side(address, work, args.class_size, args.runs)
            complete = True
            if args.students:
                complete = course(address, work, args.students, args.seed, small_rss, args.class_size)
        finally:
            processes.stop()
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
