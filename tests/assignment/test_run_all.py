"""The released notebook as a student first runs it: "Run All" in Jupyter, on the skeleton, with
only the student id typed. Does it run to the end (a real kernel, stopping at the first error as
Jupyter does), saying per cell in Chinese which function is not implemented yet, instead of
stopping at the first demo cell or failing later with a KeyError?"""

import os

import nbformat
import pytest

from autograder.engine.registry import load_config
from student_folders import student_env, type_student_id

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
FUNCTIONS = [item.id for item in load_config("lec01_codesign").items_of("function")]


def _run_all(folder, monkeypatch):
    from nbclient import NotebookClient

    for name in list(os.environ):
        if name not in student_env():
            monkeypatch.delenv(name)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(folder / "handout.ipynb", as_version=4)
    NotebookClient(notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


def _texts(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def test_the_skeleton_runs_to_the_end_with_one_line_per_unfinished_cell(student_folder, monkeypatch):
    type_student_id(student_folder)
    notebook = _run_all(student_folder, monkeypatch)   # raises CellExecutionError at the first error
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(o.get("output_type") != "error" for cell in code for o in cell.get("outputs", []))
    told = [_texts(cell) for cell in code if "尚未实现" in _texts(cell)]
    assert told, "no cell said 尚未实现"
    for text in told:
        lines = [line for line in text.splitlines() if "尚未实现" in line]
        assert len(lines) == 1 and any(f"codesign.{f}" in lines[0] for f in FUNCTIONS), text
    assert not any("KeyError" in text and "前面没算完" not in text for text in told)
    # every unfinished function is named somewhere
    assert {f for f in FUNCTIONS if any(f"codesign.{f}" in t for t in told)} >= {"quantize", "trend_row", "exp_ratio"}
