"""The commands a README gives, in the order it gives them.

The course README is a short front page; its long material is in docs/*.md, linked from its
"Read more" list. Read as one text: the front page, then each linked page in the list's order
(`course_text`), so the commands keep the order in which a newcomer meets them.

A command is a line of a ```bash block (its trailing `# comment` dropped), or an inline code span
that starts like a command and is complete: it names an assignment, runs a script (`python x.py`,
`python benchmarks/…`, `pytest`), has a long option (`nbgrader export --to grades.csv`) or
installs (`pip install …`). A span that only names a verb
(`nbgrader autograde`, `python -m autograder grade`) is a mention, and one with `<name>` or `…` a
template; neither is a command.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
STUDENT_README = ROOT / "assignments" / "lec01_codesign" / "README.md"

_PREFIXES = ("python", ".venv/bin/", "nbgrader ", "pip ", ". ", "source ", "jupyter ", "pytest", "CS349E_")
_ASSIGNMENT = re.compile(r"\blec\d\d_\w+")
_SCRIPT = re.compile(r"^(\S+/)?python3? (\S+/)*\w+\.py\b")
_TOKEN = re.compile(r"```(\w*)\n(.*?)```|`([^`\n]+)`", flags=re.S)


def _is_command(span: str) -> bool:
    if not span.startswith(_PREFIXES) or "…" in span or "<" in span:
        return False
    return bool(_ASSIGNMENT.search(span) or _SCRIPT.match(span) or " --" in span
                or span.startswith(("pip install", "pytest")))


def commands(text: str) -> list[str]:
    """Every command of `text`, in order of appearance (a repeated one once, where it first appears)."""
    found: list[str] = []
    for match in _TOKEN.finditer(text):
        language, block, span = match.groups()
        if block is not None:
            if language != "bash":
                continue
            lines = [line.split("  #")[0].strip() for line in block.splitlines()]
            found += [line for line in lines if line and not line.startswith("#")]
        elif _is_command(span):
            found.append(span)
    return list(dict.fromkeys(found))


def course_pages() -> list[Path]:
    """README.md, then the docs/ pages its "Read more" list links, in that order."""
    text = README.read_text(encoding="utf-8")
    more = text.split("\n## Read more", 1)[1] if "\n## Read more" in text else ""
    linked = list(dict.fromkeys(re.findall(r"\]\((docs/[\w./-]+\.md)\)", more)))
    return [README, *(ROOT / page for page in linked)]


def course_text() -> str:
    return "\n\n".join(page.read_text(encoding="utf-8") for page in course_pages())


def readme_commands() -> list[str]:
    return commands(course_text())


def student_readme_commands() -> list[str]:
    return commands(STUDENT_README.read_text(encoding="utf-8"))
