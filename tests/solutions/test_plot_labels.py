"""The handout's plots speak Chinese where a CJK font is installed and English where none is, and
render without a single missing-glyph warning either way (every figure is actually drawn)."""

import json
import os
import subprocess
import sys

import matplotlib
import pytest

from autograder.engine.registry import load_config
from notebook_exec import answered_copy, variant_env
from plot_fonts import CJK_FONTS, use_cjk_font

CONFIG = load_config("lec01_codesign")

# Runs the answered notebook's code cells in order; plt.show() draws every figure (Agg renders the
# text, which is when matplotlib warns about missing glyphs); `hide_cjk` removes the CJK fonts first.
_CHILD = r"""
import json, sys, warnings
import matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager, pyplot as plt
cjk = set(json.loads(sys.argv[2]))
if sys.argv[1] == "hide_cjk":
    font_manager.fontManager.ttflist = [f for f in font_manager.fontManager.ttflist if f.name not in cjk]
    font_manager.findSystemFonts = lambda *a, **k: []  # and no font files to add back
texts = []
def show(*args, **kwargs):
    for num in plt.get_fignums():
        fig = plt.figure(num)
        fig.canvas.draw()
        texts.extend(t.get_text() for ax in fig.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label))
    plt.close("all")
plt.show = show
nb = json.load(open("handout.ipynb", encoding="utf-8"))
namespace = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), "<cell>", "exec"), namespace)
glyphs = [str(w.message) for w in caught if "Glyph" in str(w.message) or "missing from" in str(w.message)]
print(json.dumps({"cjk": namespace["CJK"], "texts": [t for t in texts if t], "glyph_warnings": glyphs}))
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return answered_copy(tmp_path_factory.mktemp("plots") / "lec01_codesign")


def _run(folder, mode):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBGRADER_EXECUTION")}
    env["CS349E_TRUSTED_GRADING"] = "1"  # check() stays silent
    env.update(variant_env(folder))  # the reference names no student: the lecture's variant
    proc = subprocess.run([sys.executable, "-c", _CHILD, mode, json.dumps(CJK_FONTS)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _has_chinese(text):
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def test_without_a_cjk_font_the_plots_are_english_and_warning_free(folder):
    run = _run(folder, "hide_cjk")
    assert run["cjk"] is False and run["texts"]
    assert not any(_has_chinese(t) for t in run["texts"]), run["texts"]
    assert run["glyph_warnings"] == []


def test_with_a_cjk_font_the_plots_are_chinese_and_warning_free(folder):
    with matplotlib.rc_context():  # leave this process's rcParams as they were
        available = use_cjk_font()
    if not available:
        pytest.skip("no CJK font from the fallback list is installed here (e.g. apt-get install fonts-wqy-microhei)")
    run = _run(folder, "keep")
    assert run["cjk"] is True
    assert all(_has_chinese(t) for t in run["texts"] if t not in ("t_exp / t_mma (%)",)), run["texts"]
    assert run["glyph_warnings"] == []


def test_the_fallback_list_covers_windows_macos_and_linux():
    assert {"Microsoft YaHei", "SimHei"} <= set(CJK_FONTS)  # Windows
    assert {"PingFang SC", "Hiragino Sans GB"} <= set(CJK_FONTS)  # macOS
    assert {"Noto Sans CJK SC", "WenQuanYi Micro Hei"} <= set(CJK_FONTS)  # Linux


def test_the_font_plumbing_lives_in_a_shipped_module_not_in_the_notebook():
    """The handout's first screen is the lecture: no cell carries font-manager code; the helper is a
    shared module the build copies into the student folder (and the grader restores)."""
    from solutions.lec01_codesign import handout

    sources = [cell.source for cell in handout.CELLS if hasattr(cell, "source")]
    assert not any("font_manager" in s or "rcParams" in s or "CJK_FONTS" in s for s in sources)
    assert "from plot_fonts import chinese_labels" in sources[1]
    assert "plot_fonts.py" in CONFIG.shared_modules and "plot_fonts.py" in CONFIG.trusted_files()
