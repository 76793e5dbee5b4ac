"""Grade one submission: stage the student's files, run one Sandbox, grade every item.

Only the files grading.toml names as student files are taken from the submission; every other
file of the assignment (shared modules, selfcheck.py, public tests, …) is laid over them
from the repository's trusted copy, so a student cannot swap them.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from autograder.engine.answer_checks import MeasuredKey, own_records, with_references
from autograder.engine.assignment import Assignment, load_assignment
from autograder.engine.checks import finite_float, is_real_number
from autograder.engine.executed_notebook import executed_notebook
from autograder.engine.function_items import grade_function
from autograder.engine.feedback import code as quoted, function_feedback
from autograder.engine.guard import guarded
from autograder.engine.invoke import StudentCode
from autograder.engine.locate import MAX_STUDENT_FILE_BYTES, StudentFiles, locate
from autograder.engine.nothing_graded import why_nothing
from autograder.engine.reference_measurement import Reference, take, take_again
from autograder.engine.registry import ConfigError
from autograder.engine.report_items import grade_report
from autograder.engine.results import ItemResult, SubmissionResult
from autograder.engine.variants import (StudentIdError, canonical_json, normalize_id, params_for, plain,
                                        variant_digest)
from autograder.engine.vocabulary import REPORT_KINDS, ItemKind
from autograder.sandbox import Limits, Sandbox, confinement
from autograder.sandbox.nbrunner import FIGURES_ENV, NotebookUnreadable, load_code_cells

# What code in the sandbox is told: the notebook's check() helper stays quiet while the trusted
# grader runs the notebook (selfcheck.py reads it).
SANDBOX_ENV = {"CS349E_TRUSTED_GRADING": "1"}
# The student's functions may use this many call timeouts in total before the rest is skipped.
CALL_TIMEOUTS_PER_SUBMISSION = 12
# The variable of the notebook's first code cell (assignments with variants): the id the student typed.
STUDENT_ID_VARIABLE = "STUDENT_ID"
# The sandbox's environment names the student being graded: the released variant.py falls back to it
# when the notebook's STUDENT_ID is left empty (as it does to JupyterHub's login name).
STUDENT_ID_ENV = "CS349E_STUDENT_ID"
# ... and gives that student's parameters, so a student missing from the released table (added to
# the roster later) or an author's sampled variant is graded all the same.
VARIANT_ENV = "CS349E_VARIANT"
FOLDER = "folder"  # student_id_source of an id taken from the submission folder's name


@dataclass(frozen=True)
class Graded:
    """Who a submission is graded as, and against which keys."""

    student_id: str
    source: str
    params: dict | None  # None: the assignment has no variants
    key: Mapping[str, Any]

    @property
    def variant(self) -> str:
        return variant_digest(self.params) if self.params is not None else ""


def graded_as(assignment: Assignment, student_id: str, source: str, params: Mapping | None = None) -> Graded:
    """`params` (an author's check only) grades against those parameters instead of the student's."""
    if not assignment.variants:
        return Graded("", "", None, assignment.answer_key)
    name = assignment.config.assignment
    try:
        sid = normalize_id(student_id)
    except StudentIdError as err:
        raise ConfigError(f"{name}: cannot grade a submission as {student_id!r} ({source}): {err}") from None
    params = params_for(name, sid) if params is None else plain(params, "the parameters to grade with")
    return Graded(sid, source, params, assignment.key_for(params))


def grade_submission(assignment_name: str, submission: Path | StudentFiles, *, limits: Limits | None = None,
                     isolation: str = confinement.DEFAULT.name, student_id: str | None = None,
                     id_source: str = FOLDER, variant_params: Mapping | None = None,
                     figures: bool = False) -> SubmissionResult:
    """Grade the submission in the folder `submission` (its files directly inside, or in a subfolder
    named after the assignment, as nbgrader collects them), or already located (StudentFiles, e.g.
    a cluster's parcel, its bytes in memory). With per-student variants it is graded
    against the variant of `student_id` (default: the folder's name; `id_source` says where the id
    came from). `figures`: draw the notebook's figures as PNG in the executed notebook (for pages
    a student will see; otherwise each is recorded by its text, and the score is the same)."""
    assignment = load_assignment(assignment_name)
    config = assignment.config
    limits = limits or Limits()
    started = time.perf_counter()
    files = submission if isinstance(submission, StudentFiles) else locate(Path(submission), config)
    who = graded_as(assignment, files.student if student_id is None else student_id,
                    FOLDER if student_id is None else id_source, variant_params)
    env = {**SANDBOX_ENV, FIGURES_ENV: "png" if figures else "none"}
    if who.params is not None:
        env.update({STUDENT_ID_ENV: who.student_id, VARIANT_ENV: canonical_json(who.params)})

    executed, declared, reference, again = executed_notebook(config.notebook, None), "", None, None
    claims: tuple[str, ...] = ()
    used: list[Reference] = []
    unresolved = who.key
    if config.items_of(*REPORT_KINDS) and config.notebook in files.present:
        # this process's reference, or taken now, in a sandbox of its own before the student's opens
        def measured() -> Mapping[str, Any]:
            used.append(take(assignment, isolation, limits, SANDBOX_ENV))
            return used[0].values

        who = replace(who, key=with_references(unresolved, measured))
        reference = used[0] if used else None
    if not files.present:
        items = _nothing_submitted(assignment, files, who)
        used, quotas, scratch, placed = confinement.NOT_RUN.name, "", None, None
        namespaces, disk_cap = (None, None, None), None
    else:
        with tempfile.TemporaryDirectory(prefix="cs349e-stage-") as staging:
            files.copy_to(Path(staging))
            with Sandbox(Path(staging), overlay=config.trusted_files(), limits=limits,
                         isolation=isolation, env=env, factories=assignment.factories) as box:
                items, executed, declared, report, claims = _grade_items(assignment, files, Path(staging), box,
                                                                          limits, who)
                # what confined it, read at the end: a restarted worker may have added scratch
                used, quotas, scratch, placed = box.isolation, box.quotas, box.private_scratch, bool(box.cpus)
                namespaces, disk_cap = (box.own_network, box.own_ipc, box.own_proc), box.disk_cap or None
        if reference is not None and report is not None and _measurement_disagrees(items, who.key, report.variables):
            # once the student's sandbox is closed: the machine as the student's run met it
            fresh = take_again(assignment, isolation, limits, SANDBOX_ENV)
            items, chosen = _better_report(items, report.regrade(with_references(unresolved, lambda: fresh.values)))
            again = {**fresh.record(), "used": chosen}

    order = {item.id: i for i, item in enumerate(config.items)}
    items = sorted(items, key=lambda item: order[item.id])
    score = round(sum(item.score for item in items), 2)
    return SubmissionResult(
        student=files.student, score=score, max_score=config.total_points, items=tuple(items),
        isolation=used, private_scratch=scratch, placed=placed, own_network=namespaces[0], own_ipc=namespaces[1],
        own_proc=namespaces[2], disk_cap=disk_cap,
        seconds=round(time.perf_counter() - started, 3), assignment=config.assignment,
        fingerprint=files.fingerprint(config), case_set=assignment.case_set, quotas=quotas, executed=executed,
        student_id=who.student_id, student_id_source=who.source, variant=who.variant, declared_id=declared,
        flags=_id_flags(who, declared) + why_nothing(config, files, items) + claims,
        reference=reference.record() if reference is not None else None, reference_again=again)


@dataclass(frozen=True)
class _Report:
    """What the report items were judged from, to judge them again against other keys."""
    variables: Mapping[str, Any]
    regrade: Callable[[Mapping[str, Any]], list[ItemResult]]   # a key -> the report items judged by it


def _measurement_disagrees(items: list[ItemResult], key: Mapping[str, Any], variables: Mapping[str, Any]) -> bool:
    """Did a number the student's own run measured fall outside the reference's window? (Not a
    miscounted one inside it: another reference would not change that.)"""
    def outside(item_id: str) -> bool:
        window, value = key.get(item_id), variables.get(item_id)
        if not (isinstance(window, MeasuredKey) and is_real_number(value)):
            return False
        number = finite_float(value)
        return number is None or not window.low <= number <= window.high

    return any(item.status == "failed" and outside(item.id) for item in items)


def _better_report(items: list[ItemResult], again: list[ItemResult]) -> tuple[list[ItemResult], bool]:
    """`items` with its report items replaced by `again` where those score higher in all; and whether."""
    ids = {item.id for item in again}
    first = [item for item in items if item.id in ids]
    if sum(item.score for item in again) <= sum(item.score for item in first):
        return items, False
    by_id = {item.id: item for item in again}
    return [by_id.get(item.id, item) for item in items], True


def _id_flags(who: Graded, declared: str) -> tuple[str, ...]:
    """A notebook that names another student than the one it was handed in as: graded as the
    latter (its keys), and said so for the instructor."""
    if who.params is None or not declared:
        return ()
    try:
        same = normalize_id(declared) == who.student_id
    except StudentIdError:
        same = False
    return () if same else (f"notebook declares STUDENT_ID {declared!r}, graded as {who.student_id!r} ({who.source})",)


def _declared_id(notebook) -> str:
    """The STUDENT_ID the executed notebook defined ("" when none: left empty, or no notebook)."""
    value = notebook.variables.get(STUDENT_ID_VARIABLE) if notebook is not None else None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return ""
    return str(value).strip()[:200]


def _grade_items(assignment: Assignment, files: StudentFiles, staged: Path, box: Sandbox, limits: Limits,
                 who: Graded) -> tuple[list[ItemResult], dict, str, _Report | None, tuple[str, ...]]:
    """Every item's grade, the executed notebook (the outputs of its one run), the student id the
    notebook declared, and what the report was judged from (None when the notebook did not run).
    `staged`: the folder the student's files were copied into for the sandbox; `who.key` has its
    reference keys resolved already."""
    config = assignment.config
    deadline = time.monotonic() + CALL_TIMEOUTS_PER_SUBMISSION * limits.call_timeout
    code = StudentCode(box, config.student_module or "", deadline=deadline)
    report = config.items_of(*REPORT_KINDS)
    items = _grade_functions(assignment, files, code) if config.items_of(ItemKind.FUNCTION) else []
    notebook, claims = None, ()
    if report:
        sources = None
        if config.notebook in files.present:
            wanted = [item.id for item in report if item.kind.is_automatic]
            wanted += [STUDENT_ID_VARIABLE] if who.params is not None else []
            wanted += own_records(who.key)   # the timings the run took, for the measured items
            # The sandbox's own word on reading the notebook is the one it gives before any of the
            # student's code runs there: once the module or a cell ran, every reply is theirs to
            # forge (a module patched the worker's reader; a cell rewrote the worker's memory).
            own_word = code.read_notebook(config.notebook) if code.import_outcome is None else None
            misread = own_word is not None and own_word.status == "unreadable"
            notebook = own_word if misread else code.run_notebook(config.notebook, wanted)
            sources = _code_cells(staged / config.notebook)
            if notebook is not None and notebook.status == "unreadable" and sources is not None:
                # The student's file is fine. If the sandbox said so before any of the student's
                # code ran there, something went wrong between us and the sandbox: a grader error
                # is retried on the next run instead of costing the student points. Said after,
                # it is graded as the sandbox said, and flagged.
                if misread:
                    raise RuntimeError(f"the sandbox could not read {config.notebook}, which the grader reads "
                                       f"as a notebook: {notebook.message}")
                claims = (f"{config.notebook}: the sandbox reported it unreadable after the student's code ran "
                          f"there, though the grader reads it as a notebook: its answers were graded as unreadable",)
        problem = _missing_text(config.notebook, files)

        def regrade(key: Mapping[str, Any]) -> list[ItemResult]:
            return grade_report(report, key, notebook, config.notebook, problem, cell_sources=sources)

        items += regrade(who.key)
    declared = _declared_id(notebook) if who.params is not None else ""
    judged = _Report(notebook.variables, regrade) if notebook is not None else None
    return items, executed_notebook(config.notebook, notebook), declared, judged, claims


def _code_cells(path: Path) -> dict[int, str] | None:
    """The notebook's code cells by index, read the way the sandbox reads them; None if unreadable."""
    try:
        return dict(load_code_cells(str(path)))
    except NotebookUnreadable:
        return None


def _grade_functions(assignment: Assignment, files: StudentFiles, code: StudentCode) -> list[ItemResult]:
    module_file = f"{code.module}.py"
    if module_file not in files.present:
        return _unable(assignment, _missing_text(module_file, files))
    code.load()
    defined = code.import_outcome.value if code.loaded else None
    items = []
    for item in assignment.config.items_of(ItemKind.FUNCTION):
        suite = assignment.suites[item.id]
        if isinstance(defined, list) and item.id not in defined:
            message = f"`{module_file}` 中没有定义函数 `{item.id}`（函数名要和骨架里的一致）。"
            items.append(_error(item, function_feedback(suite, [], message, "")))
        else:
            # an import failure is explained there; a value the checks cannot handle costs one item
            items.append(guarded(item, lambda: grade_function(item, suite, code)))
    return items


def _nothing_submitted(assignment: Assignment, files: StudentFiles, who: Graded) -> list[ItemResult]:
    config = assignment.config
    items = _unable(assignment, _missing_text(f"{config.student_module}.py", files))
    report = config.items_of(*REPORT_KINDS)
    if report:
        items += grade_report(report, who.key, None, config.notebook,
                              _missing_text(config.notebook, files))
    return items


def _unable(assignment: Assignment, reason: str) -> list[ItemResult]:
    """Every function item as an error with the same reason (e.g. the module file is missing)."""
    return [_error(item, function_feedback(assignment.suites[item.id], [], reason, ""))
            for item in assignment.config.items_of(ItemKind.FUNCTION)]


def _error(item, feedback: str) -> ItemResult:
    return ItemResult(item.id, item.kind, 0.0, item.points, "error", feedback, "", item.title)


SIMILAR_NAMED = 5   # look-alike files a missing file's feedback names


def _missing_text(name: str | None, files: StudentFiles) -> str:
    if name in files.oversized:
        size = files.size(name) / 1024**2
        hint = "（例如图片输出）" if name.endswith(".ipynb") else ""
        return (f"`{name}` 有 {size:,.0f} MB，超过了评分读取的上限 {MAX_STUDENT_FILE_BYTES // 1024**2} MB，"
                f"没有评分：请删掉其中大的内容{hint}后重新提交。")
    if files.linked:
        return f"没有找到 `{name}`：提交的文件夹是一个符号链接，评分不读取链接指向的内容。请提交文件本身。"
    text = f"没有找到 `{name}`：请提交这个文件，文件名不要改动。"
    suffix = Path(name or "").suffix
    similar = [o for o in files.others if o.endswith(suffix)]
    if similar:
        # quoted as code: a file's name is the student's (a backtick in it closed the span, and
        # the rest was live Markdown: a remote image, a link). A few named, the rest counted: a
        # folder of 9,990 look-alike names put 27 MB of names into one student's feedback.
        named = "、".join(quoted(o) for o in similar[:SIMILAR_NAMED])
        more = f" 等 {len(similar):,} 个文件" if len(similar) > SIMILAR_NAMED else ""
        text += f"（提交的文件夹里有 {named}{more}，但评分只读取 `{name}`。）"
    return text
