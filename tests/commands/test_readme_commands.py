"""Does every command the README gives after its Quick start work as written in the virtualenv
the Quick start creates? Each executable must resolve there once it is activated (the README says
to activate it before the first bare `nbgrader`), each `python -m autograder` line must parse
with the real CLI, each `nbgrader` line must name a real nbgrader sub-command."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from autograder.cli import build_parser
from readme_text import course_text

ROOT = Path(__file__).resolve().parents[2]
README = course_text()   # the front page and the docs/ pages it links
AFTER_QUICK_START = README[README.index("## Layout"):]
ACTIVATE = ". .venv/bin/activate"
STARTS = ("nbgrader ", "python -m autograder ", "python benchmarks/", ".venv/bin/")


def readme_commands() -> list[str]:
    """Inline code spans and lines of ```bash blocks that start like a command."""
    found = []
    for block in re.findall(r"```bash\n(.*?)```", AFTER_QUICK_START, flags=re.S):
        found += [line.split("  #")[0].strip() for line in block.splitlines()]
    text = re.sub(r"```.*?```", "", AFTER_QUICK_START, flags=re.S)
    found += re.findall(r"`([^`\n]+)`", text)
    return sorted({c for c in found if c.startswith(STARTS) and "…" not in c and "<" not in c})


COMMANDS = readme_commands()


def test_the_readme_gives_instructor_commands():
    assert any(c.startswith("nbgrader generate_assignment") for c in COMMANDS)
    assert any(c.startswith("python -m autograder similarity") for c in COMMANDS)


def test_the_virtualenv_is_activated_before_the_first_bare_command():
    def position(command: str) -> int:   # inline (`cmd`) or a line of a ```bash block
        return min(i for i in (AFTER_QUICK_START.find(f"`{command}"), AFTER_QUICK_START.find(f"\n{command}")) if i >= 0)

    first_bare = min(position(c) for c in COMMANDS if not c.startswith(".venv/"))
    assert ACTIVATE in AFTER_QUICK_START[:first_bare]


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_resolves_in_the_virtualenv_and_parses(command):
    tokens = shlex.split(command)
    venv_bin = Path(sys.prefix) / "bin"        # the Quick start's .venv when the suite runs from it
    executable = tokens[0].removeprefix(".venv/bin/")
    if executable == "python" and len(tokens) > 1 and tokens[1].endswith(".py"):
        assert (ROOT / tokens[1]).is_file(), command
        return
    assert (venv_bin / executable).exists(), f"{executable} is not in {venv_bin}: {command}"
    full = any("lec01_codesign" in t for t in tokens)   # a whole command, not a mention of a verb
    if tokens[1:3] == ["-m", "autograder"]:
        parser = build_parser()
        verbs = next(a for a in parser._actions if a.dest == "verb").choices
        assert tokens[3] in verbs, command
        if full:
            try:
                parser.parse_args(tokens[3:])
            except SystemExit as exit_:
                pytest.fail(f"`{command}` does not parse (exit {exit_.code})")
    elif executable == "nbgrader" and len(tokens) > 1:
        from nbgrader.apps.nbgraderapp import NbGraderApp
        assert tokens[1] in NbGraderApp.subcommands, command
