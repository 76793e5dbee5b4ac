"""Time the reference quantize beside an ml_dtypes-based implementation and one memory pass.

Run: python benchmarks/bench_quantize.py [--repeats N] [--sizes 20 24]
Prints the median of N runs per (scheme, size), the ratio to the ml_dtypes-based version
(target: every scheme <= 3x) and to np.copy, and the wall time of the lecture demo.
Memory: not measured; no target is about memory.
"""

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import oracles  # noqa: E402  (needs the path above)
from solutions.lec01_codesign import SCHEMES, quantize, to_e2m1  # noqa: E402
from timing import median_seconds  # noqa: E402  (benchmarks/ is the script folder)

TARGET_RATIO = 3.0


def lecture_to_e2m1(y):
    """The lecture's argmin version (ties toward the smaller value), kept for the speed comparison."""
    grid = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    a = np.minimum(np.abs(y), 6.0)
    return np.sign(y) * grid[np.abs(a[..., None] - grid).argmin(axis=-1)]


def element_cast_table(repeats):
    """to_e2m1 alone at 2^20: the reference, the lecture's argmin and a bare ml_dtypes cast."""
    y = np.random.default_rng(1).uniform(-8, 8, 1 << 20)
    y32 = y.astype(np.float32)
    times = {
        "reference to_e2m1": median_seconds(lambda: to_e2m1(y), repeats),
        "lecture argmin to_e2m1": median_seconds(lambda: lecture_to_e2m1(y), repeats),
        "ml_dtypes cast (float32 in)": median_seconds(lambda: y32.astype(oracles.E2M1).astype(np.float64), repeats),
    }
    base = times["ml_dtypes cast (float32 in)"]
    table = Table(title="to_e2m1 on 2^20 values")
    for col in ("implementation", "median (s)", "ratio to ml_dtypes cast"):
        table.add_column(col, justify="right")
    for name, t in times.items():
        table.add_row(name, f"{t:.4f}", f"{t / base:.2f}")
    return table


def demo_seconds(repeats):
    cmd = [sys.executable, "-m", "solutions.lec01_codesign"]
    return median_seconds(lambda: subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True), repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 24], help="log2 of the tensor sizes")
    args = parser.parse_args()

    table = Table(title=f"quantize, median of {args.repeats} runs")
    for col in ("scheme", "n", "reference (s)", "ml_dtypes (s)", "np.copy (s)", "ref / ml_dtypes", "ref / copy", "within 3x"):
        table.add_column(col, justify="right")
    worst = 0.0
    for log_n in args.sizes:
        x = np.random.default_rng(0).standard_t(df=5, size=1 << log_n) * 0.02
        t_copy = median_seconds(lambda: np.copy(x), args.repeats)
        for scheme in SCHEMES:
            t_ref = median_seconds(lambda: quantize(x, scheme), args.repeats)
            t_ml = median_seconds(lambda: oracles.quantize(x, scheme), args.repeats)
            ratio = t_ref / t_ml
            worst = max(worst, ratio)
            table.add_row(scheme, f"2^{log_n}", f"{t_ref:.4f}", f"{t_ml:.4f}", f"{t_copy:.4f}",
                          f"{ratio:.2f}", f"{t_ref / t_copy:.0f}", "yes" if ratio <= TARGET_RATIO else "NO")
    console = Console(width=120)
    console.print(table)
    console.print(element_cast_table(args.repeats))
    console.print(f"worst reference / ml_dtypes ratio: {worst:.2f} (target <= {TARGET_RATIO})")
    console.print(f"python -m solutions.lec01_codesign: {demo_seconds(3):.2f} s median of 3 (target < 1.5 s)")


if __name__ == "__main__":
    main()
