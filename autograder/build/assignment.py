"""Generate an assignment's student files from solutions/ and the repository root, and check for drift.

What is generated for assignments/<name>/ (the author writes only grading.toml and public_cases.py there):
- each student .py file listed in grading.toml: the skeleton of solutions/<name>/<file>;
- each student notebook X.ipynb: rendered from the module solutions.<name>.X (its `CELLS`);
- copies of the shared top-level modules grading.toml declares (`shared_modules`);
- the generic self-check, public-test runner and pytest set-up (autograder/build/templates/);
- README.md: solutions/<name>/README.template.md with the points from grading.toml;
- the lecture's own scripts the texts name (solutions/<name>/lecture/*.py), verbatim: a student
  runs them beside the skeleton (they import the shared modules copied above).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from autograder.build.markers import strip_marker_lines
from autograder.build.notebook import notebook_text, render_notebook
from autograder.build.readme import render_readme
from autograder.build.shared_copies import shared_copy
from autograder.build.skeleton import make_skeleton
from autograder.build.student_files import PUBLIC_CASES, generic_student_files
from autograder.engine.registry import REPO_ROOT, GradingConfig, load_config
from autograder.engine.vocabulary import ItemKind
from autograder.errors import InstructorError

README_TEMPLATE = "README.template.md"
LECTURE_FOLDER = "lecture"


class BuildError(InstructorError):
    """The sources of an assignment do not fit together (an instructor's problem)."""


def generated_files(name: str) -> dict[str, str]:
    """Relative path under assignments/<name>/ -> the text the build writes there."""
    config = load_config(name)
    solution_dir = _solution_dir(name)
    files: dict[str, str] = {}
    for student_file in config.student_files:
        if student_file.endswith(".py"):
            files[student_file] = _skeleton(config, solution_dir / student_file)
        elif student_file.endswith(".ipynb"):
            cells = notebook_cells(name, student_file)
            files[student_file] = notebook_text(render_notebook(cells, config, answered=False))
        else:
            raise BuildError(f"{name}: no generator for student file {student_file!r}")
    for module in config.shared_modules:
        if not (REPO_ROOT / module).is_file():
            raise BuildError(f"grading.toml shares {module}, which is not a file at the repository root")
        files[module] = shared_copy(REPO_ROOT, module)
    if config.student_module is None or config.notebook is None:
        raise BuildError(f"{name}: student_files must name one .py module and one .ipynb notebook")
    if not (config.folder / PUBLIC_CASES).is_file():
        raise BuildError(f"assignments/{name}/{PUBLIC_CASES} not found: it lists the public examples "
                         "the self-check and the public tests run (write CASES = (Case(...), ...))")
    generic = generic_student_files(config)
    clash = sorted(set(files) & set(generic))
    if clash:
        raise BuildError(f"{name}: {clash} would be generated twice (rename the student file)")
    files.update(generic)
    from autograder.engine.variants import has_variants

    if has_variants(name):  # the parameter table and the helper the notebook's first code cell uses
        from autograder.build.variants_table import variant_files

        files.update(variant_files(name))
    files["README.md"] = render_readme(_read(solution_dir / README_TEMPLATE), config)
    for script in sorted((solution_dir / LECTURE_FOLDER).glob("*.py")):
        if script.name in files:
            raise BuildError(f"{name}: the lecture script {script.name} has the name of a generated file")
        files[script.name] = _read(script)
    return files


def build_assignment(name: str, *, check: bool = False) -> list[str]:
    """Write the generated files of assignments/<name>/ and return the ones that changed.

    With check=True nothing is written: the result lists the files that differ from (or are
    missing against) what the build would write, i.e. the drift.
    """
    target = REPO_ROOT / "assignments" / name
    drifted = []
    for rel, text in sorted(generated_files(name).items()):
        path = target / rel
        data = text.encode("utf-8")
        if path.is_file() and path.read_bytes() == data:
            continue
        drifted.append(rel)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return drifted


def build_everything(name: str, *, check: bool = False) -> list[str]:
    """`build_assignment` and the hidden property examples (drawn in a fresh process whenever their
    sources change): the changed (or, with check=True, drifted) files, relative to the repository."""
    from autograder.engine import property_draw  # the engine's draw, only when building
    from autograder.engine.variants import has_variants, new_seed, seed_path

    seeded = []
    if has_variants(name) and not seed_path(name).exists():  # the secret every student's variant is drawn from
        if not check:
            new_seed(name)
        seeded.append(seed_path(name).relative_to(REPO_ROOT).as_posix())
    changed = [f"assignments/{name}/{rel}" for rel in build_assignment(name, check=check)]
    return seeded + changed + property_draw.write(name, check=check)


def write_reference_submission(name: str, dest: Path) -> None:
    """A full-marks submission in `dest`: the solved student files (marker lines removed), answered notebook."""
    config = load_config(name)
    solution_dir = _solution_dir(name)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for student_file in config.student_files:
        if student_file.endswith(".py"):
            source = solution_dir / student_file
            text = strip_marker_lines(_read(source), _display(source))
        elif student_file.endswith(".ipynb"):
            cells = notebook_cells(name, student_file)
            text = notebook_text(render_notebook(cells, config, answered=True))
        else:
            raise BuildError(f"{name}: no reference for student file {student_file!r}")
        (dest / student_file).write_bytes(text.encode("utf-8"))


def _skeleton(config: GradingConfig, source: Path) -> str:
    skeleton = make_skeleton(_read(source), _display(source))
    graded = {item.id for item in config.items_of(ItemKind.FUNCTION)}
    if config.student_module == source.stem and set(skeleton.functions) != graded:
        raise BuildError(f"{_display(source)} has solution regions in {sorted(skeleton.functions)}, "
                         f"but grading.toml grades the functions {sorted(graded)}")
    return skeleton.text


def notebook_cells(name: str, notebook: str) -> tuple:
    module_name = f"solutions.{name}.{Path(notebook).stem}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise BuildError(f"{notebook} is generated from the module {module_name}, which is missing: {err}") from None
    cells = getattr(module, "CELLS", None)
    if not cells:
        raise BuildError(f"{module_name} must define a non-empty CELLS sequence")
    return tuple(cells)


def _solution_dir(name: str) -> Path:
    path = REPO_ROOT / "solutions" / name
    if not path.is_dir():
        raise BuildError(f"{path} not found: every assignment needs its reference under solutions/")
    return path


def _read(path: Path) -> str:
    if not path.is_file():
        raise BuildError(f"{path} not found")
    return path.read_text(encoding="utf-8")


def _display(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else str(path)
