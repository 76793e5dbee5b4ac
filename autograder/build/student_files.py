"""The generic student files every assignment gets: self-check, public-test runner, pytest set-up.

They are rendered from templates/ with what grading.toml declares (the student module, the
notebook, the files handed in); the assignment itself supplies only `public_cases.py`, its public
examples. Placeholders are written `{{NAME}}`; a template that keeps one unfilled fails the build.
"""

from __future__ import annotations

import re
from pathlib import Path

from autograder.build.notebook import STUDENT_ID_CELL_ID
from autograder.engine.registry import GradingConfig
from autograder.engine.variants import has_variants
from autograder.engine.vocabulary import TEXT_STUB, ItemKind
from autograder.errors import InstructorError

TEMPLATES = Path(__file__).resolve().parent / "templates"
PUBLIC_CASES = "public_cases.py"  # written by the assignment's author, next to grading.toml
_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")


class TemplateError(InstructorError):
    """A template names a placeholder the build does not know."""


def test_file_name(config: GradingConfig) -> str:
    return f"test_{config.student_module}.py"


def zip_name(config: GradingConfig) -> str:
    """The hand-in archive: one file to upload to the LMS or Gradescope."""
    return f"{config.assignment}_submission.zip"


def generic_student_files(config: GradingConfig) -> dict[str, str]:
    """Relative path under assignments/<name>/ -> text, for every generic student file."""
    module_file = f"{config.student_module}.py"
    values = {
        "STUDENT_MODULE": config.student_module,
        "MODULE_FILE": module_file,
        "NOTEBOOK": config.notebook,
        "TEST_FILE": test_file_name(config),
        "TEXT_STUB": TEXT_STUB,
        "STUDENT_FILES": repr(tuple(config.student_files)),
        "STUDENT_FILES_TEXT": "、".join(config.student_files),
        "ZIP_NAME": zip_name(config),
        "FUNCTION_KIND": ItemKind.FUNCTION.value,
        "NUMBER_KIND": ItemKind.NUMBER.value,
        "TEXT_KIND": ItemKind.TEXT.value,
        "VARIANTS": repr(has_variants(config.assignment)),
        "STUDENT_ID_CELL": STUDENT_ID_CELL_ID,
    }
    return {
        "public_checks.py": render_template("public_checks.py.tmpl", values),
        "selfcheck.py": render_template("selfcheck.py.tmpl", values),
        "conftest.py": render_template("conftest.py.tmpl", values),
        test_file_name(config): render_template("test_module.py.tmpl", values),
    }


def render_template(name: str, values: dict[str, str]) -> str:
    text = (TEMPLATES / name).read_text(encoding="utf-8")

    def fill(match: re.Match) -> str:
        key = match.group(1)
        if key not in values:
            raise TemplateError(f"autograder/build/templates/{name}: unknown placeholder {{{{{key}}}}}")
        return values[key]

    return _PLACEHOLDER.sub(fill, text)
