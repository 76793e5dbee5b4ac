"""Does this tree grade the corpus exactly as another revision does? Run from the repository root:

    python benchmarks/compare_scores.py --against REV [--jobs 2]

The engine tests' class (every case of tests/corpus/lec01_codesign/ and every shipped example,
tests/engine/corpus.py) is graded by `python -m autograder grade -j N --force` in this tree and in a
`git worktree` of REV, one after the other, on the same submission files. Printed: whether the two
grades.csv are byte-identical, and the students and items (of every results file) whose score or
status differ, and how many feedback files differ in text. A run the machine's load made the
grader refuse ("machine overloaded") is run again for those students, as an instructor would.
Memory and time: not measured here (bench_grading.py).
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from engine.corpus import ASSIGNMENT, EXAMPLES_DIR, corpus_cases, materialize, write_reference  # noqa: E402

TRIES = 3


def grade(tree: Path, submissions: Path, out: Path, jobs: int) -> None:
    for attempt in range(TRIES):
        done = subprocess.run([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(submissions), "--out",
                               str(out), "-j", str(jobs), *(["--force"] if attempt == 0 else [])],
                              cwd=tree, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode == 0:
            return
        if done.returncode != 1:
            raise SystemExit(f"grade failed in {tree} (exit {done.returncode}):\n{done.stderr[-3000:]}")
    raise SystemExit(f"grade in {tree} still failed some students after {TRIES} runs:\n{done.stderr[-3000:]}")


def graded_items(out: Path) -> dict[str, dict[str, tuple[float, str]]]:
    """student -> item -> (score, status), from every results file."""
    graded = {}
    for path in sorted((out / "results").glob("*.json")):
        submission = json.loads(path.read_text("utf-8"))["extra_data"]["submission"]
        graded[path.stem] = {item["id"]: (item["score"], item["status"]) for item in submission["items"]}
    return graded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cs349e-compare-scores-") as tmp:
        tmp = Path(tmp)
        submissions = tmp / "submissions"
        materialize(corpus_cases(), submissions, write_reference(tmp / "reference"))
        for example in sorted(EXAMPLES_DIR.iterdir()):
            shutil.copytree(example, submissions / example.name)
        other = tmp / "against"
        subprocess.run(["git", "worktree", "add", "--detach", str(other), args.against], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            outs = {"this tree": tmp / "out-here", args.against: tmp / "out-there"}
            grade(ROOT, submissions, outs["this tree"], args.jobs)
            grade(other, submissions, outs[args.against], args.jobs)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, capture_output=True)
        here, there = (graded_items(out) for out in outs.values())
        same_csv = (outs["this tree"] / "grades.csv").read_bytes() == (outs[args.against] / "grades.csv").read_bytes()
        differ = [(s, i, here.get(s, {}).get(i), there.get(s, {}).get(i))
                  for s in sorted(set(here) | set(there))
                  for i in sorted(set(here.get(s, {})) | set(there.get(s, {})))
                  if here.get(s, {}).get(i) != there.get(s, {}).get(i)]
        feedback = [p.name for p in sorted((outs["this tree"] / "feedback").glob("*.md"))
                    if p.read_bytes() != (outs[args.against] / "feedback" / p.name).read_bytes()]
    items = sum(len(v) for v in here.values())
    print(f"{len(here)} students, {items} graded items; grades.csv byte-identical to {args.against}'s: "
          f"{'yes' if same_csv else 'NO'}")
    print(f"items whose score or status differ: {len(differ)}")
    for student, item, mine, theirs in differ:
        print(f"  {student} {item}: this tree {mine}, {args.against} {theirs}")
    print(f"feedback files whose text differs: {len(feedback)} {feedback[:10]}")
    return 0 if same_csv and not differ else 1


if __name__ == "__main__":
    sys.exit(main())
