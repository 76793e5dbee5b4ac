"""Side by side on the same submissions: the nbgrader path (`pregrade` + `nbgrader autograde`, as
the course runs it) versus the trusted grader alone, `python -m autograder grade ... -j 2`.

Run: python benchmarks/bench_vs_nbgrader.py [--students 20] [--jobs 2] [--seed 0] [--repeats 1]

In a temporary copy of the course (nbgrader_config.py, assignments/, the grader, the reference,
a fresh gradebook) it runs `nbgrader generate_assignment`, puts the reference submission and
seeded buggy mutants of it (tests/mutants.py: ties broken toward the smaller value, no
saturation, wrong block size, inverted ratios, wrong report answers) in
submitted/<student>/lec01_codesign/, runs `grade` once untimed (the course copy's bytecode and the
file cache are then warm for both sides alike), then, `--repeats` times in turn, times `pregrade
--force`, `nbgrader autograde --force` and `grade --force` on that same folder. Each autograde
starts from the gradebook generate_assignment left (no submission yet), as an instructor's first
autograde of a class does: a repeat would otherwise find every grade already written. Prints the
medians side by side, the ratio nbgrader path / grade (target: at most 1.5x; autograde runs no
notebook, it writes the outputs of the grader's own run), whether both gradebooks hold the same
scores, how many checks each ran, and the projected time for 500 submissions.
Memory: not measured; no target is about memory.
"""

import argparse
import csv
import os
import resource
import shutil
import statistics
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
TARGET_RATIO = 1.5   # the nbgrader path at most this many times `grade`
PROJECTED_CLASS = 500
NBGRADER = str(Path(sys.executable).parent / "nbgrader")


def timed(cmd: list[str], cwd: Path) -> float:
    return timed_with_cpu(cmd, cwd)[0]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_with_cpu(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and every process it waited for). On a loaded
    machine the wall time mostly measures the other work; the CPU seconds, what each side does."""
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return seconds, _children_cpu() - cpu


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


def nbgrader_item_scores(course: Path) -> dict[str, dict[str, float]]:
    """student -> item -> automatic score in the course gradebook."""
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for submission in gb.assignment_submissions(ASSIGNMENT):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.auto_score is not None:
                        scores.setdefault(submission.student.id, {})[grade.name] = grade.auto_score
    return scores


def trusted_item_scores(out: Path) -> dict[str, dict[str, float]]:
    from autograder.engine.outputs import read_results

    return {r.student: {i.id: i.score for i in r.items if i.status != "manual"} for r in read_results(out)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="timed runs of each, in turn (medians are printed)")
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
        released = tmp / "gradebook-released.db"
        shutil.copyfile(course / "gradebook.db", released)
        out = tmp / "trusted"
        timed([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(course / "submitted"), "--out",
               str(tmp / "warm-up"), "-j", str(args.jobs)], course)
        runs, cpu = [], []
        for _ in range(args.repeats):   # in turn, so both see the same machine load
            # nbgrader's path: pregrade pins the trusted results, autograde writes them into the gradebook
            pregrade = timed_with_cpu([sys.executable, "-m", "autograder", "pregrade", ASSIGNMENT, "-j",
                                       str(args.jobs), "--force"], course)
            shutil.copyfile(released, course / "gradebook.db")
            autograde = timed_with_cpu([NBGRADER, "autograde", ASSIGNMENT, "--force"], course)
            grade = timed_with_cpu([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(course / "submitted"),
                                    "--out", str(out), "-j", str(args.jobs), "--force"], course)
            runs.append((pregrade[0], autograde[0], grade[0]))
            cpu.append((pregrade[1], autograde[1], grade[1]))
        load_after = os.getloadavg()[0]

        n = len(roster)
        nb_checks = nbgrader_checks(course)
        cases, examples, answers = trusted_checks()
        ours, theirs = trusted_scores(out), nbgrader_scores(course)
        agree = sum(1 for s in roster if abs(ours.get(s, -1) - theirs.get(s, -2)) < 1e-6)
        trusted_items = trusted_item_scores(out)
        items_equal = trusted_items == {student: {i: v for i, v in items.items() if i in trusted_items.get(student, {})}
                                        for student, items in nbgrader_item_scores(course).items()}

    t_pregrade, t_autograde, t_trusted = (statistics.median(column) for column in zip(*runs))
    t_nbgrader = statistics.median(p + a for p, a, _ in runs)
    ratio = t_nbgrader / t_trusted
    print(f"{n} submissions of {ASSIGNMENT} (the reference + {n - 1} seeded mutants), {args.repeats} run(s) in turn, "
          f"medians; load average {load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} cores\n")
    print(f"  nbgrader generate_assignment        {t_generate:7.1f} s  (once per assignment, not compared)\n")
    print(f"  {'nbgrader path':<34} {'':>9}  {'autograder grade -j ' + str(args.jobs):<24}")
    print(f"  {'  pregrade -j ' + str(args.jobs):<34} {t_pregrade:7.1f} s")
    print(f"  {'  nbgrader autograde (no kernel)':<34} {t_autograde:7.1f} s")
    print(f"  {'  total':<34} {t_nbgrader:7.1f} s  {'':<10}{t_trusted:7.1f} s")
    print(f"  {'  per submission':<34} {t_nbgrader / n:7.2f} s  {'':<10}{t_trusted / n:7.2f} s")
    print(f"\n  ratio nbgrader path / grade         {ratio:7.2f} x  (target <= {TARGET_RATIO:g} x: "
          f"{'met' if ratio <= TARGET_RATIO else 'NOT met'})")
    if args.repeats > 1:
        print("  per run: " + ", ".join(f"{(p + a) / g:.2f} x" for p, a, g in runs))
    c_pregrade, c_autograde, c_trusted = (statistics.median(column) for column in zip(*cpu))
    print(f"  CPU seconds (all processes, medians): pregrade {c_pregrade:.1f} + autograde {c_autograde:.1f} vs grade "
          f"{c_trusted:.1f}: {statistics.median((p + a) / g for p, a, g in cpu):.2f} x "
          f"(per run: {', '.join(f'{(p + a) / g:.2f} x' for p, a, g in cpu)})")
    print(f"\n  checks per submission: nbgrader {nb_checks} autograded grade cells (each shows the trusted grader's "
          f"score for its item); trusted grader {cases + examples + answers} ({cases} hidden test cases + "
          f"{examples} property examples + {answers} report answers)")
    print(f"  totals equal in both gradebooks: {agree} / {n}; every item's score equal: {'yes' if items_equal else 'NO'}")
    print(f"\n  projected for {PROJECTED_CLASS} submissions (linear; start-up costs included, so conservative): "
          f"nbgrader path {t_nbgrader / n * PROJECTED_CLASS / 60:.1f} min, trusted grader (-j {args.jobs}) "
          f"{t_trusted / n * PROJECTED_CLASS / 60:.1f} min")
    return 0 if agree == n and items_equal else 1


if __name__ == "__main__":
    sys.exit(main())
