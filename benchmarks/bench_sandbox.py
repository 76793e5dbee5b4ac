"""Time the grading sandbox: worker start-up, per-call overhead, array transfer, restarts, and a
classmate's calls beside a CPU hog.

Run: python benchmarks/bench_sandbox.py [--repeats N] [--isolation bubblewrap rlimits]
Prints medians per isolation. Targets: worker ready (interpreter + numpy) < 0.3 s, a trivial
call a few ms at most, so that one submission grades in <= 1.5 s; a classmate's calls beside a
sandbox that forked 4 spinners take < 1.5x as long as alone (on 2 or more CPUs).
Memory: not measured; no target is about memory.
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from autograder.sandbox import Call, Limits, Sandbox, bubblewrap_problem, confinement  # noqa: E402
from autograder.sandbox import placement  # noqa: E402
from autograder.sandbox.launcher import _base_env, launch_plan  # noqa: E402
from timing import median_seconds  # noqa: E402  (benchmarks/ is the script folder)

STUDENT = """
import numpy as np

def noop():
    return None

def echo(x):
    return x

def spin():
    while True:
        pass

def work(seconds):
    import time
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass

def hog(children, seconds):
    import os, time
    for _ in range(children):   # left running after the call returns, as an import-time hog does
        if os.fork() == 0:
            stop = time.monotonic() + seconds
            while time.monotonic() < stop:
                pass
            os._exit(0)
"""
NOTEBOOK = ('{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,'
            ' "source": "import numpy as np\\nq1 = float(np.arange(10).sum())"}],'
            ' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')


def bare_process_rows(isolation, folder, repeats):
    """The launcher's own cost: bwrap + interpreter, then + numpy, without the worker protocol."""
    plan = launch_plan(isolation, folder, folder, Limits())
    rows = []
    for label, code in (("interpreter start (python -c pass)", "pass"),
                        ("interpreter + import numpy", "import numpy")):
        argv = [*plan.prefix, sys.executable, "-s", "-B", "-c", code]
        run = lambda: subprocess.run(argv, cwd=plan.cwd, env=_base_env("/tmp"), check=True)  # noqa: E731
        rows.append((label, median_seconds(run, repeats)))
    return rows


def sandbox_rows(isolation, folder, repeats):
    limits = Limits(call_timeout=0.5)
    rows = []

    def start_and_first_call():
        with Sandbox(folder, isolation=isolation, limits=limits) as box:
            box.call("codesign", "noop")

    rows.append(("Sandbox() + first call (start, numpy, import)", median_seconds(start_and_first_call, repeats)))
    with Sandbox(folder, isolation=isolation, limits=limits) as box:
        box.call("codesign", "noop")
        n = 2000
        rows.append(("trivial call round trip", median_seconds(lambda: box.call("codesign", "noop"), n)))
        batch = [Call("codesign", "noop")] * n
        rows.append((f"trivial call inside call_many({n})", median_seconds(lambda: box.call_many(batch), 3) / n))
        arr = np.random.default_rng(0).standard_normal(1 << 20)
        rows.append(("echo of a 2^20 float64 array (8 MB each way)",
                     median_seconds(lambda: box.call("codesign", "echo", (arr,)), max(3, repeats))))
        rows.append(("notebook with one cell (fork + run + reply)",
                     median_seconds(lambda: box.run_notebook("handout.ipynb", ["q1"]), repeats)))

        def timeout_then_call():
            box.call("codesign", "spin")
            box.call("codesign", "noop")

        rows.append(("timeout (0.5 s) + restart + next call, minus 0.5 s",
                     median_seconds(timeout_then_call, repeats) - 0.5))
    return rows


def neighbour_rows(isolation, folder, repeats):
    """The classmate's calls (grader and worker taking turns, 2 ms of work each) beside a sandbox
    whose 4 forked spinners run on, over the same calls alone; with and without CPU placement."""
    calls = [Call("codesign", "work", (0.002,))] * 200
    rows = []
    for placed in (True, False):
        placement.ENABLED = placed
        try:
            with Sandbox(folder, isolation=isolation) as classmate:
                classmate.call_many(calls[:5])
                alone = median_seconds(lambda: classmate.call_many(calls), repeats)
                with Sandbox(folder, isolation=isolation) as hog:
                    hog.call("codesign", "hog", (4, 600))
                    beside = median_seconds(lambda: classmate.call_many(calls), repeats)
                after = median_seconds(lambda: classmate.call_many(calls), repeats)
        finally:
            placement.ENABLED = True
        where = f"CPUs {placement.describe(classmate.cpus) or 'any'}"
        rows.append((f"classmate beside a 4-spinner hog / alone, {'placed' if placed else 'not placed'} ({where})",
                     beside / ((alone + after) / 2)))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--isolation", nargs="+", default=list(confinement.CHOICES))
    args = parser.parse_args()
    console = Console(width=120)
    probe = median_seconds(bubblewrap_problem, 5)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "student"
        folder.mkdir()
        (folder / "codesign.py").write_text(STUDENT)
        (folder / "handout.ipynb").write_text(NOTEBOOK)
        for isolation in args.isolation:
            problem = confinement.asked(isolation).problem()
            if problem:
                console.print(f"{isolation} skipped: {problem}")
                continue
            table = Table(title=f"sandbox ({isolation}), median of {args.repeats} runs")
            table.add_column("what")
            table.add_column("median", justify="right")
            rows = bare_process_rows(isolation, folder, args.repeats) + sandbox_rows(isolation, folder, args.repeats)
            for label, seconds in rows:
                table.add_row(label, f"{seconds * 1e3:.3f} ms")
            console.print(table)
            if len(os.sched_getaffinity(0)) >= 2:
                for label, ratio in neighbour_rows(isolation, folder, args.repeats):
                    console.print(f"{isolation}: {label}: {ratio:.2f}x (median of {args.repeats})")
    console.print(f"bubblewrap probe (the trial run; cached once per process): {probe * 1e3:.1f} ms median of 5")


if __name__ == "__main__":
    main()
