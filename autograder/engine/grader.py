"""Grade one submission: stage the student's files, run one Sandbox, grade every item.

Only the files grading.toml names as student files are taken from the submission; every other
file of the assignment (shared modules, selfcheck.py, public tests, …) is laid over them
from the repository's trusted copy, so a student cannot swap them.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from autograder.engine.assignment import Assignment, load_assignment
from autograder.engine.executed_notebook import executed_notebook
from autograder.engine.function_items import grade_function
from autograder.engine.feedback import function_feedback
from autograder.engine.guard import guarded
from autograder.engine.invoke import StudentCode
from autograder.engine.locate import MAX_STUDENT_FILE_BYTES, StudentFiles, locate
from autograder.engine.report_items import grade_report
from autograder.engine.results import ItemResult, SubmissionResult
from autograder.engine.vocabulary import REPORT_KINDS, ItemKind
from autograder.sandbox import Limits, Sandbox
from autograder.sandbox.nbrunner import NotebookUnreadable, load_code_cells

# What code in the sandbox is told: the notebook's check() helper stays quiet while the trusted
# grader runs the notebook (selfcheck.py reads it).
SANDBOX_ENV = {"CS349E_TRUSTED_GRADING": "1"}
# The student's functions may use this many call timeouts in total before the rest is skipped.
CALL_TIMEOUTS_PER_SUBMISSION = 12


def grade_submission(assignment_name: str, submission_dir: Path, *, limits: Limits | None = None,
                     isolation: str = "bubblewrap") -> SubmissionResult:
    """Grade the submission in `submission_dir` (its files directly inside, or in a subfolder
    named after the assignment, as nbgrader collects them)."""
    assignment = load_assignment(assignment_name)
    config = assignment.config
    limits = limits or Limits()
    started = time.perf_counter()
    files = locate(Path(submission_dir), config)

    executed = executed_notebook(config.notebook, None)
    if not files.present:
        items = _nothing_submitted(assignment, files)
        used, quotas = "none", ""
    else:
        with tempfile.TemporaryDirectory(prefix="cs349e-stage-") as staging:
            for name in files.present:
                shutil.copyfile(files.path(name), Path(staging) / name)
            with Sandbox(Path(staging), overlay=config.trusted_files(), limits=limits,
                         isolation=isolation, env=SANDBOX_ENV, factories=assignment.factories) as box:
                used, quotas = box.isolation, box.quotas
                items, executed = _grade_items(assignment, files, box, limits)

    order = {item.id: i for i, item in enumerate(config.items)}
    items = sorted(items, key=lambda item: order[item.id])
    score = round(sum(item.score for item in items), 2)
    return SubmissionResult(
        student=files.student, score=score, max_score=config.total_points, items=tuple(items),
        isolation=used, seconds=round(time.perf_counter() - started, 3), assignment=config.assignment,
        fingerprint=files.fingerprint(config), case_set=assignment.case_set, quotas=quotas, executed=executed)


def _grade_items(assignment: Assignment, files: StudentFiles, box: Sandbox, limits: Limits
                 ) -> tuple[list[ItemResult], dict]:
    """Every item's grade, and the executed notebook (the outputs of its one run)."""
    config = assignment.config
    deadline = time.monotonic() + CALL_TIMEOUTS_PER_SUBMISSION * limits.call_timeout
    code = StudentCode(box, config.student_module or "", deadline=deadline)
    items = _grade_functions(assignment, files, code) if config.items_of(ItemKind.FUNCTION) else []
    report = config.items_of(*REPORT_KINDS)
    notebook = None
    if report:
        sources = None
        if config.notebook in files.present:
            notebook = code.run_notebook(config.notebook, [item.id for item in report if item.kind.is_automatic])
            sources = _code_cells(files.path(config.notebook))
            if notebook is not None and notebook.status == "unreadable" and sources is not None:
                # The student's file is fine; something went wrong between us and the sandbox.
                # A grader error is retried on the next run instead of costing the student points.
                raise RuntimeError(f"the sandbox could not read {config.notebook}, which the grader reads "
                                   f"as a notebook: {notebook.message}")
        items += grade_report(report, assignment.answer_key, notebook, config.notebook,
                              _missing_text(config.notebook, files), cell_sources=sources)
    return items, executed_notebook(config.notebook, notebook)


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


def _nothing_submitted(assignment: Assignment, files: StudentFiles) -> list[ItemResult]:
    config = assignment.config
    items = _unable(assignment, _missing_text(f"{config.student_module}.py", files))
    report = config.items_of(*REPORT_KINDS)
    if report:
        items += grade_report(report, assignment.answer_key, None, config.notebook,
                              _missing_text(config.notebook, files))
    return items


def _unable(assignment: Assignment, reason: str) -> list[ItemResult]:
    """Every function item as an error with the same reason (e.g. the module file is missing)."""
    return [_error(item, function_feedback(assignment.suites[item.id], [], reason, ""))
            for item in assignment.config.items_of(ItemKind.FUNCTION)]


def _error(item, feedback: str) -> ItemResult:
    return ItemResult(item.id, item.kind, 0.0, item.points, "error", feedback, "", item.title)


def _missing_text(name: str | None, files: StudentFiles) -> str:
    if name in files.oversized:
        size = files.path(name).stat().st_size / 1024**2
        hint = "（例如图片输出）" if name.endswith(".ipynb") else ""
        return (f"`{name}` 有 {size:,.0f} MB，超过了评分读取的上限 {MAX_STUDENT_FILE_BYTES // 1024**2} MB，"
                f"没有评分：请删掉其中大的内容{hint}后重新提交。")
    if files.linked:
        return f"没有找到 `{name}`：提交的文件夹是一个符号链接，评分不读取链接指向的内容。请提交文件本身。"
    text = f"没有找到 `{name}`：请提交这个文件，文件名不要改动。"
    suffix = Path(name or "").suffix
    similar = [o for o in files.others if o.endswith(suffix)]
    if similar:
        text += f"（提交的文件夹里有 {'、'.join(f'`{o}`' for o in similar)}，但评分只读取 `{name}`。）"
    return text
