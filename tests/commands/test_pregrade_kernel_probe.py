"""pregrade refuses in one line, before grading anyone, when nbgrader autograde could not start
its notebook kernel (the sandbox would fail for every student after the whole class was graded)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.nbgrader_bridge.kernel_sandbox import kernel_problem
from autograder.sandbox import launcher
from course_copy import ROOT, clean_env, copy_course

ASSIGNMENT = "lec01_codesign"
pytestmark = pytest.mark.skipif(launcher.bubblewrap_problem() is not None,
                                reason=f"bubblewrap does not work here: {launcher.bubblewrap_problem()}")


def test_the_kernel_starts_from_this_checkout():
    # The suite runs from the README's .venv inside the repository: the course autograde hides.
    assert kernel_problem(ROOT) is None


def test_pregrade_refuses_in_one_line_when_the_kernel_cannot_start(tmp_path):
    course = copy_course(tmp_path / "course")
    shutil.copytree(ROOT / "examples" / ASSIGNMENT / "submissions" / "alice", course / "submitted" / "alice" / ASSIGNMENT)
    # A kernel whose interpreter lies in the course, outside the Python install: hidden in the sandbox.
    (course / "tools").mkdir()
    (course / "tools" / "python").symlink_to(Path(sys.executable).resolve())
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(course / "tools" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    env = {**clean_env(), "JUPYTER_PATH": str(tmp_path / "jupyter")}
    env.pop("CS349E_ISOLATION", None)
    done = subprocess.run([sys.executable, "-m", "autograder", "pregrade", ASSIGNMENT], cwd=course, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("pregrade: nbgrader autograde cannot start a kernel: ")
    assert str(course / "tools" / "python") in line and "No such file or directory" in line
    assert not (course / ".pinned_results").exists()   # refused before anyone was graded
