"""`check`'s look at per-student variants: are the sampled variants equally gradable?

For a sample of variants (the lecture's own first, then "check-1", … drawn like any student's):
every key is defined and of the item's kind, every number key lies inside the item's `plausible`
range of grading.toml (the range selfcheck.py shows every student), and an item the author marks
as depending on the parameters (`DEPENDENT` in solutions/<name>/variants.py) does not have the same
key in every sample (a choice whose answer is always "A" is no question for anyone). The
reference's full marks in each of a few of them is graded by the caller (autograder/api/author_check.py).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field

from autograder.engine.answer_checks import DerivedKey, MeasuredKey, ReferenceKey
from autograder.engine.assignment import load_assignment
from autograder.engine.checks import is_real_number
from autograder.engine.variants import samples, variants_module
from autograder.engine.vocabulary import KEYED_KINDS, ItemKind

KEY_SAMPLES = 16  # keys are cheap: enough samples that a two-letter choice is not constant by chance
GRADED_SAMPLES = 3  # the reference is graded in this many (each runs the notebook)


@dataclass
class VariantSummary:
    labels: list[str]
    rows: list[str] = field(default_factory=list)  # one line per keyed item
    problems: list[str] = field(default_factory=list)


def plausible_ranges(name: str) -> dict[str, tuple[float, float]]:
    config = load_assignment(name).config
    raw = tomllib.loads((config.folder / "grading.toml").read_text(encoding="utf-8"))
    return {item["id"]: tuple(item["plausible"]) for item in raw.get("items", [])
            if isinstance(item, dict) and isinstance(item.get("plausible"), list) and len(item["plausible"]) == 2}


def dependent_items(name: str) -> tuple[str, ...]:
    return tuple(getattr(variants_module(name), "DEPENDENT", ()))


def summarize_variants(name: str, n: int = KEY_SAMPLES) -> VariantSummary:
    assignment = load_assignment(name)
    config = assignment.config
    drawn = samples(name, n)
    summary = VariantSummary([label for label, _ in drawn])
    keys = []
    for label, params in drawn:
        try:
            keys.append((label, dict(assignment.key_for(params))))
        except Exception as err:  # noqa: BLE001 - the author's key function failed for these parameters
            summary.problems.append(f"variant {label} {params}: answer_key(params) fails: {type(err).__name__}: {err}")
    ranges, dependent = plausible_ranges(name), dependent_items(name)
    unknown = sorted(set(dependent) - {item.id for item in config.items_of(*KEYED_KINDS)})
    summary.problems += [f"variants.py DEPENDENT names {item}, not a number or choice item" for item in unknown]
    for item in config.items_of(*KEYED_KINDS):
        values = [(label, key[item.id]) for label, key in keys]
        if any(isinstance(v, ReferenceKey) for _, v in values):
            summary.rows.append(f"{item.id:<28} measured: checked against the grading machine's own run in the sandbox")
            continue
        if any(isinstance(v, (MeasuredKey, DerivedKey)) for _, v in values):
            summary.rows.append(f"{item.id:<28} measured or derived: checked against the student's own run")
            continue
        bad = [label for label, v in values if (v is None or (isinstance(v, float) and not math.isfinite(v)))]
        summary.problems += [f"{item.id}: variant {label} has no key ({dict(values)[label]!r})" for label in bad]
        distinct = sorted({repr(v) for _, v in values})
        marked = item.id in dependent
        if item.kind is ItemKind.NUMBER:
            numbers = [float(v) for _, v in values if is_real_number(v) and math.isfinite(float(v))]
            low, high = ranges.get(item.id, (-math.inf, math.inf))
            outside = [(label, v) for label, v in values if is_real_number(v) and not low <= float(v) <= high]
            summary.problems += [f"{item.id}: variant {label}'s key {v!r} is outside its plausible range "
                                 f"[{low:g}, {high:g}] (grading.toml): selfcheck would tell that student a right "
                                 f"answer looks wrong" for label, v in outside]
            span = f"[{min(numbers):.4g}, {max(numbers):.4g}]" if numbers else "-"
            summary.rows.append(f"{item.id:<28} {len(distinct):>2} distinct of {len(values)}  keys {span:<22} "
                                f"plausible [{low:g}, {high:g}]{'  DEPENDENT' if marked else ''}")
        else:
            counts = {c: sum(v == c for _, v in values) for c in item.choices}
            shown = " ".join(f"{c}:{k}" for c, k in counts.items())
            summary.rows.append(f"{item.id:<28} {len(distinct):>2} distinct of {len(values)}  choices {shown}"
                                f"{'  DEPENDENT' if marked else ''}")
        if marked and len(values) > 1 and len(distinct) == 1:
            summary.problems.append(f"{item.id}: marked DEPENDENT in variants.py, but its key is {values[0][1]!r} in "
                                    f"all {len(values)} sampled variants: the parameters never change the answer "
                                    f"(degenerate), so widen the draw or unmark it")
    return summary


LESSON_SAMPLES = 1000  # variants `check` draws to prove every lesson holds and every choice leads
SHOWN_PER_LESSON = 3  # breaking variants named per lesson (then a count)


@dataclass
class LessonSummary:
    samples: int
    rows: list[str] = field(default_factory=list)  # one line per lesson: the range of its quantity
    problems: list[str] = field(default_factory=list)


def lessons_module(name: str):
    """solutions/<name>/lessons.py (LESSONS), or None: an assignment may declare no lessons."""
    import importlib

    try:
        return importlib.import_module(f"solutions.{name}.lessons")
    except ModuleNotFoundError as err:
        if err.name != f"solutions.{name}.lessons":
            raise
        return None


def check_lessons(name: str, n: int = LESSON_SAMPLES) -> LessonSummary | None:
    """Every lesson of solutions/<name>/lessons.py over `n` sampled variants (the lecture's first): a
    lesson whose quantity leaves its bound in some variant is a problem naming the item, the variant,
    the quantity and the parameters it reads. None when the assignment declares no lessons."""
    module = lessons_module(name)
    if module is None:
        return None
    lessons = tuple(module.LESSONS)
    assignment = load_assignment(name)
    items = {item.id for item in assignment.config.items}
    summary = LessonSummary(n)
    summary.problems += [f"lessons.py names {lesson.item}, not an item of grading.toml"
                         for lesson in lessons if lesson.item not in items]
    values: list[list[float]] = [[] for _ in lessons]
    broken: list[list[str]] = [[] for _ in lessons]
    for label, params in _drawn_one_by_one(name, n):
        key = dict(assignment.key_for(params))
        stored = _lesson_values(name, lessons, params, key)
        for i, lesson in enumerate(lessons):
            if not lesson.applies(params):
                continue
            try:
                value = stored[str(i)] if str(i) in stored else float(lesson.value(params, key))
            except Exception as err:  # noqa: BLE001 - the author's lesson failed for these parameters
                value = math.nan
                broken[i].append(f"variant {label}: the lesson's value fails: {type(err).__name__}: {err}")
                continue
            values[i].append(value)
            if not lesson.holds(value):
                shown = ", ".join(f"{p}={params[p]!r}" for p in lesson.reads if p in params)
                broken[i].append(f"variant {label}: {value:.4g}, expected {lesson.bound()}" + (f" ({shown})" if shown else ""))
    for lesson, seen, bad in zip(lessons, values, broken):
        span = f"[{min(seen):.4g}, {max(seen):.4g}]" if seen else "-"
        summary.rows.append(f"{lesson.item:<30} {span:<22} {lesson.bound():<16} {lesson.teaches}")
        if bad:
            more = f" (and {len(bad) - SHOWN_PER_LESSON} more variants)" if len(bad) > SHOWN_PER_LESSON else ""
            summary.problems.append(f"{lesson.item}: {lesson.teaches}: broken in {len(bad)} of {n} variants: "
                                    + "; ".join(bad[:SHOWN_PER_LESSON]) + more
                                    + ": redraw such variants, widen the margin, or accept both answers within it")
    return summary


def _lesson_values(name: str, lessons: tuple, params: dict, key: dict) -> dict[str, float]:
    """Each applicable lesson's value for one variant, by the lesson's index; stored beside the variant's
    keys (autograder/engine/key_cache.py), so `check` and the tests that sample the same variants compute
    them once. A pure function of the sources the store's digest covers (the lessons live in
    solutions/<name>/) and of the Lesson type, whose source names the entry. A value that fails or is not
    finite is left out (and not stored): the caller computes it again and reports it."""
    import hashlib
    import inspect

    from authoring import lessons as lesson_type
    from autograder.engine.key_cache import cached_key
    from autograder.engine.variants import canonical_json

    def compute() -> dict[str, float]:
        values = {}
        for i, lesson in enumerate(lessons):
            if lesson.applies(params):
                try:
                    value = float(lesson.value(params, key))
                except Exception:  # noqa: BLE001 - reported by the caller, which computes it again
                    continue
                if math.isfinite(value):
                    values[str(i)] = value
        return values

    version = hashlib.sha256(inspect.getsource(lesson_type).encode()).hexdigest()[:16]
    return cached_key(name, f"lessons {version} {len(lessons)}\0{canonical_json(params)}", compute)


def _drawn_one_by_one(name: str, n: int):
    """samples(name, n), drawn lazily: each variant is keyed right after its draw, while what the draw
    computed (its data, its tile's errors) is still in the reference's caches."""
    from autograder.engine.variants import params_for

    yield from samples(name, min(n, 1))
    for i in range(1, n):
        sid = f"check-{i}"
        yield sid, params_for(name, sid)
