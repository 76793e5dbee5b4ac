"""Is the README a front page a newcomer can read (what it is, the two commands, the grading night,
where to read more), with every docs/ page linked, every linked page there, and nothing lost in the
move (the commands of the pages, in order, are what the README tests run)?"""

import re

from readme_text import README, ROOT, course_pages, course_text, readme_commands

FRONT = README.read_text(encoding="utf-8")


def test_the_front_page_is_short_and_has_its_four_parts():
    assert len(FRONT.splitlines()) <= 80
    for heading in ("## Quick start", "## A grading night in five commands", "## Read more"):
        assert heading in FRONT


def test_the_grading_night_is_five_commands():
    block = re.search(r"## A grading night in five commands.*?```console\n(.*?)```", FRONT, flags=re.S).group(1)
    commands = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    assert len(commands) == 5
    # each is a command the pages give (and the README tests run) in full
    assert all(any(c.startswith(command) for c in readme_commands()) for command in commands), commands


def test_every_docs_page_is_linked_and_every_link_is_a_page():
    linked = [page.relative_to(ROOT).as_posix() for page in course_pages()[1:]]
    assert linked and all((ROOT / page).is_file() for page in linked)
    text = course_text()
    unlinked = [p.name for p in (ROOT / "docs").glob("*.md") if f"docs/{p.name}" not in text and f"({p.name})" not in text]
    assert unlinked == []


def test_the_pages_commands_start_with_the_quick_start_and_keep_the_course_order():
    commands = readme_commands()
    assert commands[0].startswith("python3 -m venv .venv && .venv/bin/pip install '.[instructor]'")
    assert commands.index(". .venv/bin/activate") < commands.index("nbgrader generate_assignment lec01_codesign --force")
