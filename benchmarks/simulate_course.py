"""A simulated course night: grade a whole class of correct, buggy and hostile submissions.

Run: python benchmarks/simulate_course.py [--students 300] [--jobs 2] [--seed 0] [--keep DIR]

The class mixes, in a seeded shuffle: every hostile or broken case of tests/corpus/lec01_codesign/
(infinite loops, huge allocations, segfaults, imports of solutions, 200 MB of output, ...; a
sample of them for small classes), correct submissions (the reference and the corpus's honest
variants: pure-Python loops, float32 returns, other algebra), and buggy mutants of the reference
(tests/mutants.py). It runs `python -m autograder grade ... -j N` once and reports the wall time
(target < 5 min for 300), the peak memory of the grader and everything it started, CPU use,
sandbox start-ups, and that every student has a row in grades.csv.
Memory: the target (< 2 GB) is about the proportional set size summed over the grading tree
(PSS: a page shared by k processes counts 1/k in each), what the machine really spends; the
resident-set sum printed beside it counts every page a forked worker shares with the fork server
once per worker, so it overstates the total.
"""

import argparse
import csv
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "engine"), str(ROOT / "benchmarks")]

import corpus  # noqa: E402  (needs the path above)
import mutants  # noqa: E402
from process_tree import TreeSampler, cpu_seconds_of_children, peak_child_rss_bytes  # noqa: E402

ASSIGNMENT = "lec01_codesign"
TARGET_SECONDS = 300.0
TARGET_BYTES = 2 * 1000**3
CORRECT_SHARE, HOSTILE_SHARE = 0.45, 0.10
GB = 1000**3


def plan_class(n: int, rng: random.Random) -> list[tuple[str, str]]:
    """(kind, origin) per student: kind correct / buggy / hostile; origin a corpus case or "mutant"."""
    cases = corpus.corpus_cases()
    honest = ["reference"] + [c.name for c in cases if c.score == "full" and c.name != "full_marks"]
    hostile = [c.name for c in cases if c.score != "full"]
    n_hostile = len(hostile) if n >= 100 else max(1, round(n * HOSTILE_SHARE))
    n_correct = round(n * CORRECT_SHARE)
    plan = [("hostile", name) for name in rng.sample(hostile, min(n_hostile, len(hostile)))]
    plan += [("correct", honest[i % len(honest)]) for i in range(n_correct)]
    plan += [("buggy", "mutant")] * (n - len(plan))
    rng.shuffle(plan)
    return plan


def write_class(plan, submissions: Path, work: Path, rng: random.Random) -> dict[str, tuple[str, str]]:
    reference = work / "reference"
    subprocess.run([sys.executable, "-m", "autograder", "reference", ASSIGNMENT, str(reference)], cwd=ROOT, check=True,
                   capture_output=True)
    staged = work / "cases"
    corpus.materialize(corpus.corpus_cases(), staged, reference)
    from solutions.lec01_codesign.answers import answer_key

    key = answer_key()
    roster = {}
    for index, (kind, origin) in enumerate(plan):
        student = f"s{index:03d}"
        dest = submissions / student
        if origin == "reference":
            shutil.copytree(reference, dest)
        elif origin == "mutant":
            origin = "+".join(mutants.draw_mutations(rng, tuple(sorted(key))))
            mutants.mutate_submission(reference, dest, tuple(origin.split("+")), key)
        else:
            shutil.copytree(staged / origin, dest)
        roster[student] = (kind, origin)
    return roster


def read_grades(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="copy the grader's outputs (grades.csv, feedback/, results/) here")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="cs349e-course-") as tmp:
        work = Path(tmp)
        submissions, out = work / "submissions", work / "out"
        roster = write_class(plan_class(args.students, rng), submissions, work, rng)
        load_before = os.getloadavg()[0]
        cmd = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(submissions), "--out", str(out),
               "-j", str(args.jobs), "--force"]
        cpu_before = cpu_seconds_of_children()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with TreeSampler(proc.pid, interval=0.1) as sampler:
            log, _ = proc.communicate()
        wall = time.perf_counter() - start
        cpu = cpu_seconds_of_children() - cpu_before
        if proc.returncode != 0:
            print(log[-4000:])
            raise SystemExit(f"grade exited with status {proc.returncode}")
        grades = read_grades(out)
        if args.keep:
            shutil.copytree(out, args.keep, dirs_exist_ok=True)

    stats = sampler.stats
    n = len(roster)
    missing = sorted(set(roster) - set(grades))
    by_kind = defaultdict(list)
    for student, (kind, _) in roster.items():
        if student in grades:
            by_kind[kind].append(float(grades[student]["score"]))
    auto_max = max((float(r["score"]) for r in grades.values()), default=0.0)
    peak = stats.peak_rss_bytes

    print(f"simulated course: {n} submissions of {ASSIGNMENT}, -j {args.jobs}, {os.cpu_count()} cores "
          f"(load average before: {load_before:.1f})\n")
    print(f"  wall time            {wall:7.1f} s  ({wall / n:.2f} s / submission; target < {TARGET_SECONDS:.0f} s: "
          f"{'met' if wall < TARGET_SECONDS else 'NOT met'})")
    pss = stats.peak_pss_bytes
    print(f"  peak memory (tree)   {pss / GB:7.2f} GB proportional (PSS) sum (target < {TARGET_BYTES / GB:.0f} GB: "
          f"{('met' if pss < TARGET_BYTES else 'NOT met') if pss else 'unknown: smaps_rollup unreadable'}); "
          f"{peak / GB:.2f} GB resident-set sum (shared pages counted "
          f"once per process)")
    print(f"  largest process      {peak_child_rss_bytes() / GB:7.2f} GB (ru_maxrss of any child)")
    used = max(cpu, stats.cpu_seconds)
    print(f"  CPU                  {used:7.1f} s  = {used / (wall * os.cpu_count()) * 100:.0f} % of {os.cpu_count()} cores "
          f"over the wall time (reaped children {cpu:.1f} s; sampled: grader {stats.cpu_seconds_of('grader'):.1f} s, "
          f"student code {stats.cpu_seconds_of('sandboxed'):.1f} s)")
    print(f"  sandbox start-ups    {len(stats.sandbox_starts):7d}    for {n} students (restarts after a crash or "
          f"timeout included), plus {len(stats.probe_starts)} bubblewrap probes seen (sampling misses short ones)")
    print(f"  threads              {stats.max_threads_trusted:7d}    max in one grader process, "
          f"{stats.max_threads_sandboxed} in one sandboxed worker; at most {stats.peak_concurrent_workers} workers at once")
    print(f"  grades.csv rows      {len(grades):7d} / {n} students"
          + (f"  MISSING: {', '.join(missing)}" if missing else "  (every student has a row)"))
    print()
    for kind in ("correct", "buggy", "hostile"):
        scores = by_kind.get(kind, [])
        if scores:
            full = sum(1 for s in scores if s >= auto_max - 1e-9)
            print(f"  {kind:8s} {len(scores):4d} students, mean {statistics.mean(scores):6.2f}, "
                  f"full automatic marks {full}")
    return 0 if not missing else 1


if __name__ == "__main__":
    sys.exit(main())
