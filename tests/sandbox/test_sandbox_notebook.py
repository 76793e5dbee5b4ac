"""Executing a student's notebook inside the sandbox and reading answer variables back."""

from __future__ import annotations

import json

from dataclasses import replace

import numpy as np
import pytest
from sandbox_helpers import FAST, notebook_json

from autograder.sandbox import Unsupported
from autograder.sandbox.nbrunner import neutralise_magics

CODESIGN = {"codesign.py": "def double(x):\n    return 2 * x\n"}


def nb(*cells: str) -> dict[str, str]:
    return dict(CODESIGN, **{"handout.ipynb": notebook_json(*cells)})


def test_cells_run_in_order_in_one_main_namespace(sandbox):
    box = sandbox(nb(
        "#md # 第 1 题",
        "import numpy as np\nfrom codesign import double\nq1 = double(21)",
        "q2 = np.arange(3) * q1\nprint('q2 ready')",
        "q3 = __name__",
        "q4 = {'ratio': 7.6, 'pick': 'B'}",
    ))
    outcome = box.run_notebook("handout.ipynb", ["q1", "q2", "q3", "q4", "q_missing"])
    assert outcome.status == "ok" and outcome.cell_errors == ()
    assert outcome.variables["q1"] == 42
    np.testing.assert_array_equal(outcome.variables["q2"], np.arange(3) * 42)
    assert outcome.variables["q3"] == "__main__"
    assert outcome.variables["q4"] == {"ratio": 7.6, "pick": "B"}
    assert "q_missing" not in outcome.variables
    assert outcome.output == "q2 ready\n"


def test_a_failing_cell_is_recorded_and_execution_continues(sandbox):
    box = sandbox(nb("q1 = 1", "q2 = 1 / 0", "def broken(:\n    pass", "q3 = 3"))
    outcome = box.run_notebook("handout.ipynb", ["q1", "q2", "q3"])
    assert outcome.status == "ok"
    assert outcome.variables == {"q1": 1, "q3": 3}
    assert [(i, t) for i, t, _ in outcome.cell_errors] == [(1, "ZeroDivisionError"), (2, "SyntaxError")]
    assert "line 1" in outcome.cell_errors[0][2]


def test_magics_and_shell_lines_are_neutralised(sandbox):
    box = sandbox(nb(
        "%matplotlib inline\n!pip install evil\nq1 = 1",
        "%%bash\nrm -rf /",
        "%%time\nq2 = 2",
        "if True:\n    %time q3 = 3\n    q3 = 3",
        "files = !ls\nq4 = 4",
        "len?",
    ))
    outcome = box.run_notebook("handout.ipynb", ["q1", "q2", "q3", "q4"])
    assert outcome.cell_errors == ()
    assert outcome.variables == {"q1": 1, "q2": 2, "q3": 3, "q4": 4}


def test_neutralise_keeps_line_numbers():
    source = "a = 1\n%time b\n!ls\nc = 2"
    assert neutralise_magics(source).split("\n") == ["a = 1", "pass", "pass", "c = 2"]


def test_a_cell_that_runs_too_long_is_stopped_even_if_it_swallows_the_first_alarm(sandbox):
    box = sandbox(nb(
        "q1 = 1",
        "while True:\n    pass",
        "try:\n    while True:\n        pass\nexcept BaseException:\n    pass\nwhile True:\n    pass",
        "q2 = 2",
    ), limits=replace(FAST, cell_timeout=0.5))
    outcome = box.run_notebook("handout.ipynb", ["q1", "q2"])
    assert outcome.status == "ok"
    assert [(i, t) for i, t, _ in outcome.cell_errors] == [(1, "CellTimeout"), (2, "CellTimeout")]
    assert outcome.variables == {"q1": 1, "q2": 2}


def test_notebook_that_never_yields_hits_the_hard_backstop(sandbox):
    box = sandbox(nb(
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nq1 = 1",
        "while True:\n    pass",
    ), limits=replace(FAST, notebook_timeout=1.5))
    outcome = box.run_notebook("handout.ipynb", ["q1"])
    assert outcome.status == "timeout" and "did not finish" in outcome.message
    assert box.call("codesign", "double", (2,)).value == 4  # a fresh worker serves the next call


def test_os_exit_in_a_cell_costs_the_notebook_not_the_worker(sandbox):
    box = sandbox(nb("print('before')\nq1 = 1", "import os\nos._exit(0)", "q2 = 2"))
    assert box.call("codesign", "double", (1,)).value == 2
    outcome = box.run_notebook("handout.ipynb", ["q1", "q2"])
    assert outcome.status == "crashed" and "without a result" in outcome.message
    assert outcome.output.startswith("before")
    assert box.call("codesign", "double", (3,)).value == 6


def test_notebook_state_does_not_leak_into_later_calls(sandbox):
    """Cells run in a forked child: patching the student's module there changes nothing after."""
    box = sandbox(nb("import codesign\ncodesign.double = lambda x: 'patched'\nq1 = codesign.double(1)"))
    assert box.run_notebook("handout.ipynb", ["q1"]).variables == {"q1": "patched"}
    assert box.call("codesign", "double", (5,)).value == 10


@pytest.mark.parametrize("content, reason", [
    ("{not json", "not valid JSON"),
    ('{"cells": "nope"}', "not a notebook"),
    ("[1, 2, 3]", "not a notebook"),
    ("", "empty"),
    ('{"cells": [], "nbformat": 3}', "nbformat"),
])
def test_unreadable_notebooks_say_why(sandbox, content, reason):
    box = sandbox(dict(CODESIGN, **{"handout.ipynb": content}))
    outcome = box.run_notebook("handout.ipynb", ["q1"])
    assert outcome.status == "unreadable" and reason in outcome.message
    assert outcome.variables == {}


def test_missing_notebook_is_unreadable(sandbox):
    outcome = sandbox(CODESIGN).run_notebook("handout.ipynb", ["q1"])
    assert outcome.status == "unreadable" and "not found" in outcome.message


def test_unencodable_answers_arrive_as_markers(sandbox):
    box = sandbox(nb("q1 = lambda: 1\nq2 = np = __import__('numpy')\nq3 = [1, 2]"))
    variables = box.run_notebook("handout.ipynb", ["q1", "q2", "q3"]).variables
    assert isinstance(variables["q1"], Unsupported) and isinstance(variables["q2"], Unsupported)
    assert variables["q3"] == [1, 2]


def test_trusted_grading_flag_and_check_helper_stay_quiet(sandbox):
    box = sandbox(dict(nb("from selfcheck import check\ncheck('q1')\nq1 = 1"), **{
        "selfcheck.py": "import os\ndef check(name):\n"
                        "    if os.environ.get('CS349E_TRUSTED_GRADING') == '1':\n        return\n"
                        "    print('checking', name)\n"}), env={"CS349E_TRUSTED_GRADING": "1"})
    outcome = box.run_notebook("handout.ipynb", ["q1"])
    assert outcome.output == "" and outcome.variables == {"q1": 1}


def test_bad_notebook_names_and_variables_are_refused(sandbox):
    box = sandbox(CODESIGN)
    with pytest.raises(ValueError, match="relative path"):
        box.run_notebook("../other/handout.ipynb", ["q1"])
    with pytest.raises(ValueError, match="identifier"):
        box.run_notebook("handout.ipynb", ["q1; import os"])


def test_matplotlib_uses_agg_and_show_does_nothing(sandbox):
    box = sandbox(nb("import matplotlib.pyplot as plt\nplt.plot([1, 2], [3, 4])\nplt.title('趋势')\n"
                     "plt.show()\nq1 = plt.get_backend().lower()"),
                  limits=replace(FAST, cell_timeout=20.0, notebook_timeout=30.0))  # pyplot imports slowly
    outcome = box.run_notebook("handout.ipynb", ["q1"])
    assert outcome.cell_errors == () and outcome.variables == {"q1": "agg"}
    assert "non-interactive" not in outcome.output


# -- the executed notebook: each code cell's outputs, as Jupyter would show them -------------
def _outputs(outcome, position: int) -> list[dict]:
    return outcome.cells[position]["outputs"]


def test_each_code_cell_keeps_its_streams_value_display_figures_and_errors(sandbox):
    import base64

    box = sandbox(dict(nb(
        "#md # 第 1 题",
        "import sys\nprint('你好')\nprint('警告', file=sys.stderr)\n6 * 7",
        "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\nprint('画完了')",
        "display([1, 2])\nx = 3;",
        "from codesign import boom\nboom()",
        "plt.figure()\nplt.plot([3, 1])\nq1 = 1",
    ), **{"codesign.py": "def boom():\n    return 1 / 0\n"}))
    outcome = box.run_notebook("handout.ipynb", ["q1"])
    assert outcome.variables == {"q1": 1}
    assert [c["index"] for c in outcome.cells] == [1, 2, 3, 4, 5]
    assert [c["execution_count"] for c in outcome.cells] == [1, 2, 3, 4, 5]
    assert _outputs(outcome, 0) == [
        {"output_type": "stream", "name": "stdout", "text": "你好\n"},
        {"output_type": "stream", "name": "stderr", "text": "警告\n"},
        {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": {"text/plain": "42"}}]
    shown, printed = _outputs(outcome, 1)   # plt.show() shows the figure where it is called
    assert base64.b64decode(shown["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert printed == {"output_type": "stream", "name": "stdout", "text": "画完了\n"}
    assert _outputs(outcome, 2) == [{"output_type": "display_data", "metadata": {}, "data": {"text/plain": "[1, 2]"}}]
    (error,) = _outputs(outcome, 3)
    assert error["ename"] == "ZeroDivisionError" and error["evalue"] == "division by zero"
    assert "".join(error["traceback"]).splitlines()[1:] == [
        "Cell In[4], line 2", "----> 2 boom()", "File codesign.py:2, in boom", "----> 2 return 1 / 0",
        "ZeroDivisionError: division by zero"]
    assert [o["output_type"] for o in _outputs(outcome, 4)] == ["display_data"]  # a figure left open
    assert outcome.output == "你好\n警告\n画完了\n[1, 2]\n"   # the captured output is as before


def test_outputs_are_bounded_and_the_answers_still_arrive(sandbox):
    from autograder.sandbox.cell_outputs import MAX_NOTEBOOK_OUTPUTS, MAX_OUTPUT_TEXT

    box = sandbox(nb(
        "print('x' * 300_000)\nq1 = 1",
        *["print('y' * 70_000)"] * 40,   # 40 cells of the most one cell keeps: more than a notebook keeps
        "print('z' * 1000)\nq2 = 2",
    ), limits=replace(FAST, cell_timeout=5.0, notebook_timeout=20.0))
    outcome = box.run_notebook("handout.ipynb", ["q1", "q2"])
    assert outcome.variables == {"q1": 1, "q2": 2}
    first = _outputs(outcome, 0)
    assert len(first[0]["text"]) == MAX_OUTPUT_TEXT and "省略了" in first[-1]["text"]
    total = sum(len(str(o)) for c in outcome.cells for o in c["outputs"])
    assert total <= MAX_NOTEBOOK_OUTPUTS * 1.1
    assert "超过了评分保存的上限" in "".join(o.get("text", "") for c in outcome.cells for o in c["outputs"])


def test_a_write_the_stream_refuses_still_fails_in_the_cell(sandbox):
    box = sandbox(nb("import sys\nsys.stdout.write(b'bytes')", "q1 = sys.stdout.fileno() >= 0"))
    outcome = box.run_notebook("handout.ipynb", ["q1"])
    assert [e[1] for e in outcome.cell_errors] == ["TypeError"]
    assert outcome.variables == {"q1": True}


LIFTS_ITS_OUTPUT_BUDGET = '''
import gc, sys
for obj in gc.get_objects():
    if type(obj).__name__ == "OutputBudget":
        obj.left = obj.text = obj.figures = 10**9
line = "x" * 60_000
for i in range(60):
    (sys.stdout if i % 2 else sys.stderr).write(line)
q1 = 1
'''


def test_a_notebook_that_lifts_its_output_budget_still_leaves_at_most_the_cap(sandbox):
    """The outputs' budget lives in the process the cells run in: a cell can find it and lift it.
    What the grader keeps of the executed notebook (executed/, the feedback pages) stays within
    the cap the documentation states (2 MiB of outputs per notebook, 64 KiB of text per cell)."""
    from autograder.engine.executed_notebook import executed_notebook
    from autograder.sandbox.cell_outputs import MAX_NOTEBOOK_OUTPUTS, MAX_OUTPUT_TEXT

    box = sandbox(nb(LIFTS_ITS_OUTPUT_BUDGET))
    outcome = box.run_notebook("handout.ipynb", ["q1"])
    assert outcome.variables == {"q1": 1}
    kept = executed_notebook("handout.ipynb", outcome)
    outputs = [o for cell in kept["cells"] for o in cell["outputs"]]
    size = len(json.dumps(outputs))
    assert size <= MAX_NOTEBOOK_OUTPUTS + 4096, f"{size} bytes of outputs kept"
    for cell in kept["cells"]:
        for name in ("stdout", "stderr"):
            text = sum(len(o["text"]) for o in cell["outputs"] if o.get("name") == name)
            assert text <= MAX_OUTPUT_TEXT + 200, f"{text} characters of {name} kept for one cell"
