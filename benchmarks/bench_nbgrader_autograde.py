"""`nbgrader autograde` seconds per student after `pregrade`, this tree against a git revision, in one run.

Run: python benchmarks/bench_nbgrader_autograde.py [--students 8] [--against main] [--repeat 1]

For each tree (this checkout, and `git archive <rev>` of --against) it builds a temporary course
(nbgrader_config.py, assignments/, the grader, the reference), runs `nbgrader generate_assignment`,
puts the reference submission and seeded mutants (tests/mutants.py) in
submitted/<student>/lec01_codesign/, runs `python -m autograder pregrade -j 2` (scores cached or
pinned), then times `nbgrader autograde`. Trees alternate run by run; prints the median seconds
per student of each and the ratio (goal: this tree within 1.5x of the revision).
Memory: not measured; no target is about memory.
"""

import argparse
import io
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import mutants  # noqa: E402  (needs the path above)
from course_copy import COURSE_FILES, copy_course  # noqa: E402

ASSIGNMENT = "lec01_codesign"
GOAL_RATIO = 1.5


def run(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed in {cwd} (exit {done.returncode}):\n"
                         f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return seconds


def source_tree(rev: str | None, dest: Path) -> Path:
    """This checkout, or `git archive rev` extracted into dest."""
    if rev is None:
        return ROOT
    archive = subprocess.run(["git", "archive", rev, *COURSE_FILES], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def course_copy(source: Path, dest: Path, submissions: Path) -> Path:
    copy_course(dest, source)
    run([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force"], dest)
    for student in sorted(p.name for p in submissions.iterdir()):
        shutil.copytree(submissions / student, dest / "submitted" / student / ASSIGNMENT)
    return dest


def autograde_seconds(source: Path, tmp: Path, submissions: Path) -> float:
    course = course_copy(source, tmp, submissions)
    run([sys.executable, "-m", "autograder", "pregrade", ASSIGNMENT, "-j", "2"], course)
    return run([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--force"], course)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--against", default="main", help="git revision to compare with (default main)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="cs349e-bench-autograde-") as tmp:
        tmp = Path(tmp)
        run([sys.executable, "-m", "autograder", "reference", ASSIGNMENT, str(tmp / "reference")], ROOT)
        from solutions.lec01_codesign.answers import answer_key

        roster = mutants.mutant_class(tmp / "reference", tmp / "class", args.students, seed=0, answer_key=answer_key())
        trees = {"this tree": source_tree(None, tmp / "this"), args.against: source_tree(args.against, tmp / "rev")}
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        for i in range(args.repeat):
            for name, source in trees.items():
                seconds[name].append(autograde_seconds(source, tmp / f"course-{i}-{len(seconds[name])}-{name.replace(' ', '_')}",
                                                       tmp / "class") / len(roster))
    median = {name: statistics.median(values) for name, values in seconds.items()}
    print(f"nbgrader autograde after pregrade, {len(roster)} students, {args.repeat} run(s) each, alternating")
    for name, value in median.items():
        print(f"  {name:<12} {value:6.2f} s / student (median; runs: {', '.join(f'{v:.2f}' for v in seconds[name])})")
    ratio = median["this tree"] / median[args.against]
    print(f"  ratio this tree / {args.against}: {ratio:.2f}x (goal <= {GOAL_RATIO:g}x: {'met' if ratio <= GOAL_RATIO else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
