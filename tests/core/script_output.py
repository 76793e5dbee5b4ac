"""Running a script the way a user does, and finding things in its plain-text output."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_python(args, cwd, timeout=60):
    """Run `python args...` with the repository root on PYTHONPATH; output is a pipe, as in CI."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=timeout)


def section(output: str, number: int) -> str:
    """The text of 演示 <number>, up to the next demo header."""
    start = output.index(f"演示 {number}：")
    end = output.find("\n演示 ", start)
    return output[start:] if end < 0 else output[start:end]


def observations(text: str) -> list[str]:
    """The numbered observation lines after the last '观察：' heading (plain, unwrapped output)."""
    tail = text[text.rindex("观察："):].splitlines()[1:]
    return [line.strip() for line in tail if line.strip()[:1].isdigit()]


def table_row(text: str, first_cell: str) -> str:
    """The table line that starts with `first_cell`, with runs of spaces collapsed."""
    for line in text.splitlines():
        if line.split(maxsplit=1)[:1] == [first_cell]:
            return " ".join(line.split())
    raise AssertionError(f"no table row starts with {first_cell!r} in:\n{text}")


def table_rows(text: str, *first_cells: str) -> list[str]:
    """Every table line whose leading cells are `first_cells`, with runs of spaces collapsed."""
    n = len(first_cells)
    return [" ".join(line.split()) for line in text.splitlines() if line.split()[:n] == list(first_cells)]


def cells(*values) -> str:
    """Expected cells, joined the way `table_row` normalises a printed line."""
    return " ".join(" ".join(str(v).split()) for v in values)
