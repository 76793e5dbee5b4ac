"""Side by side on the same submissions: `pregrade` + `nbgrader autograde` (as the course runs it)
versus the trusted grader alone, `python -m autograder grade ... -j 2`.

Run: python benchmarks/bench_vs_nbgrader.py [--students 20] [--jobs 2] [--seed 0]

In a temporary copy of the course (nbgrader_config.py, assignments/, the grader, the reference,
a fresh gradebook) it runs `nbgrader generate_assignment`, puts the reference submission and
seeded buggy mutants of it (tests/mutants.py: ties broken toward the smaller value, no
saturation, wrong block size, inverted ratios, wrong report answers) in
submitted/<student>/lec01_codesign/, then times `nbgrader autograde` and the trusted grader on
that same folder, in one run. Prints both wall times, the ratio (target: the trusted grader at
least 3x as fast), how many checks each ran, and the projected time for 500 submissions.
Memory: not measured; no target is about memory.
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import mutants  # noqa: E402  (needs the path above)
from course_copy import copy_course  # noqa: E402  (the course as an instructor has it: no tests/ or examples/)
from autograder.engine.assignment import warm  # noqa: E402
from autograder.engine.properties import examples_of  # noqa: E402

ASSIGNMENT = "lec01_codesign"
TARGET_RATIO = 3.0
PROJECTED_CLASS = 500
NBGRADER = str(Path(sys.executable).parent / "nbgrader")


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return seconds


def nbgrader_checks(course: Path) -> int:
    """Autograded test cells per notebook: nbgrader's checks (grade cells that are not answers)."""
    nb = nbformat.read(course / "release" / ASSIGNMENT / "handout.ipynb", as_version=4)
    return sum(1 for cell in nb.cells
               if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"].get("solution"))


def trusted_checks() -> tuple[int, int, int]:
    """(hidden test cases, property examples, report answers) the trusted grader runs per submission."""
    assignment = warm(ASSIGNMENT)
    cases = sum(len(suite.cases) for suite in assignment.suites.values())
    examples = sum(len(examples_of(p)) for suite in assignment.suites.values() for p in suite.properties)
    return cases, examples, len(assignment.config.items_of("number", "choice"))


def nbgrader_scores(course: Path) -> dict[str, float]:
    """Each student's total in the course gradebook after autograde."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(ASSIGNMENT)}


def trusted_scores(out: Path) -> dict[str, float]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {row["student"]: float(row["score"]) for row in csv.DictReader(f)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="cs349e-bench-nbgrader-") as tmp:
        tmp = Path(tmp)
        course = copy_course(tmp / "course")
        reference = tmp / "reference"
        timed([sys.executable, "-m", "autograder", "reference", ASSIGNMENT, str(reference)], ROOT)
        from solutions.lec01_codesign.answers import answer_key

        roster = mutants.mutant_class(reference, tmp / "class", args.students, seed=args.seed, answer_key=answer_key())
        for student in roster:
            shutil.copytree(tmp / "class" / student, course / "submitted" / student / ASSIGNMENT)

        load_before = os.getloadavg()[0]
        t_generate = timed([NBGRADER, "generate_assignment", ASSIGNMENT, "--force"], course)
        # nbgrader's path: pregrade pins the trusted results, autograde writes them into the gradebook
        t_pregrade = timed([sys.executable, "-m", "autograder", "pregrade", ASSIGNMENT, "-j", str(args.jobs)], course)
        t_nbgrader = t_pregrade + timed([NBGRADER, "autograde", ASSIGNMENT, "--force"], course)
        out = tmp / "trusted"
        t_trusted = timed([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(course / "submitted"),
                           "--out", str(out), "-j", str(args.jobs), "--force"], course)

        n = len(roster)
        nb_checks = nbgrader_checks(course)
        cases, examples, answers = trusted_checks()
        ours, theirs = trusted_scores(out), nbgrader_scores(course)
        agree = sum(1 for s in roster if abs(ours.get(s, -1) - theirs.get(s, -2)) < 1e-6)

    ratio = t_nbgrader / t_trusted
    print(f"{n} submissions of {ASSIGNMENT} (the reference + {n - 1} seeded mutants), one run, "
          f"load average before: {load_before:.1f} on {os.cpu_count()} cores\n")
    print(f"  nbgrader generate_assignment        {t_generate:7.1f} s  (once per assignment, not compared)")
    print(f"  pregrade -j {args.jobs:<2} + nbgrader autograde  {t_nbgrader:7.1f} s  = {t_nbgrader / n:.2f} s / submission "
          f"(pregrade {t_pregrade:.1f} s)")
    print(f"  autograder grade -j {args.jobs:<2}              {t_trusted:7.1f} s  = {t_trusted / n:.2f} s / submission")
    print(f"  ratio nbgrader / trusted            {ratio:7.2f} x  (target >= {TARGET_RATIO:g} x: "
          f"{'met' if ratio >= TARGET_RATIO else 'NOT met'})")
    print(f"\n  checks per submission: nbgrader {nb_checks} autograded grade cells (each shows the trusted grader's "
          f"score for its item); trusted grader {cases + examples + answers} ({cases} hidden test cases + "
          f"{examples} property examples + {answers} report answers)")
    print(f"  scores equal in both gradebooks: {agree} / {n}")
    print(f"\n  projected for {PROJECTED_CLASS} submissions (linear; start-up costs included, so conservative): "
          f"nbgrader {t_nbgrader / n * PROJECTED_CLASS / 60:.1f} min, trusted grader (-j {args.jobs}) "
          f"{t_trusted / n * PROJECTED_CLASS / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
