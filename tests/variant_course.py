"""A copy of the course with the fixture assignment fx_intensity, which has per-student variants
(tests/fixtures/course/solutions/fx_intensity/variants.py), built: for tests of the variant
mechanism that need an assignment with variants without touching the repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from course_copy import ROOT, copy_course, run

NAME = "fx_intensity"
FIXTURE = ROOT / "tests" / "fixtures" / "course"


def ok(done) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done.stdout


# The class of the copy's roster.txt (the released parameter table lists exactly these students).
ROSTER = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi")


def variant_course(dest: Path, roster: tuple[str, ...] = ROSTER) -> Path:
    """The course copied into `dest`, fx_intensity's three folders added, its roster written, and
    built (which draws its secret seed and writes the parameter table)."""
    root = copy_course(dest)
    for top in ("assignments", "solutions", "autograder"):
        shutil.copytree(FIXTURE / top / NAME, root / top / NAME)
    (root / "roster.txt").write_text("# student ids, one per line\n" + "\n".join(roster) + "\n", encoding="utf-8")
    ok(run(root, "-m", "autograder", "build", NAME))
    return root


def evaluate(root: Path, expression: str, setup: str = "") -> object:
    """The JSON value of a Python expression evaluated in a fresh process inside the course copy."""
    code = f"import json\n{setup}\nprint(json.dumps({expression}))"
    return json.loads(ok(run(root, "-c", code)).strip().splitlines()[-1])
