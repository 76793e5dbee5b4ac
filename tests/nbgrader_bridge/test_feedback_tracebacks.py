"""Feedback tracebacks keep the student's own frames and nothing else."""

import nbformat

from autograder.nbgrader_bridge.feedback_tracebacks import OMITTED, HideForeignFrames, hide_foreign_frames

RED, END = "\x1b[31m", "\x1b[39m"


def _traceback(folder, *frames):
    return [f"{RED}---------------------------------------------------------------------------{END}",
            f"{RED}ValueError{END}                                Traceback (most recent call last)",
            *frames,
            f"{RED}ValueError{END}: cannot reshape array of size 3 into shape (2,2)"]


def _cell_frame():
    return "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[7]\x1b[39m\x1b[32m, line 1\x1b[39m\n----> 1 q = x.reshape(2, 2)\n"


def _file_frame(path, function="f"):
    return f"File \x1b[32m{path}:42\x1b[39m, in \x1b[36m{function}\x1b[39m\x1b[34m(a)\x1b[39m\n     41 def f(a):\n---> 42     secret()\n"


def test_the_students_cells_and_files_stay_named_relative_to_their_folder(tmp_path):
    own = _file_frame(tmp_path / "codesign.py", "quantize")
    tb = _traceback(tmp_path, _cell_frame(), own)
    kept = hide_foreign_frames(tb, str(tmp_path))
    assert kept == [*tb[:3], _file_frame("codesign.py", "quantize"), tb[-1]]
    assert not [line for line in kept if str(tmp_path) in line]


def test_each_run_of_foreign_frames_becomes_one_line(tmp_path):
    tb = _traceback(tmp_path, _cell_frame(),
                    _file_frame("/venv/lib/python3.11/site-packages/numpy/_core/fromnumeric.py"),
                    _file_frame("/course/autograder/engine/checks.py"),
                    _file_frame(tmp_path / "codesign.py"),
                    _file_frame("/course/autograder/sandbox/worker.py"))
    kept = hide_foreign_frames(tb, str(tmp_path))
    assert kept == [tb[0], tb[1], tb[2], OMITTED, _file_frame("codesign.py"), OMITTED, tb[-1]]
    assert not [line for line in kept if "site-packages" in line or "/course/autograder" in line]


def test_syntax_error_tracebacks_are_filtered_too(tmp_path):
    """IPython prints a SyntaxError in another layout: "  File path:line in f", no comma."""
    tb = ["Traceback \x1b[36m(most recent call last)\x1b[39m:\n",
          "  File \x1b[92m/venv/lib/python3.11/site-packages/IPython/core/interactiveshell.py:3823\x1b[39m in "
          "\x1b[95mrun_code\x1b[39m\n    exec(code_obj, self.user_global_ns, self.user_ns)\n",
          "\x1b[36m  \x1b[39m\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[1]\x1b[39m\x1b[32m, line 8\x1b[39m\n    import codesign\n",
          f"  \x1b[36mFile \x1b[39m\x1b[32m{tmp_path}/codesign.py:143\x1b[39m\n    def oops(:\n             ^\n"
          "SyntaxError: invalid syntax\n"]
    assert hide_foreign_frames(tb, str(tmp_path)) == [tb[0], OMITTED, tb[2], tb[3].replace(f"{tmp_path}/", "")]


def test_a_sibling_folder_with_the_same_prefix_is_foreign(tmp_path):
    (tmp_path / "alice").mkdir()
    tb = _traceback(tmp_path, _file_frame(tmp_path / "alice2" / "codesign.py"))
    assert OMITTED in hide_foreign_frames(tb, str(tmp_path / "alice"))


def test_the_preprocessor_rewrites_error_outputs_only(tmp_path):
    foreign = _file_frame("/usr/lib/python3.11/json/decoder.py")
    error = nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=_traceback(tmp_path, foreign))
    stream = nbformat.v4.new_output("stream", name="stdout", text=foreign)
    cell = nbformat.v4.new_code_cell("f()", outputs=[error, stream])
    nb = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_markdown_cell(foreign)])
    out, _ = HideForeignFrames().preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert OMITTED in out.cells[0].outputs[0].traceback and foreign not in out.cells[0].outputs[0].traceback
    assert out.cells[0].outputs[1].text == foreign
    assert out.cells[1].source == foreign
