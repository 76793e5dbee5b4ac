"""A class handed to `python -m autograder similarity` as the instructor runs it: each student's
`codesign.py` beside the same answered notebook (the reference's), and the pairs it reports."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.build import write_reference_submission

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "lec01_codesign"


def answered_reference(tmp_path_factory) -> Path:
    """A folder with the reference's codesign.py and its answered notebook."""
    answered = tmp_path_factory.mktemp("answered")
    write_reference_submission(ASSIGNMENT, answered)
    return answered


def similarity_of(codes: dict[str, str], answered: Path, tmp_path_factory, *, without_notebook=(),
                  timeout: float = 300):
    """The similarity command's run on a class whose students hand in `codes` (name -> codesign.py)
    with `answered`'s notebook (but those `without_notebook`), its output folder, and pairs.csv's
    rows by pair of names (as pairs.csv shows them)."""
    submissions = tmp_path_factory.mktemp("class")
    for name, code in codes.items():
        (submissions / name).mkdir()
        (submissions / name / "codesign.py").write_text(code, encoding="utf-8")
        if name not in without_notebook:
            shutil.copyfile(answered / "handout.ipynb", submissions / name / "handout.ipynb")
    out = tmp_path_factory.mktemp("similarity")
    done = subprocess.run([sys.executable, "-m", "autograder", "similarity", ASSIGNMENT, str(submissions),
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    with open(out / "pairs.csv", encoding="utf-8") as handle:
        pairs = {frozenset((row["student_a"], row["student_b"])): row for row in csv.DictReader(handle)}
    return done, out, pairs
