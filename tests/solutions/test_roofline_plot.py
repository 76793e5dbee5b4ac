"""The measured CPU roofline is drawn in the notebook: the two roofs the student measured (q28a's
bandwidth, q29's GEMM rate) and the kernels placed on them by their own timings (the GEMM, np.exp,
the student's quantize). Measured figures differ from run to run, so the grader's run draws none:
the notebook's output stays a function of the submitted files."""

import json
import os
import subprocess
import sys

import pytest

from notebook_exec import answered_copy, variant_env

ROOFLINE_TITLES = ("你的 CPU 的 roofline（单线程）", "Your CPU's roofline (one thread)")

# Runs the answered notebook's code cells; plt.show() records every axes' title, lines and points.
_CHILD = r"""
import json
import matplotlib
matplotlib.use("Agg")
from matplotlib import pyplot as plt
figures = []
def show(*args, **kwargs):
    for num in plt.get_fignums():
        for ax in plt.figure(num).axes:
            figures.append({"title": ax.get_title(),
                            "lines": [[list(map(float, l.get_xdata())), list(map(float, l.get_ydata()))] for l in ax.get_lines()],
                            "points": [list(map(float, p)) for c in ax.collections for p in c.get_offsets()],
                            "notes": [t.get_text() for t in ax.texts]})
    plt.close("all")
plt.show = show
nb = json.load(open("handout.ipynb", encoding="utf-8"))
namespace = {}
for cell in nb["cells"]:
    if cell["cell_type"] == "code":
        exec(compile("".join(cell["source"]), "<cell>", "exec"), namespace)
names = ("q28a_triad_gb_per_s", "q29_matmul_gflops", "q28_exp_ns_per_value", "quantize_ns", "GEMM_SIZES")
print(json.dumps({"figures": figures, **{n: namespace[n] for n in names}}))
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return answered_copy(tmp_path_factory.mktemp("roofline") / "lec01_codesign")


def _run(folder, *, grading):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBGRADER_EXECUTION", "CS349E_TRUSTED_GRADING")}
    if grading:
        env["CS349E_TRUSTED_GRADING"] = "1"
    env.update(variant_env(folder))
    proc = subprocess.run([sys.executable, "-c", _CHILD], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _roofline(run):
    return [f for f in run["figures"] if f["title"] in ROOFLINE_TITLES]


def test_the_notebook_draws_the_measured_roofline_with_exp_and_quantize_on_it(folder):
    run = _run(folder, grading=False)
    [figure] = _roofline(run)
    [(xs, ys)] = figure["lines"]
    bandwidth, peak = run["q28a_triad_gb_per_s"], run["q29_matmul_gflops"]
    for x, y in zip(xs, ys):  # the roof: min(bandwidth × intensity, peak)
        assert y == pytest.approx(min(bandwidth * x, peak), rel=1e-9)
    assert min(xs) < peak / bandwidth < max(xs)  # the ridge lies on the drawn range
    edge = max(run["GEMM_SIZES"])  # the plot's own choice: it reads no name only the reference q29 cell defines
    placed = dict(zip(figure["notes"], map(tuple, figure["points"])))
    assert placed.keys() == {"GEMM", "np.exp", "quantize"}
    # one result per value: exp reads and writes a float32 (8 B), quantize a float64 (16 B)
    assert placed["np.exp"] == pytest.approx((1 / 8, 1 / run["q28_exp_ns_per_value"]))
    assert placed["quantize"] == pytest.approx((1 / 16, 1 / run["quantize_ns"]))
    # the GEMM: 2m³ FLOP over A and B read and C written (3m² float32)
    assert placed["GEMM"] == pytest.approx((2 * int(edge) ** 3 / (3 * 4 * int(edge) ** 2), peak))


def test_the_graders_run_draws_no_measured_figure(folder):
    assert _roofline(_run(folder, grading=True)) == []
