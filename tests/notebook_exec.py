"""Execute a student folder's notebook in a child process, the way the trusted grader does (no
Jupyter kernel), and read back the answer variables as plain data.

The child runs with the folder as its working directory and first sys.path entry, and without
the repository on its path, so the notebook sees exactly what a student's folder holds.
The cell runner is the sandbox's own (autograder/sandbox/nbrunner.py and the cell_outputs.py it
imports, standard library only), loaded from their files.
"""

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NBRUNNER = Path(__file__).resolve().parents[1] / "autograder" / "sandbox" / "nbrunner.py"

_CHILD = r"""
import importlib.util, json, os, sys, time
nbrunner_path, notebook, names = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
load("cell_outputs", os.path.join(os.path.dirname(nbrunner_path), "cell_outputs.py"))
nbrunner = load("nbrunner", nbrunner_path)
sys.path.insert(0, os.getcwd())
namespace = {}
start = time.perf_counter()
run = nbrunner.run_notebook(notebook, namespace, cell_timeout=60, deadline=time.monotonic() + 120)
seconds = time.perf_counter() - start
answers = {n: namespace[n] for n in names if isinstance(namespace.get(n), (int, float, str))}
print("\n" + json.dumps({"seconds": seconds, "errors": run.cell_errors, "answers": answers}))
"""


@dataclass(frozen=True)
class NotebookResult:
    seconds: float  # cells only: no interpreter or kernel start-up
    errors: list  # (cell index, exception name, message) of every cell that raised
    answers: dict  # answer variable -> value, for the names asked for that hold a number or string


def answered_copy(dest: Path, assignment: str = "lec01_codesign") -> Path:
    """The released folder copied to `dest` with the reference submission dropped in, as a student
    who answered everything would have it."""
    from autograder.build import write_reference_submission
    from autograder.engine.registry import load_config

    shutil.copytree(load_config(assignment).folder, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    write_reference_submission(assignment, dest)
    return dest


def variant_env(folder: Path, student_id: str | None = None) -> dict[str, str]:
    """What the grader gives a notebook of an assignment with per-student variants: the student's id
    and parameters (None: the lecture's own, as `check` runs the reference); {} without variants."""
    if not (Path(folder) / "variant.py").is_file():
        return {}
    import tomllib

    from autograder.engine.grader import STUDENT_ID_ENV, VARIANT_ENV
    from autograder.engine.variants import canonical_json, lecture_params, params_for

    name = tomllib.loads((Path(folder) / "grading.toml").read_text(encoding="utf-8"))["assignment"]
    params = lecture_params(name) if student_id is None else params_for(name, student_id)
    return {STUDENT_ID_ENV: "LECTURE" if student_id is None else student_id, VARIANT_ENV: canonical_json(params)}


def execute_notebook(folder: Path, names, *, notebook: str = "handout.ipynb", trusted: bool = True,
                     student_id: str | None = None) -> NotebookResult:
    """Run `folder/notebook` top to bottom; `trusted` sets CS349E_TRUSTED_GRADING=1 (check() is silent);
    with variants, as `student_id`'s variant (None: the lecture's)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBGRADER_EXECUTION", "CS349E_TRUSTED_GRADING")}
    env["MPLBACKEND"] = "Agg"
    env.update(variant_env(folder, student_id))
    if trusted:
        env["CS349E_TRUSTED_GRADING"] = "1"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(NBRUNNER), notebook, json.dumps(list(names))],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        raise RuntimeError(f"notebook runner failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return NotebookResult(data["seconds"], data["errors"], data["answers"])
