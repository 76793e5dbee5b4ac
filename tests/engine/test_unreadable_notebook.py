"""A notebook the grader can read but the sandbox reports unreadable is a grader fault, not a 0."""

import json

import pytest

from autograder.engine import grader
from autograder.sandbox import NotebookOutcome


def test_the_grader_reads_notebooks_by_the_sandbox_rule(tmp_path):
    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    good.write_text(json.dumps({"cells": [], "nbformat": 4, "metadata": {}}))
    bad.write_text(json.dumps({"metadata": {}}))
    assert grader._code_cells(good) == {} and grader._code_cells(bad) is None


def test_a_sandbox_that_misreads_a_good_notebook_raises_instead_of_scoring(monkeypatch, tmp_path):
    """No code of the student's ran in the sandbox (no codesign.py handed in): its word is the
    sandbox's own, and a misread is the grader's fault."""
    from autograder.engine.invoke import StudentCode

    def misread(self, name, variables):
        return NotebookOutcome(status="unreadable", variables={}, cell_errors=(), output="",
                               message="handout.ipynb is JSON but not a notebook")

    monkeypatch.setattr(StudentCode, "read_notebook", lambda self, name: misread(self, name, []))
    monkeypatch.setattr(StudentCode, "run_notebook", misread)
    from autograder.build import write_reference_submission
    write_reference_submission("lec01_codesign", tmp_path / "alice")
    (tmp_path / "alice" / "codesign.py").unlink()
    with pytest.raises(RuntimeError, match="grader reads as a notebook"):
        grader.grade_submission("lec01_codesign", tmp_path / "alice")


# Imported by the worker before the notebook runs: the worker's own notebook reader (it reads the
# notebook before any cell runs) and the runner of the child it forks for the notebook (the warm
# child, forked before any student code, is thrown away) now say "unreadable" for any notebook.
FORGED_UNREADABLE = """

def _unreadable_from_now_on():
    import gc
    for obj in gc.get_objects():
        try:
            if hasattr(obj, "notebook_child") and hasattr(obj, "warm"):
                if obj.warm is not None:
                    obj.warm.discard()
                obj.warm = None
                nbrunner = obj.nbrunner

                def unreadable(*args, _nb=nbrunner, **kwargs):
                    raise _nb.NotebookUnreadable("handout.ipynb is not valid JSON")
                nbrunner.run_notebook = nbrunner.read_code_cells = unreadable
        except Exception:
            pass


_unreadable_from_now_on()
"""


def test_a_module_that_makes_the_sandbox_call_its_notebook_unreadable_is_graded_not_a_grader_error(tmp_path):
    """A student's codesign.py patches the worker's notebook reader at import: the sandbox then said
    'unreadable' of a notebook the grader reads, which was a grader error on every run (`grade`
    exit 1, 'the grader failed on 1 student(s): mallory; re-run to retry them'; pregrade never
    pinned them): a student with weak answers was never graded. It is the student's doing: the
    answers are graded as unreadable, the functions as they are, and the instructor is told."""
    from autograder.build import write_reference_submission

    write_reference_submission("lec01_codesign", tmp_path / "mallory")
    module = tmp_path / "mallory" / "codesign.py"
    module.write_text(module.read_text() + FORGED_UNREADABLE)
    result = grader.grade_submission("lec01_codesign", tmp_path / "mallory")
    functions = [item for item in result.items if item.kind == "function"]
    report = [item for item in result.items if item.kind != "function" and item.status != "manual"]
    assert functions and all(item.score == item.max_score for item in functions)
    assert report and not any(item.score for item in report)
    assert [flag for flag in result.flags if "reported it unreadable after the student's code ran" in flag]


def test_a_notebook_nested_past_the_json_parsers_recursion_is_graded_as_unreadable(tmp_path):
    """A handout.ipynb of 200,000 nested JSON arrays: before, the trusted grader itself stopped
    with RecursionError (while saying why nothing was graded); now it is an unreadable notebook,
    its items 0, the module still graded, and the flag says why."""
    from autograder.build import write_reference_submission

    write_reference_submission("lec01_codesign", tmp_path / "mallory")
    depth = 200_000
    (tmp_path / "mallory" / "handout.ipynb").write_text('{"cells": ' + "[" * depth + "]" * depth + "}")
    result = grader.grade_submission("lec01_codesign", tmp_path / "mallory")
    functions = [item for item in result.items if item.kind == "function"]
    assert functions and all(item.score == item.max_score for item in functions)
    assert [flag for flag in result.flags if "handout.ipynb cannot be read as a notebook" in flag]


def _at_depth(frames: int, action):
    return action() if frames == 0 else _at_depth(frames - 1, action)


def _verdict(path):
    try:
        return len(grader.load_code_cells(str(path)))
    except grader.NotebookUnreadable as err:
        return str(err).rsplit(" ", 4)[-4:]


def test_whether_a_notebook_reads_does_not_depend_on_how_deep_the_reader_stands(tmp_path):
    """json.loads recurses, so how deeply nested a notebook it reads depends on the caller's stack:
    a handout.ipynb nested 981-982 levels ran in the sandbox (its reader ~15 frames deep) while the
    batch grader (~20 frames deep) called it unreadable and flagged 'none of its answers was graded'
    for answers it had graded; nbgrader's autograde, deeper still, could not read one the sandbox
    had graded. One bound, judged without recursion, gives every reader the same verdict."""
    from autograder.sandbox import nbrunner

    legit = getattr(nbrunner, "MAX_JSON_NESTING", 100) - 3   # a widget state is ~10 levels

    def parses(nesting):
        try:
            json.loads("[" * nesting + "]" * nesting)
            return True
        except RecursionError:
            return False

    depth = 1   # the deepest nesting json.loads reads from here; 30 frames down it reads less
    while parses(depth * 2):
        depth *= 2
    step = depth // 2
    while step:
        depth += step if parses(depth + step) else 0
        step //= 2
    depth -= 8   # the reader's own frames
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "x = 1"}
    for nesting, readable in ((depth, False), (legit, True)):
        text = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        path = tmp_path / f"nested{nesting}.ipynb"
        path.write_text('{"deep": ' + "[" * nesting + "]" * nesting + ", " + text[1:])
        verdicts = [_at_depth(frames, lambda: _verdict(path)) for frames in (0, 30, 200)]
        assert verdicts == [1] * 3 if readable else verdicts[0] == verdicts[1] == verdicts[2] != 1, (nesting, verdicts)


# A notebook cell: every later cell's setup in the sandbox's notebook runner now raises the
# runner's own "unreadable" error, after this cell (student code) ran.
CELL_FORGES_UNREADABLE = """
import sys
_frame = sys._getframe()
while _frame is not None and "NotebookUnreadable" not in _frame.f_globals:
    _frame = _frame.f_back
_runner = _frame.f_globals

def _unreadable(*args, **kwargs):
    raise _runner["NotebookUnreadable"]("handout.ipynb is not valid JSON")

_runner["CellOutputs"] = _unreadable
"""


def test_a_notebook_cell_that_says_its_notebook_is_unreadable_is_graded_not_a_grader_error(tmp_path):
    """No codesign.py, and a first cell that makes the sandbox's runner raise its own 'unreadable'
    error at the next cell: no module of the student's was imported, so the grader believed the
    sandbox had misread a notebook it reads itself and raised on every run ('the sandbox could
    not read handout.ipynb ...': `grade` exit 1, never graded). The sandbox's worker reads the
    notebook itself before any cell runs; a child that says 'unreadable' after that ended its own
    run: graded as a crashed notebook, which the feedback says."""
    import nbformat

    from autograder.build import write_reference_submission

    write_reference_submission("lec01_codesign", tmp_path / "mallory")
    (tmp_path / "mallory" / "codesign.py").unlink()
    path = tmp_path / "mallory" / "handout.ipynb"
    notebook = nbformat.read(str(path), as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(CELL_FORGES_UNREADABLE))
    nbformat.write(notebook, str(path))
    result = grader.grade_submission("lec01_codesign", tmp_path / "mallory")
    report = [item for item in result.items if item.kind != "function" and item.status != "manual"]
    assert report and not any(item.score for item in report)
    assert all("its cells made the notebook's process report it unreadable" in item.feedback_md for item in report)


def test_a_notebook_of_a_million_empty_objects_is_unreadable_and_read_in_bounded_memory(tmp_path):
    """1.2 million `{}` in a notebook's metadata (3.6 MB; 18 MB stay under the 20 MB): the grader's
    own process built every one (0.6 GB and 2 s for 18 MB, per student, beside the sandbox's bounds).
    Now refused before json.loads by the same bound autograde reads by (nbgrader_bridge/bounded_read.py)."""
    from memory_peak import traced_peak

    bomb = tmp_path / "handout.ipynb"
    bomb.write_text('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": ['
                    + ",".join(["{}"] * 1_200_000) + "]}}")
    with traced_peak() as peak:
        assert grader._code_cells(bomb) is None
    assert peak.bytes < 64 * 1024**2, peak.bytes
    with pytest.raises(grader.NotebookUnreadable, match=r"1,200,00\d JSON objects and arrays"):
        grader.load_code_cells(str(bomb))


# A notebook's first cell: the reply frame, written straight onto the worker's channel to the
# grader (an inherited descriptor of the notebook's forked process), saying "unreadable".
FORGED_ON_THE_CHANNEL = """
import gc, os, sys
server = next(o for o in gc.get_objects() if type(o).__name__ == "Server" and hasattr(o, "channel"))
frame = sys._getframe()
while frame is not None and "header" not in frame.f_locals:
    frame = frame.f_back
request = frame.f_locals["header"]["id"]
server.end_marker(request)
server.channel.sendall(server.frame({"id": request, "status": "unreadable", "variables": {},
                                     "cell_errors": [], "message": "handout.ipynb is not valid JSON"}))
os._exit(0)
"""


def test_a_notebook_that_tells_the_grader_itself_is_unreadable_is_graded_not_a_grader_error(tmp_path):
    """No codesign.py handed in, so none of the student's code ran in the worker; the notebook's
    first cell wrote its own 'unreadable' reply onto the worker's channel: the grader took it for
    the sandbox's own misreading, a grader error on every run ('re-run to retry'), never graded.
    The notebook's process has no way to the grader but through the worker, which vets its reply."""
    import nbformat

    from autograder.build import write_reference_submission

    write_reference_submission("lec01_codesign", tmp_path / "mallory")
    (tmp_path / "mallory" / "codesign.py").unlink()
    path = tmp_path / "mallory" / "handout.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(FORGED_ON_THE_CHANNEL))
    nbformat.write(notebook, path)
    result = grader.grade_submission("lec01_codesign", tmp_path / "mallory")
    report = [item for item in result.items if item.kind != "function" and item.status != "manual"]
    assert report and all(item.status in ("passed", "failed") for item in report)   # judged, not "unreadable"
    assert not [flag for flag in result.flags if "unreadable" in flag]


# A notebook's first cell: the notebook's process is a fork of the worker, at the same addresses,
# and may write the worker's memory (/proc/<worker>/mem: same uid). It changes the worker's
# "unreadable" (the word it vets its replies by), then replies "unreadable" itself.
FORGED_THROUGH_THE_WORKERS_MEMORY = """
import gc, os, sys
server = next(o for o in gc.get_objects() if type(o).__name__ == "Server" and hasattr(o, "channel"))
word = next(c for c in type(server)._says_unreadable.__code__.co_consts if c == "unreadable")
with open(f"/proc/{os.getppid()}/mem", "r+b", buffering=0) as memory:
    memory.seek(id(word) + sys.getsizeof(word) - 2)
    memory.write(b"x")
frame = server.codec.Encoder.frame

def unreadable(self, header, *args, **kwargs):
    if isinstance(header, dict) and "cells" in header:
        header = dict(header, status="unreadable", message="handout.ipynb is not valid JSON")
    return frame(self, header, *args, **kwargs)

server.codec.Encoder.frame = unreadable
"""


def test_a_notebook_that_makes_the_worker_pass_on_its_unreadable_is_graded_not_a_grader_error(tmp_path):
    """No codesign.py handed in; the notebook's process rewrote the worker's memory so that the
    worker passed on the notebook's own 'unreadable': a grader error on every run, never graded.
    What the worker says after any cell ran is the student's: only its word before then counts."""
    import nbformat

    from autograder.build import write_reference_submission

    write_reference_submission("lec01_codesign", tmp_path / "mallory")
    (tmp_path / "mallory" / "codesign.py").unlink()
    path = tmp_path / "mallory" / "handout.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(FORGED_THROUGH_THE_WORKERS_MEMORY))
    nbformat.write(notebook, path)
    result = grader.grade_submission("lec01_codesign", tmp_path / "mallory")
    report = [item for item in result.items if item.kind != "function" and item.status != "manual"]
    assert report and not any(item.score for item in report)
    assert [flag for flag in result.flags if "reported it unreadable after the student's code ran" in flag]
