"""Copied numbers: which students handed in answers that are right for a classmate's variant and
wrong for their own.

With per-student variants (engine/variants.py) every student's number keys are their own, so an
answer copied from a classmate is wrong for the student who hands it in and right for the
classmate. For every student S and every other student T, the number items where S's recorded
answer (ItemResult.answer) is accepted by T's key — with the grader's own tolerance
(report_items.accepts_number) — and not by S's own key are counted; S is flagged with T when
there are at least `min_items` of them. The lecture's worked example (the parameters the lecture
itself uses) is compared the same way, as the source `LECTURE_SOURCE`: answers taken from the
lecture's example are a different mistake from copying a classmate, and the report tells them apart.

Nothing is graded again: the answers come from the results, the keys from the instructor's seed
(`class_keys`: each student's keys computed once, in worker processes, as grading computes them).
Keys are one float per (student, item) in an array, so a class is compared with one n × n array
operation per item (measured for 500 students in the README).
"""

from __future__ import annotations

import csv
import io
import math
import multiprocessing
from dataclasses import asdict, dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from autograder.engine.outputs import json_text
from autograder.engine.registry import GradingConfig, Item
from autograder.engine.report_items import accepts_number
from autograder.engine.results import SubmissionResult
from autograder.engine.vocabulary import ItemKind

LECTURE_SOURCE = "(lecture example)"


@dataclass(frozen=True)
class CopyFlag:
    """`student`'s answers to `items` are right for `source`'s keys and wrong for their own."""

    student: str
    source: str  # a classmate, or LECTURE_SOURCE
    items: tuple[str, ...]
    own_right: int  # number items the student got right in their own variant
    compared: int  # number items with a number answer and a key, of this student
    declared: str = ""  # the STUDENT_ID the student's notebook declared, when it is not theirs

    @property
    def count(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class AnswerReport:
    assignment: str
    students: tuple[str, ...]  # the students compared (their results hold recorded answers)
    items: tuple[str, ...]  # the number items compared (a plain number key in some variant)
    min_items: int
    flags: tuple[CopyFlag, ...]  # most matched items first
    notes: tuple[tuple[str, str], ...]  # (student, why they were not compared, or what else to know)
    # (student, the id their notebook declared) where that is another id: graded as the student
    declared_ids: tuple[tuple[str, str], ...] = ()
    # number items whose key is the same for every student and the lecture: a classmate's answer is
    # right for everyone there, so no copy can show (not among `items`)
    same_for_everyone: tuple[str, ...] = ()

    def flags_by_student(self) -> list[CopyFlag]:
        """Every flag, grouped by student (most matched items first within a student)."""
        return sorted(self.flags, key=lambda f: (f.student, -f.count, f.source))


def answer_matrix(results: Sequence[SubmissionResult], items: Sequence[Item]) -> np.ndarray:
    """students × items: each recorded number answer as a float, NaN where there is none (absent,
    unreadable, not a number, a result written before answers were recorded)."""
    out = np.full((len(results), len(items)), np.nan)
    for row, result in enumerate(results):
        recorded = {item.id: item.answer for item in result.items}
        for col, item in enumerate(items):
            value = _number_of(recorded.get(item.id))
            if value is not None:
                out[row, col] = value
    return out


def key_matrix(keys: Sequence[Mapping[str, object]], items: Sequence[Item]) -> np.ndarray:
    """sources × items: each plain number key as a float; NaN for a key that is no one number
    (a measured range or a key derived from the student's own answers: not a variant's number)."""
    out = np.full((len(keys), len(items)), np.nan)
    for row, key in enumerate(keys):
        for col, item in enumerate(items):
            value = key.get(item.id)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                out[row, col] = float(value)
    return out


def match_counts(items: Sequence[Item], answers: np.ndarray, own: np.ndarray, others: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(counts, own_right): counts[s, t] = items where student s's answer is accepted by source t's
    key and not by s's own key; own_right[s] = items s got right in their own variant."""
    counts = np.zeros((answers.shape[0], others.shape[0]), dtype=np.int32)
    own_right = np.zeros(answers.shape[0], dtype=np.int32)
    with np.errstate(invalid="ignore"):  # NaN (no answer, no key) compares False: no match
        for col, item in enumerate(items):
            right = accepts_number(item, answers[:, col], own[:, col])
            own_right += right
            accepted = accepts_number(item, answers[:, col, None], others[None, :, col])
            counts += accepted & ~right[:, None]
    return counts, own_right


def matched_items(items: Sequence[Item], answers: np.ndarray, own: np.ndarray, other: np.ndarray) -> tuple[str, ...]:
    """The items behind one count of `match_counts`, for one student and one source."""
    with np.errstate(invalid="ignore"):
        hit = accepts_number_each(items, answers, other) & ~accepts_number_each(items, answers, own)
    return tuple(item.id for item, h in zip(items, hit) if h)


def accepts_number_each(items: Sequence[Item], answers: np.ndarray, keys: np.ndarray) -> np.ndarray:
    return np.array([bool(accepts_number(item, a, k)) for item, a, k in zip(items, answers, keys)], dtype=bool)


def student_of(result: SubmissionResult) -> str:
    """The id a result was graded as (Gradescope's sid), else its folder's name."""
    return result.student_id or result.student


def declared_other_id(result: SubmissionResult) -> str:
    """The STUDENT_ID the notebook declared when it names another student than the one graded
    ("" when it names them, or none was typed)."""
    from autograder.engine.variants import StudentIdError, normalize_id

    declared = result.declared_id
    if not declared:
        return ""
    try:
        return "" if normalize_id(declared) == normalize_id(student_of(result)) else declared
    except StudentIdError:
        return declared


def compare_class(config: GradingConfig, results: Sequence[SubmissionResult],
                  keys_of: Callable[[str | None], Mapping[str, object]], min_items: int,
                  variant_of: Callable[[str], str] | None = None,
                  also_sources: Sequence[str] = ()) -> AnswerReport:
    """`keys_of(student)` gives a student's answer keys (`None`: the lecture's example);
    `variant_of(student)`, the digest of their variant now, is checked against the one each result
    was graded against (a replaced seed would compare the class with keys it was not graded on).
    `also_sources`: classmates whose own result is not compared (two records of them) but whose
    keys a copier's answers may still match."""
    items = config.items_of(ItemKind.NUMBER)
    notes, compared, own_keys = [], [], []
    for result in sorted(results, key=student_of):
        student = student_of(result)
        if not any(i.answer is not None for i in result.items if i.kind == ItemKind.NUMBER):
            notes.append((student, "its result records no answers (graded before answers were kept): "
                                   "grade it again with --force"))
            continue
        try:
            keys = keys_of(student)
            now = variant_of(student) if variant_of is not None else ""
        except ValueError as err:  # e.g. a folder name that is no student id
            notes.append((student, f"no keys for this student: {err}"))
            continue
        graded = result.variant
        if now and graded and now != graded:
            notes.append((student, f"graded against variant {graded}, but the seed now gives {now}: "
                                   "the seed was replaced after grading; grade again with --force"))
            continue
        compared.append(result)
        own_keys.append(keys)
    students = [student_of(r) for r in compared]
    extra, extra_keys = [], []
    for student in also_sources:
        try:
            extra_keys.append(keys_of(student))
            extra.append(student)
        except ValueError:
            continue
    sources = students + extra + [LECTURE_SOURCE]
    own = key_matrix(own_keys, items)
    others = np.vstack([own, *([key_matrix(extra_keys, items)] if extra_keys else []), key_matrix([keys_of(None)], items)])
    answers = answer_matrix(compared, items)
    counts, own_right = match_counts(items, answers, own, others)
    flags = []
    for s, t in zip(*np.nonzero(counts >= min_items)):
        flags.append(CopyFlag(students[s], sources[t], matched_items(items, answers[s], own[s], others[t]),
                              int(own_right[s]), int(np.sum(~np.isnan(answers[s]) & ~np.isnan(own[s]))),
                              declared_other_id(compared[s])))
    flags.sort(key=lambda f: (-f.count, f.student, f.source))
    keyed = [(item.id, col[~np.isnan(col)]) for item, col in zip(items, others.T)]
    same = tuple(item for item, col in keyed if col.size and np.all(col == col[0]))
    compared_items = tuple(item for item, col in keyed if col.size and item not in same)
    declared = tuple((student_of(r), declared_other_id(r)) for r in compared if declared_other_id(r))
    return AnswerReport(config.assignment, tuple(students), compared_items, min_items, tuple(flags),
                        tuple(sorted(notes)), declared, same)


def class_keys(name: str, students: Sequence[str], jobs: int = 1) -> dict[str | None, Mapping[str, object]]:
    """student -> their number and choice keys (None -> the lecture's), computed in `jobs` forked
    processes (a variant's keys cost what they cost when grading: for lecture 1 real tensors are
    quantized). A student whose id names no variant maps to the ValueError saying why."""
    keys: dict[str | None, Mapping[str, object]] = {None: _plain_keys(name, None)}  # loads the assignment
    if jobs <= 1 or len(students) < 2 * jobs:
        keys.update(zip(students, map(_plain_keys, [name] * len(students), students)))
        return keys
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    with context.Pool(jobs) as pool:  # forked after the assignment was loaded: the workers inherit it
        keys.update(zip(students, pool.starmap(_plain_keys, [(name, s) for s in students],
                                               chunksize=max(1, len(students) // (4 * jobs)))))
    return keys


def _plain_keys(name: str, student: str | None):
    """The keys that are one number or one letter (what a process can hand back; a measured range
    or a key derived from the student's own answers is not a variant's number anyway)."""
    from autograder.engine.variants import keys_for

    try:
        keys = keys_for(name, student)
    except ValueError as err:   # StudentIdError: no variant for this id
        return ValueError(str(err))
    return {item: value for item, value in keys.items() if isinstance(value, (int, float, str))}


def _number_of(answer: dict | None) -> float | None:
    if not answer or answer.get("state") != "given":
        return None
    value = answer.get("value")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


CSV_COLUMNS = ("student", "matches_keys_of", "count", "items", "own_right", "compared", "notebook_declares")


def report_csv(report: AnswerReport) -> str:
    from autograder.engine.outputs import csv_cell, student_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for flag in report.flags:
        # folder names as grades.csv shows them: never a formula, never another folder's cell
        writer.writerow([student_cell(flag.student), student_cell(flag.source),
                         *(csv_cell(c) for c in (flag.count, " ".join(flag.items), flag.own_right, flag.compared)),
                         student_cell(flag.declared) if flag.declared else ""])
    return buf.getvalue()


def report_json(report: AnswerReport) -> str:
    data = asdict(report)
    data["notes"] = [{"student": s, "note": n} for s, n in report.notes]
    data["declared_ids"] = [{"student": s, "notebook_declares": d} for s, d in report.declared_ids]
    return json_text(data, indent=1) + "\n"
