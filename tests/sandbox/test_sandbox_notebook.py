"""Executing a student's notebook inside the sandbox and reading answer variables back."""

from __future__ import annotations

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
