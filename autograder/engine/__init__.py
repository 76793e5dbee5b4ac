"""The trusted grading engine, assignment-agnostic.

    grade_submission(name, folder)   one submission -> SubmissionResult
    grade_batch(name, submissions, out, jobs=N, force=False)   a class -> OUT/{grades.csv,feedback/,results/,executed/}
    grade_batch(..., executor=...)   graded elsewhere (engine.executors; a cluster's: autograder/cluster/)

Hidden tests live in `autograder/<name>/` (see engine.assignment); the item registry is the
repository's `assignments/<name>/grading.toml` (engine.registry). Student code only ever runs in
the sandbox (autograder.sandbox); every call goes through engine.invoke.
"""

from autograder.engine.assignment import Assignment, load_assignment
from autograder.engine.batch import BatchReport, grade_batch
from autograder.engine.grader import grade_submission
from autograder.engine.outputs import (gradescope_results, grades_csv, read_result, read_results,
                                       write_grades_csv, write_result)
from autograder.engine.registry import ConfigError, GradingConfig, Item, load_config
from autograder.engine.results import ItemResult, SubmissionResult

__all__ = [
    "Assignment", "BatchReport", "ConfigError", "GradingConfig", "Item", "ItemResult", "SubmissionResult",
    "grade_batch", "grade_submission", "gradescope_results", "grades_csv", "load_assignment", "load_config",
    "read_result", "read_results", "write_grades_csv", "write_result",
]
