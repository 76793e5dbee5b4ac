"""A student's folder for the repository's tests: the released assignment copied to a temporary
directory, and commands run in it with a student's environment (no repository on the path)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from student_id_cell import type_student_id as typed_into_notebook

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = ROOT / "assignments" / "lec01_codesign"
CORPUS = ROOT / "tests" / "corpus" / "lec01_codesign"
REFERENCE = ROOT / "solutions" / "lec01_codesign" / "codesign.py"


def copy_release(dest: Path) -> Path:
    folder = dest / "lec01_codesign"
    shutil.copytree(ASSIGNMENT, folder, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return folder


def student_env() -> dict:
    """The environment of a student's shell: no repository on the path, no grading mode."""
    drop = ("PYTHONPATH", "NBGRADER_EXECUTION", "CS349E_TRUSTED_GRADING")
    return {k: v for k, v in os.environ.items() if k not in drop}


def run_in_folder(folder: Path, *args: str, plugins: bool = True) -> subprocess.CompletedProcess:
    """Run Python in the folder. plugins=False skips pytest's third-party plugins (hypothesis, timeout):
    the public tests use none, and loading them costs most of a short run."""
    env = student_env()
    if not plugins:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run([sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def type_student_id(folder: Path, sid: str = "alice", token: str | None = None) -> None:
    """Fill in the notebook's STUDENT_ID and VARIANT_TOKEN as a student does (alice is on the
    course roster: her own token opens her entry). token=None: the token the instructor gave her."""
    typed_into_notebook(Path(folder) / "handout.ipynb", sid, token)
