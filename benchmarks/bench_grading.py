"""How fast does the trusted grader grade lec01? Run from the repository root:

    python benchmarks/bench_grading.py [--runs 5] [--class-size 10] [--no-class]

1. One full-marks submission (codesign.py + answered notebook) graded with every hidden test and
   the notebook, one worker: the median wall time of --runs gradings (target <= 0.5 s), split
   into "functions" (the same submission without its notebook) and "notebook" (the rest), and
   the CPU time the sandbox used (its cgroup's). The first, cold grading (hidden tests built) is
   shown separately; the fork server is then started, as a batch starts it, and waited for. Side by side, alternating run by run, the same
   gradings with the speed-ups switched off: without the fork server (each worker a fresh
   interpreter importing numpy, the notebook child importing pyplot ahead:
   autograder/sandbox/forkserver.py, warm_notebook.py), and without anything (no shared
   matplotlib font cache either: plotting.py), with the ratios of the medians.
2. Throughput on a class of --class-size submissions (full marks, partial, buggy, skeleton,
   cheater): `-j 1` versus `-j 2`, and their ratio (target >= 1.7x on 2 cores).
Memory: not measured; no target is about memory.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.build import write_reference_submission  # noqa: E402
from autograder.engine import grade_batch, grade_submission  # noqa: E402
from autograder.engine.assignment import warm  # noqa: E402
from autograder.sandbox import forkserver_client, plotting, resolve_isolation, session  # noqa: E402

ASSIGNMENT = "lec01_codesign"
EXAMPLES = ROOT / "examples" / ASSIGNMENT / "submissions"


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


SETUPS = {   # name -> (shared font cache and notebook child forked ahead, fork server)
    "now": (True, True),
    "no fork server": (True, False),
    "as before": (False, False),
}


def switch(setup: str) -> None:
    plotting.ENABLED, forkserver_client.ENABLED = SETUPS[setup]


def one_submission(workdir: Path, runs: int, isolation: str) -> None:
    full = workdir / "full"
    write_reference_submission(ASSIGNMENT, full)
    functions_only = workdir / "functions_only"
    functions_only.mkdir()
    shutil.copyfile(full / "codesign.py", functions_only / "codesign.py")

    switch("now")
    cold, result = timed(lambda: grade_submission(ASSIGNMENT, full, isolation=isolation))
    assert result.score == result.auto_max_score, "the reference submission must get full marks"
    plotting.font_cache()   # built once per grader install: not part of a submission's time
    server = forkserver_client.prepare(isolation, wait=60)   # started once per grader process
    walls = {setup: [] for setup in SETUPS}
    cpu = {setup: [] for setup in SETUPS}
    for _ in range(runs):   # alternate, so background load hits every setup alike
        for setup in SETUPS:
            switch(setup)
            with sandbox_cpu() as used:
                walls[setup].append(timed(lambda: grade_submission(ASSIGNMENT, full, isolation=isolation))[0])
            cpu[setup].append(used[0])
    switch("now")
    functions = [timed(lambda: grade_submission(ASSIGNMENT, functions_only, isolation=isolation))[0]
                 for _ in range(runs)]
    suites = warm(ASSIGNMENT).suites
    n_cases = sum(len(s.cases) for s in suites.values())
    n_examples = sum(p.max_examples for s in suites.values() for p in s.properties)
    median = {setup: statistics.median(times) for setup, times in walls.items()}
    median_cpu = {setup: statistics.median(v) if None not in v else None for setup, v in cpu.items()}
    median_functions = statistics.median(functions)
    now = median["now"]
    print(f"one full submission ({n_cases} seeded cases, {sum(len(s.properties) for s in suites.values())} "
          f"hypothesis properties, up to {n_examples} examples, the notebook), {isolation}, fork server {server}:")
    print(f"  cold first grading       {cold:6.2f} s  (builds hidden tests; a worker started, not forked)")
    print(f"  median of {runs} gradings   {now:6.2f} s  (target <= 0.5 s: {'met' if now <= 0.5 else 'MISSED'})"
          f"{_cpu_text(median_cpu['now'])}")
    print(f"    functions only         {median_functions:6.2f} s  (sandbox start + every hidden test)")
    print(f"    notebook               {now - median_functions:6.2f} s  (the rest: executing handout.ipynb)")
    for setup in ("no fork server", "as before"):
        print(f"  {setup + ':':24s} {median[setup]:6.2f} s{_cpu_text(median_cpu[setup])}; "
              f"now {median[setup] / now:.2f}x faster")
    print(f"  nbgrader autograde (DESIGN §5) ~3.1 s per submission: {3.1 / now:.1f}x faster")


@contextlib.contextmanager
def sandbox_cpu():
    """Yields a list that holds, afterwards, the CPU seconds of every sandbox opened meanwhile
    (their cgroups'), or None without cgroups."""
    used = [0.0]
    original = session.Sandbox.close

    def close(box):
        group = box._resources.cgroup
        seconds = group.cpu_seconds() if group is not None else None
        used[0] = None if seconds is None or used[0] is None else used[0] + seconds
        original(box)

    session.Sandbox.close = close
    try:
        yield used
    finally:
        session.Sandbox.close = original


def _cpu_text(seconds: float | None) -> str:
    return "" if seconds is None else f", sandbox CPU {seconds:.2f} s"


def make_class(dest: Path, size: int, reference: Path) -> None:
    """A class: the shipped examples, then copies of the reference, `size` students in all."""
    sources = sorted(EXAMPLES.iterdir()) if EXAMPLES.is_dir() else []
    for i in range(size):
        student = dest / f"student{i:03d}"
        shutil.copytree(sources[i] if i < len(sources) else reference, student)


def busy_cores(seconds: float = 1.0) -> float:
    """Cores the rest of the machine keeps busy right now (from /proc/stat), while we sleep."""
    def busy():
        values = list(map(int, Path("/proc/stat").read_text().split("\n")[0].split()[1:]))
        return sum(values) - values[3] - values[4], os.sysconf("SC_CLK_TCK")
    (start, tick), t0 = busy(), time.perf_counter()
    time.sleep(seconds)
    return (busy()[0] - start) / tick / (time.perf_counter() - t0)


def fair_share_bound(jobs: int, background: float, cores: int) -> float:
    """Cores `jobs` CPU-bound processes get next to `background` busy cores, with fair sharing."""
    return min(jobs, cores * jobs / (jobs + background)) if jobs + background > cores else jobs


def throughput(workdir: Path, size: int, isolation: str) -> None:
    submissions = workdir / "class"
    make_class(submissions, size, workdir / "full")
    cores = os.cpu_count() or 1
    background = busy_cores()
    bound = fair_share_bound(2, background, cores) / fair_share_bound(1, background, cores)
    print(f"  other processes keep {background:.1f} of {cores} cores busy: with fair sharing the best "
          f"possible -j 2 / -j 1 ratio right now is {bound:.2f}x")
    walls = {}
    for jobs in (1, 2):
        wall, report = timed(lambda: grade_batch(ASSIGNMENT, submissions, workdir / f"out-j{jobs}", jobs=jobs,
                                                 force=True, isolation=isolation))
        assert len(report.graded) == size and not report.failed
        walls[jobs] = wall
        print(f"  -j {jobs}: {wall:6.2f} s for {size} submissions = {size / wall:5.2f} submissions/s")
    ratio = walls[1] / walls[2]
    print(f"  -j 2 / -j 1 throughput ratio {ratio:.2f}x (target >= 1.7x: {'met' if ratio >= 1.7 else 'MISSED'}; "
          f"{ratio / bound:.0%} of the best possible under the current background load)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--class-size", type=int, default=10)
    parser.add_argument("--no-class", action="store_true", help="only the one-submission figures")
    args = parser.parse_args()
    isolation = resolve_isolation("auto")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        workdir = Path(tmp)
        one_submission(workdir, args.runs, isolation)
        if not args.no_class:
            print(f"class of {args.class_size} (examples + reference copies), {isolation}:")
            throughput(workdir, args.class_size, isolation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
