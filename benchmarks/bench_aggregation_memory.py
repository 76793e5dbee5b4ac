"""The instructor's peak memory while a class's results are gathered: flat in the class's size?

Run: python benchmarks/bench_aggregation_memory.py [--sizes 1000 10000] [--against REV] [--result FILE]

One real result (the reference submission graded once, by REV's tree with --against: a newer
grader reads an older result, not always the other way round; or --result, a
results/<student>.json) is copied to N students with changed names into a results/ folder, and `python -m autograder grade`
runs on an empty submissions folder with that --out: it grades nobody and does exactly what ends a
batch of N (loads the assignment, rebuilds grades.csv from results/, builds and prints the
gradebook summary). The peak resident set of that process (RUSAGE_CHILDREN) is measured for every
size, and for 0 results (the baseline). Target: peak at the largest size <= 1.1x the peak at the
smallest. --against REV runs the same in a `git worktree` of REV and says whether its grades.csv
is byte-identical.
Memory: the peak resident set size of the instructor's `grade` process (the grader itself: it
starts no sandbox here); the target is its ratio between class sizes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "lec01_codesign"
TARGET_RATIO = 1.1
PLACEHOLDER = "@@student@@"


def reference_result(workdir: Path, tree: Path = ROOT) -> Path:
    """results/<student>.json of the reference submission, graded once in `tree`."""
    submissions = workdir / "reference-class"
    run([sys.executable, "-m", "autograder", "reference", ASSIGNMENT, str(submissions / "alice")], tree)
    run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(submissions), "--out", str(workdir / "reference-out")],
        tree)
    return workdir / "reference-out" / "results" / "alice.json"


def synthesize(result: Path, dest: Path, size: int) -> None:
    """dest/results/ with `size` copies of `result`, each under its own student name."""
    data = json.loads(result.read_text("utf-8"))
    submission = data["extra_data"]["submission"]
    submission["student"] = PLACEHOLDER
    if submission.get("student_id"):
        submission["student_id"] = PLACEHOLDER
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    folder = dest / "results"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(size):
        name = f"s{i:05d}"
        (folder / f"{name}.json").write_text(text.replace(PLACEHOLDER, name), "utf-8")


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:5])} failed in {cwd} (exit {done.returncode}):\n"
                         f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return done


def peak_rss_of_gathering(tree: Path, out: Path, empty: Path) -> int:
    """Peak RSS (bytes) of one `grade` that gathers out/results/ and grades nobody."""
    code = ("import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    done = run([sys.executable, "-c", code, sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(empty),
                "--out", str(out)], tree)
    return int(done.stdout.split()[-1]) * 1024   # ru_maxrss is in KiB on Linux


def git_worktree(rev: str, dest: Path) -> Path:
    subprocess.run(["git", "worktree", "add", "--detach", str(dest), rev], cwd=ROOT, check=True, capture_output=True)
    return dest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--against", metavar="REV", help="also measure this git revision, side by side")
    parser.add_argument("--result", type=Path, help="a results/<student>.json to copy (default: grade the reference)")
    args = parser.parse_args()
    sizes = sorted(set(args.sizes))
    with tempfile.TemporaryDirectory(prefix="cs349e-bench-aggregation-") as tmp:
        tmp = Path(tmp)
        empty = tmp / "no-submissions"
        empty.mkdir()
        trees = {"this tree": ROOT}
        try:
            if args.against:
                trees[args.against] = git_worktree(args.against, tmp / "against")
            result = args.result or reference_result(tmp, trees[args.against] if args.against else ROOT)
            print(f"one real result ({result.stat().st_size / 1000:.0f} kB, graded by "
                  f"{'--result' if args.result else args.against or 'this tree'}) copied to each student")
            peaks: dict[str, dict[int, int]] = {name: {} for name in trees}
            csvs: dict[str, dict[int, bytes]] = {name: {} for name in trees}
            for size in [0, *sizes]:
                classroom = tmp / f"class-{size}"
                synthesize(result, classroom, size)
                for name, tree in trees.items():   # side by side, on the same results
                    peaks[name][size] = peak_rss_of_gathering(tree, classroom, empty)
                    csvs[name][size] = (classroom / "grades.csv").read_bytes()
                shutil.rmtree(classroom)
        finally:
            if args.against:
                subprocess.run(["git", "worktree", "remove", "--force", str(tmp / "against")], cwd=ROOT,
                               capture_output=True)
    for name, by_size in peaks.items():
        print(f"{name}: peak RSS of `grade` gathering the results of")
        for size, peak in by_size.items():
            extra = f", {(peak - by_size[0]) / size / 1000:.1f} kB per student over 0" if size else " (baseline)"
            print(f"  {size:6d} students: {peak / 2**20:8.1f} MiB{extra}")
        ratio = by_size[sizes[-1]] / by_size[sizes[0]]
        verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(f"  ratio {sizes[-1]} / {sizes[0]} students: {ratio:.3f}x (target <= {TARGET_RATIO}x: {verdict})")
    if args.against:
        same = all(csvs["this tree"][s] == csvs[args.against][s] for s in sizes)
        print(f"grades.csv byte-identical to {args.against}'s at every size: {'yes' if same else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
