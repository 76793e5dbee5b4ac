"""The executed notebook's outputs land on the cells that produced them, whatever the student did
to the notebook's cells and whatever nbgrader's sanitising did to it afterwards."""

from __future__ import annotations

import copy
import json
import time

import nbformat
import pytest
from nbformat.corpus.words import generate_corpus_id as random_cell_id

from autograder.engine.executed_notebook import executed_notebook
from autograder.nbgrader_bridge.executed_outputs import RESTORED_NOTE, align, place_outputs
from autograder.nbgrader_bridge.feedback_tracebacks import OMITTED
from autograder.sandbox.nbrunner import run_notebook
from autograder.sandbox.outcomes import NotebookOutcome


def _grade_cell(grade_id: str, source: str, **flags):
    cell = nbformat.v4.new_code_cell(source, id=grade_id)
    cell.metadata["nbgrader"] = {"grade": flags.get("grade", False), "solution": flags.get("solution", False),
                                 "locked": flags.get("locked", True), "grade_id": grade_id, "schema_version": 3,
                                 **({"points": 1.0} if flags.get("grade") else {})}
    return cell


def _release():
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 练习", id="intro"),
        _grade_cell("setup", "print('准备好了')"),
        nbformat.v4.new_code_cell("print('画图')", id="plot"),
        _grade_cell("q1_answer", "q1 = None", solution=True, locked=False),
        _grade_cell("q1", "print('检查 q1')", grade=True),
        nbformat.v4.new_code_cell("print('表格')", id="table"),
    ])


def _executed(path, tmp_path) -> dict:
    """The notebook at `path` run by the grader's own runner (as in its sandbox)."""
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        run = run_notebook(str(path), {}, cell_timeout=10, deadline=time.monotonic() + 30)
    finally:
        os.chdir(here)
    return executed_notebook(path.name, NotebookOutcome("ok", {}, (), "", cells=tuple(run.cells)))


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def _by_id(nb, cell_id):
    return next(c for c in nb.cells if c.get("id") == cell_id)


@pytest.fixture
def submitted(tmp_path):
    """A student who moved, deleted, added and edited cells, then saved the notebook."""
    nb = _release()
    cells = {c.id: c for c in nb.cells}
    added = nbformat.v4.new_code_cell("print('我加的格子')", id="mine")
    cells["table"].source = "print('表格，改过了')"
    cells["setup"].source = "print('改了锁定的格子')"   # nbgrader restores it
    # order: table moved before plot, q1 (a grade cell) deleted, a cell of the student's own added
    nb.cells = [cells["intro"], cells["setup"], cells["table"], added, cells["plot"], cells["q1_answer"]]
    path = tmp_path / "handout.ipynb"
    nbformat.write(nb, path)
    return path


def _autograded(path):
    """What nbgrader's sanitising leaves to the autograde pipeline: locked cells restored to the
    release's source and the deleted grade cell added back after its answer."""
    nb = nbformat.read(path, as_version=4)
    release = {c.id: c for c in _release().cells}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("locked"):
            cell.source = release[cell.id].source
    nb.cells.insert(len(nb.cells), copy.deepcopy(release["q1"]))
    return nb


def test_outputs_follow_moved_added_and_edited_cells(submitted, tmp_path):
    executed = _executed(submitted, tmp_path)
    raw = json.loads(submitted.read_text())["cells"]
    nb = _autograded(submitted)
    assert place_outputs(nb, raw, executed) == 5
    assert _stdout(_by_id(nb, "table")) == "表格，改过了\n"
    assert _stdout(_by_id(nb, "mine")) == "我加的格子\n"
    assert _stdout(_by_id(nb, "plot")) == "画图\n"
    # restored to the release's source, shown with what the student's version printed, and said so
    assert _by_id(nb, "setup").source == "print('准备好了')"
    assert _stdout(_by_id(nb, "setup")) == RESTORED_NOTE + "改了锁定的格子\n"
    assert _by_id(nb, "q1").outputs == []   # added back by nbgrader: it never ran
    assert [c.execution_count for c in nb.cells if c.cell_type == "code"] == [1, 2, 3, 4, 5, None]


def test_a_notebook_without_cell_ids_is_aligned_by_grade_id_and_source(tmp_path):
    """nbformat 4.4 has no cell ids; nbgrader's copy may get new random ones (an upgrade to 4.5)."""
    nb = _release()
    nb.cells.insert(2, nbformat.v4.new_code_cell("print('一')"))
    nb.cells.insert(3, nbformat.v4.new_code_cell("print('二')"))
    data = json.loads(nbformat.writes(nb))
    data["nbformat_minor"] = 4
    for cell in data["cells"]:
        del cell["id"]
    path = tmp_path / "handout.ipynb"
    path.write_text(json.dumps(data))
    executed = _executed(path, tmp_path)
    autograded = nbformat.read(path, as_version=4)
    for cell in autograded.cells:
        cell.id = random_cell_id()   # ids nothing else knows
    place_outputs(autograded, data["cells"], executed)
    assert [_stdout(c) for c in autograded.cells if c.cell_type == "code"] == \
        ["准备好了\n", "一\n", "二\n", "画图\n", "", "检查 q1\n", "表格\n"]


def test_outputs_of_a_cell_whose_source_is_not_what_ran_show_nowhere(submitted, tmp_path):
    executed = _executed(submitted, tmp_path)
    raw = json.loads(submitted.read_text())["cells"]
    raw[2]["source"] = "print('换掉了')"   # the file is not the one the grader ran
    nb = _autograded(submitted)
    place_outputs(nb, raw, executed)
    assert _by_id(nb, "table").outputs == [] and _stdout(_by_id(nb, "mine")) == "我加的格子\n"


def test_align_maps_only_cells_that_are_the_same_on_both_sides():
    left = [{"cell_type": "code", "source": s, "metadata": {}} for s in ("a", "b", "c")]
    right = [{"cell_type": "code", "source": s, "metadata": {}} for s in ("x", "a", "c", "b")]
    where = align(left, right)
    assert all(left[i]["source"] == right[j]["source"] for i, j in where.items())
    assert where[0] == 1 and len(where) == 2


def test_errors_name_the_students_files_and_the_feedback_wording_for_the_rest(tmp_path):
    (tmp_path / "codesign.py").write_text("import numpy as np\n\ndef f():\n    return np.linalg.inv(np.zeros((2, 2)))\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import codesign\ncodesign.f()", id="c1")])
    path = tmp_path / "handout.ipynb"
    nbformat.write(nb, path)
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        executed = _executed(path, tmp_path)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("codesign", None)
    autograded = nbformat.read(path, as_version=4)
    place_outputs(autograded, json.loads(path.read_text())["cells"], executed)
    (error,) = autograded.cells[0].outputs
    assert error.ename == "LinAlgError"
    text = "".join(error.traceback)
    assert "Cell In[1], line 2" in text and "File codesign.py:4, in f" in text and OMITTED in text
    assert str(tmp_path) not in text and "site-packages" not in text


@pytest.mark.timeout(120)   # the stall guard: 40,000 alike cells took minutes of CPU before (quadratic)
def test_a_notebook_of_many_alike_cells_is_aligned_cell_by_cell_without_a_stall():
    """A student's notebook without cell ids and with tens of thousands of identical cells (a
    1.4 MB file holds 20,000) gave every cell the same key, and difflib's matcher took time in the
    square of their count: autograde spent 48 s of CPU on 20,000, about two hours on what the 20 MB
    cap admits, again on every run. Alike cells pair in order, the k-th with the k-th."""
    alike = [{"cell_type": "markdown", "metadata": {}, "source": "x"} for _ in range(40_000)]
    code = {"cell_type": "code", "metadata": {}, "source": "print(1)", "outputs": [], "execution_count": None}
    submitted = [*alike[:20_000], code, *alike[20_000:]]
    autograded = [nbformat.from_dict(c) for c in [*alike[:19_999], code, *alike[20_000:]]]   # one alike cell fewer
    where = align(submitted, autograded)
    assert where[20_000] == 19_999                      # the code cell found its place
    assert all(where[k] == k for k in range(19_999))
    assert all(where[k] == k - 1 for k in range(20_001, 40_001))


@pytest.mark.timeout(120)   # the stall guard, as above
def test_many_cells_alternating_with_alike_ones_are_aligned_without_a_stall():
    """Unique cells between identical ones: each unique cell is an anchor, the alike ones between
    two anchors pair in order; a cell autograde does not have pairs with nothing."""
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "x" if i % 2 else f"cell {i}"} for i in range(40_000)]
    autograded = [nbformat.from_dict(c) for c in cells[:101] + cells[102:]]     # the "x" at 101 is gone
    where = align(cells, autograded)
    assert all(where[i] == i for i in range(101)) and all(where[i] == i - 1 for i in range(102, 40_000))
    assert 101 not in where


@pytest.mark.parametrize("count", [-1, 2**31, pytest.param(int("9" * 4300), id="4300-digits")])
def test_an_execution_count_no_run_gives_is_not_kept(count):
    """The cells' records come from the student's process. A negative execution count made the
    autograded notebook one nbformat's schema refuses (minimum 0); one of 4300 digits became the
    feedback's prompt. Such a record is dropped: its outputs show nowhere."""
    raw = {"index": 1, "id": "setup", "source_sha256": "0" * 64, "execution_count": count,
           "outputs": [{"output_type": "stream", "name": "stdout", "text": "x"}]}
    honest = {**raw, "index": 2, "execution_count": 2}
    executed = executed_notebook("handout.ipynb", NotebookOutcome("ok", {}, (), "", cells=(raw, honest)))
    assert [cell["execution_count"] for cell in executed["cells"]] == [2]


def test_figures_past_the_notebooks_cap_are_kept_as_text_only():
    """A sandbox whose cell lifted its figure counter sends more figures than the cap: the grader
    keeps the first ones drawn and the rest by their text."""
    import base64

    from autograder.sandbox.cell_outputs import MAX_FIGURES

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + (10).to_bytes(4, "big") * 2 + bytes(5)).decode()
    figure = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "<Figure>", "image/png": png}}
    raw = {"index": 0, "id": "", "source_sha256": "0" * 64, "execution_count": 1, "outputs": [figure] * 60}
    executed = executed_notebook("handout.ipynb", NotebookOutcome("ok", {}, (), "", cells=(raw,)))
    outputs = executed["cells"][0]["outputs"]
    assert sum("image/png" in o["data"] for o in outputs) == MAX_FIGURES
    assert all(o["data"]["text/plain"] == "<Figure>" for o in outputs)
