"""One graded batch shared by the engine tests: every corpus case and every shipped example,
graded together with -j 2 (hostile students next to honest ones), once per test session."""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.engine import BatchReport, grade_batch, read_result
from autograder.engine.outputs import results_path
from autograder.sandbox import Limits, bubblewrap_problem
from engine.corpus import ASSIGNMENT, CONFIG, EXAMPLES_DIR, CorpusCase, corpus_cases, materialize, write_reference
from overload import grade_until_recorded, overloaded_reason

# Short timeouts (and a 45 s ceiling per submission) keep the hostile cases cheap; the slowest
# honest case (pure-Python loops) still finishes every call in well under a second.
TEST_LIMITS = Limits(call_timeout=3.0, import_timeout=10.0, cell_timeout=10.0, notebook_timeout=60.0,
                     submission_timeout=45.0)
# The examples keep their own folder names: a student is graded under the folder's id, and each
# example types that id in its notebook (they are on the course roster), so no id mismatch is flagged.
EXAMPLE_PREFIX = ""
# Markers the hostile cases leave (processes, files); made unique per session so that another
# grading of the corpus running on the same machine cannot be mistaken for a leak of this one.
MARKERS = {"cs349e-orphan-marker": f"cs349e-orphan-{uuid.uuid4().hex[:12]}",
           "cs349e-escape-marker": f"cs349e-escape-{uuid.uuid4().hex[:12]}"}


@dataclass(frozen=True)
class GradedBatch:
    report: BatchReport
    out: Path
    submissions: Path
    reference: Path
    cases: dict[str, CorpusCase]

    @property
    def overloaded(self) -> dict[str, str]:
        """Students the grader still refused to record on a busy machine, with its reason."""
        return {student: reason for student, error in self.report.failed if (reason := overloaded_reason(error))}

    def recorded_students(self) -> list[str]:
        """Every submitted student but those refused on a busy machine, sorted."""
        return sorted(p.name for p in self.submissions.iterdir() if p.name not in self.overloaded)

    def skip_if_overloaded(self, student: str | None = None) -> None:
        """A student (or, with None, any) the busy machine kept from being graded is a skip, not a failure."""
        refused = self.overloaded if student is None else {s: r for s, r in self.overloaded.items() if s == student}
        if refused:
            pytest.skip("the grader refused on a busy machine, not a failure (run it again): "
                        + "; ".join(f"{s}: {r}" for s, r in sorted(refused.items())))

    def result(self, student: str):
        self.skip_if_overloaded(student)
        return read_result(results_path(self.out, student))   # the report keeps rows, not results

    def feedback(self, student: str) -> str:
        self.skip_if_overloaded(student)
        return (self.out / "feedback" / f"{student}.md").read_text("utf-8")


def require_bubblewrap() -> None:
    problem = bubblewrap_problem()
    if problem:
        pytest.skip(f"the hostile corpus is only graded under bubblewrap: {problem}")


@pytest.fixture(scope="session")
def graded_batch(tmp_path_factory) -> GradedBatch:
    require_bubblewrap()
    root = tmp_path_factory.mktemp("corpus-batch")
    reference = write_reference(root / "reference")
    submissions = root / "submissions"
    cases = corpus_cases()
    materialize(cases, submissions, reference)
    for path in submissions.glob(f"*/{CONFIG.student_module}.py"):
        text = path.read_text("utf-8")
        for marker, unique in MARKERS.items():
            text = text.replace(marker, unique)
        path.write_text(text, "utf-8")
    for example in sorted(EXAMPLES_DIR.iterdir()):
        shutil.copytree(example, submissions / f"{EXAMPLE_PREFIX}{example.name}")
    out = root / "out"
    report = grade_until_recorded(lambda: grade_batch(ASSIGNMENT, submissions, out, jobs=2, limits=TEST_LIMITS,
                                                      isolation="bubblewrap"))
    return GradedBatch(report, out, submissions, reference, {c.name: c for c in cases})
