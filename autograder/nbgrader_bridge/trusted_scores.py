"""One nbgrader submission graded by the trusted grader, once per content.

Under `nbgrader autograde` every grade cell of a notebook asks for its item's score. The first ask
grades the student's *submitted* files (not the autograded copy, which the student's kernel can
rewrite while it runs) and stores the result in the course's cache folder, an ordinary engine
output folder (results/<student>.json, feedback/<student>.md) outside every submission folder;
the fingerprint stored with it (a hash of the graded files and grading.toml) tells whether it
still describes the files on disk.

The cache is only a speed-up for the kernel's check(): a kernel can write anywhere, so
`reconcile` never reads it and regrades from scratch.
"""

from __future__ import annotations

from pathlib import Path

from autograder.engine.grader import grade_submission
from autograder.engine.locate import locate
from autograder.engine.outputs import read_result, results_path, write_result
from autograder.engine.registry import load_config
from autograder.engine.results import SubmissionResult
from autograder.nbgrader_bridge.course import Course
from autograder.sandbox import isolation_from_env

CACHE_DIR = ".grading_cache"


def cache_folder(course: Course, assignment: str) -> Path:
    return course.root / CACHE_DIR / assignment


def trusted_result(course: Course, assignment: str, student: str) -> SubmissionResult:
    """The trusted grade of submitted/<student>/<assignment>, from the cache when still valid."""
    config = load_config(assignment)
    student_dir = course.submitted_folder / student
    out = cache_folder(course, assignment)
    cached = read_result(results_path(out, student))
    isolation = isolation_from_env()
    if locate(student_dir, config).graded_by(cached, config, isolation):
        return cached
    # Fails closed like every verb: bubblewrap, unless CS349E_ISOLATION=rlimits lowers it.
    result = grade_submission(assignment, student_dir, isolation=isolation)
    write_result(out, result)
    return result


def kernel_reply(result: SubmissionResult) -> dict:
    """What the kernel's check() receives: every item's score and its Chinese feedback."""
    return {
        "student": result.student,
        "fingerprint": result.fingerprint,
        "items": {item.id: {"score": item.score, "max_score": item.max_score, "status": item.status,
                            "feedback": item.feedback_md}
                  for item in result.items},
    }
