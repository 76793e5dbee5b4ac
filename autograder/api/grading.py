"""`grade` and `pregrade` as functions: what the CLI verbs do, without argparse or a console.

Each takes keyword arguments only, returns what it did, and raises `Refused` (one line naming
what is wrong and how to get what is missing) before anything is graded where it cannot run:
the verbs print that line after their name and exit with status 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Mapping

from autograder.engine.batch import BatchReport, OnResult, OnStart, grade_batch
from autograder.engine.others_access import open_to_others
from autograder.errors import InstructorError
from autograder.sandbox import confinement


class Refused(InstructorError):
    """Nothing was graded: the isolation cannot be had here, the options do not combine, or the
    input or configuration is not usable (the message says which)."""


def check_isolation(isolation: str) -> None:
    """Fail closed before any other work: Refused (why, and how to install bubblewrap or lower
    isolation) when `isolation` cannot be had on this machine."""
    try:
        confinement.choose(isolation)
    except confinement.SandboxUnavailable as err:
        raise Refused(str(err)) from None


def check_folders_private(isolation: str, folders: Mapping[str, Path]) -> None:
    """The uid fallback shares this machine's filesystem: its student code reads what other users
    may. Refused when a class folder or the output folder is readable by them (every classmate's
    submission, every result and executed notebook graded before). Bubblewrap shows neither."""
    if confinement.choose(isolation).name != confinement.UID_FALLBACK.name:
        return
    for what, folder in folders.items():
        if open_to_others(Path(folder)):
            raise Refused(f"isolation 'rlimits' refused: the {what} folder {folder} is readable by other users, and "
                          f"student code runs as another user on this machine's filesystem (it could read "
                          f"classmates' submissions and results); put it in a folder only you can enter "
                          f"(chmod 700 on it or a folder above it), or install bubblewrap")


def check_placement(jobs: int, scheduler: str | None) -> None:
    """-j sizes local workers; on a cluster its workers do."""
    if scheduler and jobs > 1:
        raise Refused("-j and --scheduler do not combine: the cluster's workers set how many submissions "
                      "are graded at once")


def grade(*, assignment: str, submissions: Path, out: Path, jobs: int = 1, force: bool = False,
          isolation: str = confinement.DEFAULT.name, scheduler: str | None = None, due: datetime | None = None,
          student_ids: Mapping[str, tuple[str, str]] | None = None, figures: bool = False,
          on_start: OnStart | None = None, on_result: OnResult | None = None) -> BatchReport:
    """Grades every student folder in `submissions` into `out` (grades.csv, feedback/, results/):
    on this machine, `jobs` at a time, or on the workers of the dask scheduler `scheduler`. `due`
    (default: the one in the course's nbgrader gradebook, if any) feeds grading.toml's late
    policy; `student_ids` (folder -> (id, source)) names the student of a folder not named
    after them. Students already graded with unchanged files are skipped unless `force`.
    `figures`: draw the notebooks' figures (only pages show them: pregrade's feedback)."""
    from autograder.engine.registry import ASSIGNMENTS_DIR

    check_placement(jobs, scheduler)
    if scheduler is None:
        check_isolation(isolation)
    submissions, out = Path(submissions), Path(out)
    if not submissions.is_dir():
        raise Refused(f"submissions folder {submissions} does not exist")
    if scheduler is None:
        check_folders_private(isolation, {"submissions": submissions, "output": out})
    executor = None
    if scheduler is not None:
        from autograder.cluster.client_side import DaskExecutor   # (the [cluster] extra, and not in a bundle)
        executor = DaskExecutor(scheduler)
    try:
        if due is None:
            due = _gradebook_due_date(ASSIGNMENTS_DIR.parent, assignment)
        extensions = _gradebook_due_date(ASSIGNMENTS_DIR.parent, assignment, extensions=True) if due else {}
        return grade_batch(assignment, submissions, out, jobs=jobs, force=force, isolation=isolation,
                           on_start=on_start, on_result=on_result, due=due, executor=executor,
                           student_ids=student_ids, figures=figures, extensions=extensions)
    except (InstructorError, ValueError) as err:
        if isinstance(err, Refused):
            raise
        raise Refused(str(err)) from None


def _gradebook_due_date(root: Path, assignment: str, extensions: bool = False):
    """The due date in the nbgrader gradebook of the course at `root`, if it has one; with
    `extensions`, the students' extensions there instead (student -> timedelta, none without)."""
    try:
        from autograder.nbgrader_bridge.gradebook import CourseError, course_due_date, course_extensions
    except ModuleNotFoundError as err:   # a Gradescope bundle carries no nbgrader bridge: no course here
        if (err.name or "").startswith("autograder.nbgrader_bridge"):
            return {} if extensions else None
        raise
    try:
        return course_extensions(root, assignment) if extensions else course_due_date(root, assignment)
    except CourseError as err:
        raise Refused(f"{err}; or give the due date with --due") from None
    except ImportError as err:
        raise Refused(f"the course has an nbgrader gradebook, and reading its due date needs nbgrader "
                      f"(pip install '.[instructor]'): {err}; or give the due date with --due") from None


@dataclass(frozen=True)
class Pregraded:
    report: BatchReport
    out: Path                      # the course's pinned store of the assignment
    students: int                  # submissions snapshotted
    unpinned: Mapping[str, str]    # student -> why their result is not pinned


def pregrade(*, assignment: str, jobs: int = 1, force: bool = False, isolation: str | None = None,
             scheduler: str | None = None, on_start: OnStart | None = None,
             on_result: OnResult | None = None) -> Pregraded:
    """Snapshots nbgrader's submitted/<student>/<assignment>/ of the course at the repository
    root, grades it into the pinned store and writes the manifest tying each result to the
    files it graded (`nbgrader autograde` requires it). `isolation` None: CS349E_ISOLATION, else
    bubblewrap."""
    from autograder.engine.registry import REPO_ROOT, ConfigError
    from autograder.nbgrader_bridge.course import CourseError, load_course
    from autograder.nbgrader_bridge.course_privacy import open_course
    from autograder.nbgrader_bridge.pinned import (drop_results_without_executed, pinned_folder, snapshot_class,
                                                   write_manifest)
    from autograder.sandbox import SandboxUnavailable, isolation_from_env

    try:  # fails closed first
        isolation = isolation or isolation_from_env()
    except SandboxUnavailable as err:
        raise Refused(str(err)) from None
    check_placement(jobs, scheduler)
    if scheduler is None:
        check_isolation(isolation)
    try:
        course = load_course(REPO_ROOT)
        # it writes every student's results and executed notebook into the course folder
        if problem := open_course(course.root, staff_group=course.groupshared):
            raise CourseError(problem)
        if not course.submitted_folder.is_dir():
            raise CourseError(f"{course.submitted_folder} does not exist: collect the submissions first")
        snapshots = snapshot_class(course, assignment)  # before anything of the students' runs
        drop_results_without_executed(course, assignment)  # a store of an older grader: grade again
    except (CourseError, ConfigError) as err:
        raise Refused(str(err)) from None
    out = pinned_folder(course, assignment)
    report = grade(assignment=assignment, submissions=course.submitted_folder, out=out, jobs=jobs, force=force,
                   isolation=isolation, scheduler=scheduler, on_start=on_start, on_result=on_result,
                   figures=True)   # its executed notebooks reach the feedback pages
    unpinned = write_manifest(course, assignment, snapshots)
    return Pregraded(report, out, len(snapshots), dict(unpinned))
