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

    python benchmarks/bench_grading.py --against REV [REV ...] [--students 4] [--jobs 1 2] [--rounds 2]

3. A class against git revisions, instead of 1 and 2: --students distinct students (their own
   ids, so their own variants), each the reference submission of the tree that grades it, graded
   by `python -m autograder grade -j N --force` in this tree and in a `git worktree` of each REV,
   side by side: for each round and each -j, the trees one after the other (who goes first
   rotates round by round); the cores other processes kept busy are sampled before and after. Per tree and -j: the medians over the rounds of the wall time and of the CPU time
   of the whole process tree (the grader, its fork server, sandboxes, notebook runs: read from a
   cgroup v1 cpuacct group the `grade` process starts in, below which the grader makes every
   sandbox's group; where there is none, RUSAGE_CHILDREN, which misses the sandboxes, and says
   so), per submission, and the ratios this tree / REV (target <= 1.1x of CPU). This tree's answer
   keys and variants are computed once per variant and stored (autograder/engine/key_cache.py): from
   the second round on they are read back, as in any regrading of a class; with --cold-keys every
   tree's store (a revision's too, where it has one) is emptied before each of its gradings, so every
   round pays them as a first grading does; with --new-ids each grading hands the class in under ids
   no earlier one used, after each tree's lecture key is stored: the first grading of a new class of
   an assignment already in use (its variants' keys computed, the lecture's read back).
Memory: not measured; no target is about memory.
"""

from __future__ import annotations

import argparse
import contextlib
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.build import write_reference_submission  # noqa: E402
from autograder.engine import grade_batch, grade_submission  # noqa: E402
from autograder.engine.assignment import warm  # noqa: E402
from autograder.engine.key_cache import FOLDER as KEY_STORE  # noqa: E402
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


def git_worktree(rev: str, dest: Path) -> Path:
    done = subprocess.run(["git", "worktree", "add", "--detach", str(dest), rev], cwd=ROOT, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"git worktree add {rev} failed: {done.stderr.strip()}")
    return dest


def distinct_class(tree: Path, dest: Path, size: int) -> Path:
    """`size` students with ids of their own, each handing in `tree`'s reference submission."""
    reference = dest.parent / f"{dest.name}-reference"
    subprocess.run([sys.executable, "-m", "autograder", "reference", ASSIGNMENT, str(reference)], cwd=tree,
                   check=True, capture_output=True)
    for i in range(size):
        shutil.copytree(reference, dest / f"student{i:03d}")
    return dest


def store_lecture_key(tree: Path) -> None:
    """`tree`'s assignment loaded once (its lecture key stored, where the tree has a key store)."""
    subprocess.run([sys.executable, "-c", f"from autograder.engine.assignment import load_assignment; "
                    f"load_assignment({ASSIGNMENT!r})"], cwd=tree, check=True, capture_output=True)


def renamed_class(source: Path, dest: Path, tag: str) -> Path:
    """`source`'s students under new ids (`tag`-<folder>): variants no earlier grading stored."""
    for student in sorted(source.iterdir()):
        shutil.copytree(student, dest / f"{tag}-{student.name}")
    return dest


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def cpuacct_group() -> Path | None:
    """A new cgroup v1 cpuacct group below this process's own, or None where none can be made.
    The grader makes each sandbox's group below its own, so the group counts the sandboxes too,
    which the grader's RUSAGE_CHILDREN does not (their processes are reaped inside bubblewrap)."""
    try:
        own = next(line.split(":", 2)[2] for line in Path("/proc/self/cgroup").read_text().splitlines()
                   if "cpuacct" in line.split(":", 2)[1].split(","))
        group = CPUACCT / own.strip().lstrip("/") / f"cs349e-bench-grading-{os.getpid()}-{time.monotonic_ns()}"
        group.mkdir()
        return group
    except (OSError, StopIteration, IndexError):
        return None


def remove_group(group: Path) -> None:
    for sub in sorted((p for p in group.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            sub.rmdir()
    with contextlib.suppress(OSError):
        group.rmdir()


def graded_class(tree: Path, submissions: Path, out: Path, jobs: int) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the whole process tree, where the CPU was read) of one
    `grade` of the class in `tree`."""
    group = cpuacct_group()
    enter = None if group is None else (lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(submissions), "--out",
                               str(out), "-j", str(jobs), "--force"], cwd=tree, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, preexec_fn=enter)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if group is not None:
            cpu, source = int((group / "cpuacct.usage").read_text()) / 1e9, "cpuacct cgroup"
        else:
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            source = "RUSAGE_CHILDREN (no cpuacct cgroup here: sandboxes reaped inside bubblewrap are missed)"
    finally:
        if group is not None:
            remove_group(group)
    if done.returncode != 0:
        raise SystemExit(f"grade failed in {tree} (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return wall, cpu, source


def full_marks(out: Path) -> str:
    """"n / m at full marks" from grades.csv (score == the automatic points)."""
    with open(out / "grades.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return f"{sum(float(r['score']) == float(rows[0]['score']) for r in rows)} / {len(rows)} scored alike ({rows[0]['score']})"


def against(revs: list[str], students: int, jobs_list: list[int], rounds: int, cold_keys: bool = False,
            new_ids: bool = False) -> int:
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs, other processes keep "
          f"{busy_cores():.1f} cores busy; this tree's key store "
          f"{'emptied before each grading, a revision keeps none either (--cold-keys)' if cold_keys else 'kept between gradings'}"
          f"{'; every grading hands in the class under new ids (--new-ids)' if new_ids else ''}")
    with tempfile.TemporaryDirectory(prefix="bench-grading-against-") as tmp:
        tmp = Path(tmp)
        trees = {"this tree": ROOT}
        try:
            for i, rev in enumerate(revs):
                trees[rev] = git_worktree(rev, tmp / f"rev{i}")
            classes = {name: distinct_class(tree, tmp / f"class-{i}", students) for i, (name, tree) in enumerate(trees.items())}
            if new_ids:   # the lecture's key as a course in use has it; the students' variants not yet
                for tree in trees.values():
                    store_lecture_key(tree)
            walls = {(name, j): [] for name in trees for j in jobs_list}
            cpus = {(name, j): [] for name in trees for j in jobs_list}
            marks = {}
            for r in range(rounds):
                for jobs in jobs_list:
                    names = list(trees)
                    order = names[r % len(names):] + names[:r % len(names)]   # rotate who goes first
                    for k, name in enumerate(order):
                        out = tmp / f"out-{r}-{jobs}-{k}"
                        if cold_keys:   # every tree's: a revision's kept store would spare it the keys
                            shutil.rmtree(trees[name] / KEY_STORE, ignore_errors=True)
                        submissions = classes[name]
                        if new_ids:
                            submissions = renamed_class(submissions, tmp / f"class-r{r}-j{jobs}-{k}", f"r{r}j{jobs}")
                        wall, cpu, source = graded_class(trees[name], submissions, out, jobs)
                        walls[name, jobs].append(wall / students)
                        cpus[name, jobs].append(cpu / students)
                        marks[name] = full_marks(out)
                        shutil.rmtree(out)
                        if new_ids:
                            shutil.rmtree(submissions)
        finally:
            for i in range(len(revs)):
                subprocess.run(["git", "worktree", "remove", "--force", str(tmp / f"rev{i}")], cwd=ROOT,
                               capture_output=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}, other processes keep {busy_cores():.1f} cores busy")
    print(f"a class of {students} distinct students (each tree's reference submission), {rounds} alternating "
          f"round(s), per submission, medians; CPU of the whole process tree from the {source}:")
    for name in trees:
        print(f"  {name}: {marks[name]}")
    for jobs in jobs_list:
        for name in trees:
            w, c = walls[name, jobs], cpus[name, jobs]
            print(f"  -j {jobs} {name:>12}: wall {statistics.median(w):6.2f} s, CPU {statistics.median(c):6.2f} s "
                  f"(rounds: wall {', '.join(f'{v:.2f}' for v in w)}; CPU {', '.join(f'{v:.2f}' for v in c)})")
        for rev in revs:
            cpu_ratio = statistics.median(cpus["this tree", jobs]) / statistics.median(cpus[rev, jobs])
            wall_ratio = statistics.median(walls["this tree", jobs]) / statistics.median(walls[rev, jobs])
            print(f"  -j {jobs} ratio this tree / {rev}: CPU {cpu_ratio:.2f}x (target <= 1.1x: "
                  f"{'met' if cpu_ratio <= 1.1 else 'NOT met'}), wall {wall_ratio:.2f}x")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--class-size", type=int, default=10)
    parser.add_argument("--no-class", action="store_true", help="only the one-submission figures")
    parser.add_argument("--against", metavar="REV", nargs="+", help="grade a class here and at these git revisions, side by side")
    parser.add_argument("--students", type=int, default=4, help="with --against: distinct students in the class")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="with --against: -j values to run")
    parser.add_argument("--rounds", type=int, default=2, help="with --against: alternating rounds (medians)")
    parser.add_argument("--cold-keys", action="store_true",
                        help="with --against: empty every tree's key store before each of its gradings")
    parser.add_argument("--new-ids", action="store_true",
                        help="with --against: every grading hands in the class under ids no grading used before")
    args = parser.parse_args()
    if args.against:
        return against(args.against, args.students, args.jobs, args.rounds, args.cold_keys, args.new_ids)
    isolation = resolve_isolation()
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
