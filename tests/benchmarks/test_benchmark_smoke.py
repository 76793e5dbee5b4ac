"""Every benchmark the README lists runs, at a tiny size, and prints the figures it exists for
(a smoke run: the numbers of a loaded test machine are not judged, their lines are). A benchmark
added to the README's table without a tiny size here fails."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest

from course_copy import ROOT, clean_env
from readme_text import readme_commands

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# script -> (tiny arguments, lines its output must have)
TINY = {
    "bench_quantize.py": (["--repeats", "1", "--sizes", "10"],
                          [r"worst reference / ml_dtypes ratio: \d+\.\d+", r"python -m solutions\.lec01_codesign: \d"]),
    "bench_sandbox.py": (["--repeats", "2", "--isolation", "bubblewrap"],
                         [r"trivial call round trip\s+│\s+\d+\.\d+ ms", r"Sandbox\(\) \+ first call"]),
    "bench_grading.py": (["--runs", "1", "--class-size", "2"],
                         [r"no fork server: .* now \d+\.\d+x faster", r"-j 2 / -j 1 throughput ratio \d+\.\d+x"]),
    "bench_hostile.py": (["replies"], [r"replies_50mb: score .* peak tree RSS \d+\.\d+ GiB \(PSS \d+\.\d+ GiB\)"]),
    "bench_vs_nbgrader.py": (["--students", "2"],
                             [r"ratio nbgrader path / grade\s+\d+\.\d+ x", r"totals equal in both gradebooks: 2 / 2; every item's score equal: yes"]),
    "bench_nbgrader_autograde.py": (["--students", "1", "--against", "HEAD"],
                                    [r"ratio this tree / HEAD: \d+\.\d+x"]),
    "bench_cluster.py": (["--runs", "1", "--class-size", "2", "--students", "3"],
                         [r"ratio  cluster / local\s+\d+\.\d+x wall time", r"grades\.csv byte-identical: yes",
                          r"grades\.csv rows 3 / 3"]),
    "bench_student_folder.py": (["--repeats", "1"],
                                [r"answered notebook, top to bottom\s+│\s+\d+\.\d+\s+│\s+< 10",
                                 r"public tests, skeleton\s+│\s+\d+\.\d+"]),
    "bench_aggregation_memory.py": (["--sizes", "3", "30"],
                                    [r"0 students:\s+\d+\.\d+ MiB \(baseline\)",
                                     r"ratio 30 / 3 students: \d+\.\d+x \(target <= 1\.1x: (met|NOT met)\)"]),
    "bench_vs_otter.py": (["--students", "2", "--rounds", "1"],
                          [r"checks per submission: kit (\d+) .*\n\s+Otter \1 .*\n\s+equal",
                           r"ratio Otter / kit at 1 worker: wall \d+\.\d+ x, CPU \d+\.\d+ x",
                           r"ratio Otter / kit at 2 workers: wall \d+\.\d+ x, CPU \d+\.\d+ x",
                           r"scores agree .*: 2 / 2 students"]),
    "simulate_course.py": (["--students", "3"],
                           [r"peak memory \(tree\)\s+\d+\.\d+ GB proportional \(PSS\) sum \(target < 2 GB: (met|NOT met)\)",
                            r"3 / 3 students\s+\(every student has a row\)"]),
}


def _otter_missing() -> str:
    """Why bench_vs_otter.py cannot run here ("" when it can): otter-grader 7 must import from the
    interpreter of $CS349E_OTTER, else of `otter` on PATH (a virtualenv of its own)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_vs_otter import otter_problem

    return otter_problem()


# script -> why it cannot run on this machine ("" when it can): such a script is skipped, with the reason
NEEDS = {"bench_vs_otter.py": _otter_missing}
# each script once, however many of its commands the README shows (its tiny run is the same)
LISTED = list(dict.fromkeys(c.split()[1].removeprefix("benchmarks/") for c in readme_commands()
                            if c.startswith("python benchmarks/")))


def test_every_listed_benchmark_has_a_tiny_size_and_states_its_memory_figure():
    assert LISTED and set(LISTED) <= set(TINY), sorted(set(LISTED) - set(TINY))
    for script in LISTED:
        doc = ast.get_docstring(ast.parse((ROOT / "benchmarks" / script).read_text(encoding="utf-8")))
        assert re.search(r"^Memory: ", doc, flags=re.M), f"{script} does not say which memory figure its target is about"


@pytest.mark.parametrize("script", LISTED)
def test_each_readme_benchmark_runs_at_a_tiny_size(script):
    missing = NEEDS[script]() if script in NEEDS else ""
    if missing:
        pytest.skip(f"{script}: {missing}")
    args, lines = TINY[script]
    done = subprocess.run([sys.executable, f"benchmarks/{script}", *args], cwd=ROOT, env=clean_env(),
                          capture_output=True, text=True, timeout=800)
    assert done.returncode == 0, f"{script} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    for line in lines:
        assert re.search(line, done.stdout), f"{script}: no line matching {line!r}\n{done.stdout[-3000:]}"


def test_bench_grading_grades_a_class_against_a_revision_at_a_tiny_size():
    """--against REV: the class graded here and in a worktree of REV, with CPU and wall ratios."""
    done = subprocess.run([sys.executable, "benchmarks/bench_grading.py", "--against", "HEAD", "--students", "1",
                           "--jobs", "1", "--rounds", "1"], cwd=ROOT, env=clean_env(), capture_output=True, text=True,
                          timeout=800)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert re.search(r"-j 1 ratio this tree / HEAD: CPU \d+\.\d+x \(target <= 1\.1x: (met|NOT met)\), wall \d+\.\d+x",
                     done.stdout), done.stdout
    assert re.search(r"this tree: 1 / 1 scored alike", done.stdout) and re.search(r"HEAD: 1 / 1 scored alike", done.stdout)
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "bench-grading-against" not in worktrees   # the revision's worktree is removed
