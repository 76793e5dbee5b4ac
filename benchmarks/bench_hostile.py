"""What hostile submissions cost the grader and their classmates. Run from the repository root:

    python benchmarks/bench_hostile.py [replies] [markers] [hog] [slow]

replies  peak memory of the grading tree (grader + sandboxes, summed RSS) while grading a
         submission whose every call returns 50 MB (np.zeros(6_250_000)).
markers  the same while grading a submission that floods forged end-of-output markers.
hog      an honest, correct but slow classmate (pure-Python loops) graded alone, then with -j 2
         beside a submission that forks 60 busy processes at import: its score and seconds.
slow     wall time of the submission that sleeps at import and hangs every call and cell,
         under the default limits (the per-submission ceiling is what bounds it).
Memory: `replies` and `markers` print the peak of the grading tree's resident sets summed (RSS,
sampled every 50 ms) and beside it their proportional sum (PSS: a page shared by k processes
counts 1/k in each); a report, no target.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from autograder.build import write_reference_submission  # noqa: E402
from autograder.engine import grade_batch  # noqa: E402
from autograder.engine.assignment import warm  # noqa: E402
from autograder.sandbox import Limits, confinement  # noqa: E402
from process_tree import TreeSampler  # noqa: E402

ASSIGNMENT = "lec01_codesign"
CORPUS = ROOT / "tests" / "corpus" / ASSIGNMENT
# The corpus tests' short limits: hostile cases stay cheap.
SHORT = Limits(call_timeout=3.0, import_timeout=10.0, cell_timeout=10.0, notebook_timeout=60.0)
HOG_PRELUDE = '''
import os as _os
for _ in range(60):
    try:
        if _os.fork() == 0:
            while True:
                pass
    except OSError:
        break
'''


def _folder(root: Path, name: str, codesign: str, notebook: Path | None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "codesign.py").write_text(codesign, "utf-8")
    if notebook is not None:
        shutil.copyfile(notebook, folder / "handout.ipynb")
    return folder


def _grade(submissions: Path, out: Path, jobs: int, limits: Limits):
    with TreeSampler(os.getpid(), interval=0.05) as sampler:
        started = time.perf_counter()
        report = grade_batch(ASSIGNMENT, submissions, out, jobs=jobs, force=True, limits=limits,
                             isolation=confinement.DEFAULT.name)
        wall = time.perf_counter() - started
    return report, wall, sampler.stats


def peak_memory(case: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "subs"
        shutil.copytree(CORPUS / case, subs / case, ignore=shutil.ignore_patterns("case.toml"))
        report, wall, stats = _grade(subs, Path(tmp) / "out", 1, SHORT)
        result = report.results[0]
        print(f"{case}: score {result.score}/{result.max_score}, {wall:.1f} s, peak tree RSS "
              f"{stats.peak_rss_bytes / 2**30:.2f} GiB (PSS {stats.peak_pss_bytes / 2**30:.2f} GiB)")


def hog() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        reference = Path(tmp) / "reference"
        write_reference_submission(ASSIGNMENT, reference)
        notebook = reference / "handout.ipynb"
        loops = (CORPUS / "correct_loops" / "codesign.py").read_text("utf-8")
        honest = (reference / "codesign.py").read_text("utf-8")
        alone = Path(tmp) / "alone"
        _folder(alone, "classmate", loops, notebook)
        beside = Path(tmp) / "beside"
        _folder(beside, "classmate", loops, notebook)
        _folder(beside, "hog", HOG_PRELUDE + honest, notebook)
        report, wall, _ = _grade(alone, Path(tmp) / "out-alone", 1, Limits())
        mate = report.results[0]
        print(f"classmate alone:        {mate.score}/{mate.max_score} in {mate.seconds:.1f} s")
        report, wall, stats = _grade(beside, Path(tmp) / "out-beside", 2, Limits())
        for result in report.results:
            print(f"beside the hog, -j 2:   {result.student}: {result.score}/{result.max_score} in "
                  f"{result.seconds:.1f} s")
        print(f"  batch {wall:.1f} s, peak tree RSS {stats.peak_rss_bytes / 2**30:.2f} GiB")


def slow() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "subs"
        shutil.copytree(CORPUS / "slow_import_hangs", subs / "slow_import_hangs",
                        ignore=shutil.ignore_patterns("case.toml"))
        text = (subs / "slow_import_hangs" / "codesign.py").read_text("utf-8")
        # Just under the default import limit (20 s), as in the attack that was seen.
        (subs / "slow_import_hangs" / "codesign.py").write_text(text.replace("time.sleep(9)", "time.sleep(19)"))
        report, wall, _ = _grade(subs, Path(tmp) / "out", 1, Limits())
        result = report.results[0]
        print(f"slow_import_hangs (default limits): score {result.score}, wall {wall:.1f} s")


def main(argv: list[str]) -> None:
    chosen = argv or ["replies", "markers", "hog", "slow"]
    warm(ASSIGNMENT)
    for name in chosen:
        {"replies": lambda: peak_memory("replies_50mb"), "markers": lambda: peak_memory("marker_flood"),
         "hog": hog, "slow": slow}[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
