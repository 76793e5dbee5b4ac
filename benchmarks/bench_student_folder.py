"""Time what a student waits for, against the budgets the handout states: the public tests
(`pytest` in the released folder, target < 5 s), the answered notebook run top to bottom
(target < 10 s) and one variant's answer key (target < 1 s; a cached one < 10 ms).

Run: python benchmarks/bench_student_folder.py [--repeats N]
Prints the median of N runs of each and whether it meets its target. These budgets are not
asserted in tests/: on a shared machine a test would fail for the machine's load, not the kit.
Memory: not measured; no target is about memory.
"""

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "assignment")]

from autograder.build import write_reference_submission  # noqa: E402  (needs the path above)
from autograder.engine.registry import load_config  # noqa: E402
from notebook_exec import execute_notebook  # noqa: E402
from solutions.lec01_codesign import variants  # noqa: E402
from solutions.lec01_codesign.answers import answer_key  # noqa: E402
from student_folders import copy_release, run_in_folder  # noqa: E402
from timing import median_seconds  # noqa: E402  (benchmarks/ is the script folder)

TARGETS = {"public tests, skeleton": 5.0, "public tests, reference": 5.0,
           "answered notebook, top to bottom": 10.0, "one new variant's answer key": 1.0,
           "a cached answer key": 0.01}


def measure(repeats: int) -> dict[str, float]:
    config = load_config("lec01_codesign")
    with tempfile.TemporaryDirectory() as tmp:
        skeleton = copy_release(Path(tmp) / "skeleton")
        reference = copy_release(Path(tmp) / "reference")
        write_reference_submission("lec01_codesign", reference)
        pytest_args = ("-m", "pytest", "-q", "-p", "no:cacheprovider")
        names = [item.id for item in config.items_of("number", "choice")]
        draws = iter(range(10**6))
        answer_key()  # warm imports
        times = {
            "public tests, skeleton": median_seconds(lambda: run_in_folder(skeleton, *pytest_args), repeats),
            "public tests, reference": median_seconds(lambda: run_in_folder(reference, *pytest_args), repeats),
            "answered notebook, top to bottom": median_seconds(lambda: execute_notebook(reference, names), repeats),
            "one new variant's answer key": median_seconds(
                lambda: answer_key(variants.variant(np.random.default_rng(5000 + next(draws)))), repeats),
            "a cached answer key": median_seconds(answer_key, repeats),
        }
        shutil.rmtree(tmp, ignore_errors=True)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    times = measure(args.repeats)
    table = Table(title=f"what a student waits for (median of {args.repeats})")
    for column in ("what", "seconds", "target", "met"):
        table.add_column(column)
    for what, seconds in times.items():
        table.add_row(what, f"{seconds:.3f}", f"< {TARGETS[what]:g}", "yes" if seconds < TARGETS[what] else "NO")
    Console(width=120).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
