"""The student-facing solutions of an assignment, released after the due date.

The bundle is the student's folder as it would look solved, and runs on its own:
- every public file of assignments/<name>/ (self-check helper, public tests, shared copies, README);
- the solved student files and the answered notebook (the same ones `python -m autograder
  reference` writes), with a short explanation after each question's answer
  (solutions/<name>/explanations.py: `EXPLANATIONS = {item id: Markdown}`);
- the lecture demo run on the solved functions (solutions/<name>/demo.py, importing the bundle's
  own modules instead of `solutions.<name>.*`): `python demo.py`.
Nothing of autograder/ (hidden tests, grader) goes in.
"""

from __future__ import annotations

import ast
import importlib
import re
import shutil
import tempfile
import textwrap
from collections.abc import Mapping
from pathlib import Path

import nbformat

from autograder.build import write_reference_submission
from autograder.build.notebook import STUDENT_ID_CELL_ID, answer_cell_id
from autograder.engine.registry import REPO_ROOT, GradingConfig, load_config
from autograder.engine.vocabulary import ItemKind
from autograder.errors import InstructorError

DEMO = "demo.py"
BUNDLE_README = "SOLUTIONS.md"
EXPLANATION_HEADING = "**解析**"


class BundleError(InstructorError):
    """The solutions of an assignment cannot be bundled (an instructor's problem)."""


def write_solutions_bundle(assignment: str, dest: Path) -> list[str]:
    """Write the bundle as `dest`, replacing an earlier one; returns the relative path of every file in it.

    The bundle is staged beside `dest` and renamed into place only when complete: a release that
    fails half-way leaves no partial folder (and an earlier release as it was). A `dest` that holds
    anything but an earlier bundle is refused, never replaced."""
    config = load_config(assignment)
    explanations = _explanations(config)
    dest = Path(dest)
    if dest.exists() and not (dest.is_dir() and (not any(dest.iterdir()) or (dest / BUNDLE_README).is_file())):
        raise BundleError(f"{dest} exists and is not an earlier solutions bundle (no {BUNDLE_README}): "
                          "choose another --out")
    dest.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.staging-", dir=dest.parent))
    try:
        stage.chmod(0o755)  # mkdtemp's 0700 would keep the released folder from the course's readers
        written = _write_bundle(config, explanations, stage)
        _swap_in(stage, dest)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return written


def _swap_in(stage: Path, dest: Path) -> None:
    """Rename the complete `stage` to `dest`; an earlier `dest` is moved aside first and removed after."""
    if not dest.exists():
        stage.rename(dest)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.replaced-", dir=dest.parent))
    dest.rename(aside / dest.name)
    try:
        stage.rename(dest)
    except BaseException:
        (aside / dest.name).rename(dest)
        raise
    finally:
        if not (aside / dest.name).exists() or dest.exists():
            shutil.rmtree(aside, ignore_errors=True)


def _write_bundle(config: GradingConfig, explanations: Mapping[str, str], dest: Path) -> list[str]:
    assignment = config.assignment
    for rel, source in config.trusted_files().items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    write_reference_submission(assignment, dest)
    if config.notebook:
        _add_explanations(dest / config.notebook, config, explanations)
        _use_lecture_parameters(dest / config.notebook, assignment)
    (dest / DEMO).write_text(bundled_demo(assignment, dest), encoding="utf-8")
    (dest / BUNDLE_README).write_text(_readme(config), encoding="utf-8")
    return sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())


def bundled_demo(assignment: str, bundle: Path) -> str:
    """solutions/<assignment>/demo.py importing the bundle's modules, runnable as a script."""
    path = REPO_ROOT / "solutions" / assignment / DEMO
    if not path.is_file():
        raise BundleError(f"{path} not found: the solutions bundle ships the lecture demo")
    own_import = re.compile(rf"^(\s*)from {re.escape(f'solutions.{assignment}.')}(\w+) import", re.MULTILINE)
    source = path.read_text(encoding="utf-8")
    absent = sorted({m[2] for m in own_import.finditer(source)} - {p.stem for p in bundle.glob("*.py")})
    if absent:
        raise BundleError(f"{path} imports solutions.{assignment}.{absent[0]}, which the bundle does not contain")
    text = own_import.sub(r"\1from \2 import", source)
    for node in ast.walk(ast.parse(text, filename=str(path))):
        modules = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                   else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
        if any(module.split(".")[0] == "solutions" for module in modules):
            raise BundleError(f"{path} imports from solutions/ in a way the bundle cannot rewrite "
                              f"(use `from solutions.{assignment}.<module> import ...`)")
    if not re.search(r'^if __name__ == "__main__":', text, flags=re.MULTILINE):
        text = text.rstrip("\n") + '\n\n\nif __name__ == "__main__":\n    main()\n'
    return text


def _explanations(config: GradingConfig) -> Mapping[str, str]:
    module_name = f"solutions.{config.assignment}.explanations"
    try:
        explanations = importlib.import_module(module_name).EXPLANATIONS
    except (ModuleNotFoundError, AttributeError) as err:
        raise BundleError(f"{module_name} must define EXPLANATIONS = {{item id: Markdown}} ({err})") from None
    questions = {item.id for item in config.items if item.kind != "function"}
    missing, unknown = sorted(questions - set(explanations)), sorted(set(explanations) - questions)
    if missing or unknown:
        raise BundleError(f"{module_name}.EXPLANATIONS: missing {missing}, not a question {unknown}")
    empty = sorted(item for item, text in explanations.items() if not str(text).strip())
    if empty:
        raise BundleError(f"{module_name}.EXPLANATIONS: empty explanation for {empty}")
    return explanations


def _add_explanations(path: Path, config: GradingConfig, explanations: Mapping[str, str]) -> None:
    """After each question's answer cell, a Markdown cell with its explanation."""
    nb = nbformat.read(path, as_version=4)
    answer_of = {(item.id if item.kind == ItemKind.TEXT else answer_cell_id(item.id)): item.id
                 for item in config.items if item.kind != "function"}
    cells, placed = [], set()
    for cell in nb.cells:
        cells.append(cell)
        item = answer_of.get(cell.get("id"))
        if item is not None:
            text = f"{EXPLANATION_HEADING}\n\n{textwrap.dedent(explanations[item]).strip()}"
            cells.append(nbformat.v4.new_markdown_cell(text, id=f"{item}_explanation"))
            placed.add(item)
    missing = sorted(set(answer_of.values()) - placed)
    if missing:
        raise BundleError(f"{path.name}: no answer cell found for {missing}")
    nb.cells = cells
    nbformat.write(nb, path)


# The solutions are worked with the lecture's own parameters (variants.py's LECTURE): no student id
# opens them, so the bundle's notebook sets VARIANT itself instead of asking for STUDENT_ID.
LECTURE_CELL = """\
STUDENT_ID = ""  # 参考解答用讲义的参数（LECTURE），不用填学号；每位同学的数字不同，你的参数在你自己的 notebook 里
VARIANT = {params}
VARIANT"""


def _use_lecture_parameters(path: Path, assignment: str) -> None:
    from autograder.engine.variants import has_variants, lecture_params

    if not has_variants(assignment):
        return
    nb = nbformat.read(path, as_version=4)
    cells = [cell for cell in nb.cells if cell.get("id") == STUDENT_ID_CELL_ID]
    if len(cells) != 1:
        raise BundleError(f"{path.name}: expected one `{STUDENT_ID_CELL_ID}` cell, found {len(cells)}")
    cells[0].source = LECTURE_CELL.format(params=repr(lecture_params(assignment)))
    nbformat.write(nb, path)


def _variants_note(config: GradingConfig) -> str:
    from autograder.engine.variants import has_variants

    if not has_variants(config.assignment):
        return ""
    return ("- 每位同学的题目数字不同（由学号决定）：这里的答案和解析用的是讲义自己的参数（notebook 第一个代码格子里的"
            " `VARIANT`）；对照时看方法，你的数字按你自己的参数算。\n")


def _readme(config: GradingConfig) -> str:
    files = "、".join(f"`{name}`" for name in config.student_files)
    return (f"# {config.assignment} 参考解答\n\n"
            f"- {files}：参考实现和作答完的 notebook；每道题的答案后面有一段**解析**。\n"
            f"- `{DEMO}`：用参考实现跑一遍讲义的三个演示：`python {DEMO}`。\n"
            + _variants_note(config) +
            "- 其余文件和发给你的作业文件夹相同（公开测试、自查工具、芯片参数表）。\n\n"
            "先自己做完再看；和你的答案对照时，重点看思路和边界情况，而不只是数字。\n")
