"""`python -m autograder reconcile <assignment>`: nbgrader's gradebook, the pinned results and the
collected files, checked against each other.

Regrades nothing. For every student of the gradebook or the pinned manifest it checks that the
submitted files still hash as pregrade's snapshot, that the stored result is the one pregrade
pinned, and that every automatic score in the gradebook equals the pinned one; it prints one line
per student where any of this fails. First it prints every row of the collection's flagged lists
(what `nbgrader collect` refused or corrected in the exchange, what `nbgrader zip_collect` did not
collect: autograder/nbgrader_bridge/flagged.py), and what is wrong with the exchange itself (a
root others may write to without the sticky bit, a course folder that is not the instructor's:
exchange_root.py); each counts as a difference.
Exit 0: all agree; 1: some differ; 2: usage or configuration error (no gradebook, pregrade never ran).
"""

from __future__ import annotations

import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "reconcile", help="check nbgrader's gradebook against the pinned trusted results; one line per student that differs",
        description="Check the collected files against pregrade's snapshot, the pinned results against its manifest, "
                    "and nbgrader's automatic scores against the pinned results. Regrades nothing.")
    parser.add_argument("assignment", help="assignment name, e.g. lec01_codesign")
    parser.add_argument("--settle", metavar="STUDENT",
                        help="write STUDENT's pinned trusted scores into the gradebook (only a student nbgrader could "
                             "not autograde, e.g. an unreadable notebook; recorded in .pinned_results/<assignment>/"
                             "settled.json)")
    parser.add_argument("--reason", default="", help="why STUDENT is settled (required with --settle)")


def run(args) -> int:
    if args.settle:
        return settle_student(args)
    from autograder.engine.outputs import show_controls
    from autograder.engine.registry import REPO_ROOT, ConfigError, load_config
    from autograder.engine.vocabulary import AUTOMATIC_KINDS
    from autograder.nbgrader_bridge.course import CourseError, load_course
    from autograder.nbgrader_bridge.flagged import flagged_lines
    from autograder.nbgrader_bridge.gradebook import cell_scores
    from autograder.nbgrader_bridge.pinned import PinError, PinnedResults
    from autograder.nbgrader_bridge.reconcile import disagreements, stale_manual_scores

    try:
        config = load_config(args.assignment)
        course = load_course(REPO_ROOT)
    except (ConfigError, CourseError) as err:
        print(f"reconcile: {err}", file=sys.stderr)
        return 2
    flagged = flagged_lines(course.root, args.assignment) + exchange_lines(course)
    for line in flagged:
        print(line)
    try:
        nbgrader = cell_scores(course, args.assignment)
        store = PinnedResults(course, args.assignment)
    except (ConfigError, CourseError, PinError) as err:
        print(f"reconcile: {err}", file=sys.stderr)
        return 2

    pinned, unpinned = {}, {}
    for student in sorted(set(store.manifest) | set(nbgrader)):
        try:
            pinned[student] = store.result(student)
        except PinError as err:
            unpinned[student] = str(err).removeprefix(f"{student}: ")
    auto_items = [item.id for item in config.items_of(*AUTOMATIC_KINDS)]
    comparable = {student: cells for student, cells in nbgrader.items() if student not in unpinned}
    missing = {student: entry.get("missing", ()) for student, entry in store.manifest.items()}
    lines = [d.line() for d in disagreements(comparable, pinned, auto_items, missing)]
    lines += [f"{student}: no trusted pinned result: {reason}" for student, reason in unpinned.items()]
    lines += stale_manual_scores(nbgrader)
    for line in sorted(lines):
        print(show_controls(line))   # student names are any text but '/'
    students = len(set(nbgrader) | set(store.manifest))
    print(f"reconcile {args.assignment}: {len(lines)} of {students} student(s) differ", file=sys.stderr)
    if flagged:
        print(f"reconcile {args.assignment}: {len(flagged)} flagged in the collection (listed first): resolve each "
              f"and collect again", file=sys.stderr)
    return 1 if lines or flagged else 0


def exchange_lines(course) -> list[str]:
    """What is wrong with the exchange this course collects from (a root without the sticky bit, a
    course folder that is not the instructor's), one line each; none for a course with no folder there."""
    import os
    from pathlib import Path

    from autograder.engine.outputs import show_controls
    from autograder.engine.roster import roster_or_empty
    from autograder.nbgrader_bridge.exchange_root import exchange_problems, instructors

    if not course.course_id or not os.path.lexists(Path(course.exchange_root) / course.course_id):   # a link too
        return []
    roster = roster_or_empty(course.root)
    return [show_controls(f"exchange: {problem}")
            for problem in exchange_problems(course.exchange_root, course.course_id,
                                             instructors(course.groupshared, roster), roster)]


def settle_student(args) -> int:
    """`reconcile --settle STUDENT --reason TEXT` (autograder/nbgrader_bridge/settle.py)."""
    from autograder.engine.registry import REPO_ROOT, ConfigError, load_config
    from autograder.engine.vocabulary import AUTOMATIC_KINDS
    from autograder.nbgrader_bridge.course import CourseError, load_course
    from autograder.nbgrader_bridge.pinned import PinError, PinnedResults
    from autograder.nbgrader_bridge.settle import settle

    try:
        config = load_config(args.assignment)
        course = load_course(REPO_ROOT)
        result = PinnedResults(course, args.assignment).result(args.settle)
        scores = settle(course, args.assignment, args.settle, result,
                        [item.id for item in config.items_of(*AUTOMATIC_KINDS)], args.reason)
    except (ConfigError, CourseError, PinError) as err:
        print(f"reconcile: {err}", file=sys.stderr)
        return 2
    print(f"{args.settle}: settled with the pinned {sum(scores.values()):g} automatic points "
          f"({len(scores)} items) — {args.reason.strip()}")
    return 0
