"""Every command of the README is run by some test. test_readme_paths.py runs each one verbatim
in README order, except those it lists in ELSEWHERE with the test that runs them; this guard
checks that list (and the other per-command tables) against the README as it is now, so that an
entry cannot outlive its command or name a test that does not exist."""

from __future__ import annotations

import re

import test_readme_paths as paths
from readme_text import ROOT, readme_commands, student_readme_commands

COMMANDS = readme_commands()
STUDENT_COMMANDS = student_readme_commands()


def test_the_readme_commands_are_found():
    # The instructor steps 1-9 of "Running the course with nbgrader", the Quick start and the demo.
    for start in ("python3 -m venv .venv && .venv/bin/pip install '.[instructor]'", ". .venv/bin/activate",
                  ".venv/bin/python -m solutions.lec01_codesign", "nbgrader generate_assignment",
                  "nbgrader db assignment add", "nbgrader collect", "python -m autograder pregrade",
                  "nbgrader autograde", "python -m autograder reconcile", "nbgrader generate_feedback",
                  "nbgrader export --to", "python -m autograder release-solutions", "python -m autograder similarity",
                  "python benchmarks/simulate_course.py"):
        assert any(c.startswith(start) for c in COMMANDS), start
    assert {"pytest", "python selfcheck.py", "python selfcheck.py --zip"} <= set(STUDENT_COMMANDS)
    assert COMMANDS.index(". .venv/bin/activate") < COMMANDS.index("nbgrader generate_assignment lec01_codesign --force")


def test_every_command_not_run_by_the_readme_test_names_a_test_that_runs_it():
    for command, where in paths.ELSEWHERE.items():
        assert command in COMMANDS, f"ELSEWHERE lists `{command}`, which the README no longer gives"
        path, _, name = where.partition("::")
        assert (ROOT / path).is_file(), f"`{command}`: {path} does not exist"
        text = (ROOT / path).read_text(encoding="utf-8")
        if name:
            assert re.search(rf"^def {re.escape(name)}\(", text, flags=re.M), f"`{command}`: no {where}"
        if path == ".ci/run":   # the same commands, give or take quoting and pip's -q
            plain = re.sub(r"""['"]|-q """, "", text)
            for part in command.split(" && "):
                assert re.sub(r"""['"]""", "", part) in plain, f".ci/run does not run `{part}`"
        elif not name:
            verb = command.split()[3]   # `.venv/bin/python -m autograder <verb> …`
            assert f'"{verb}"' in text, f"{path} does not run `{command}`"


def test_the_per_command_tables_name_readme_commands():
    for table in (paths.EXPECTED_STATUS, paths.BEFORE, paths.AFTER):
        for command in table:
            assert command in COMMANDS and command not in paths.ELSEWHERE, command
    for command in paths.STUDENT_EXPECTED_STATUS:
        assert command in STUDENT_COMMANDS, command

