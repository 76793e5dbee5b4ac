"""A stub earns nothing on a function item: raising for every input it cannot answer, or handing
its input back unchanged, passes only the cases a do-nothing function passes (the must-raise ones,
every representable value, the all-zero tensors, the empty array); those count once the function
gets a value right that is not its own input."""

from __future__ import annotations

import nbformat  # noqa: F401  (the reference submission's notebook is written with it)

from autograder.engine.registry import REPO_ROOT

VALIDATE = '''
import numpy as _np


def _checked(x):
    a = _np.asarray(x, dtype=_np.float64)
    if not _np.all(_np.isfinite(a)):
        raise ValueError("NaN or inf")
    return a
'''

# Raises ValueError for anything but an all-zero tensor, which it hands back.
ZEROS_OR_RAISE = '''

def quantize(x, scheme, block_size=None, scale_format=None):
    a = _checked(x)
    if a.ndim != 1 or _np.any(a != 0):
        raise ValueError("unsupported")
    return a
'''

# No rounding at all: the input checked and handed back.
UNCHANGED = '''

def round_e4m3(x):
    return _checked(x).copy()


def to_e2m1(y):
    return _checked(y).copy()
'''

# Only saturation: a real value (the clipped one) for inputs beyond the range.
SATURATION_ONLY = '''

def round_e4m3(x):
    return _np.clip(_checked(x), -448.0, 448.0)
'''


def _submission(folder, *overrides: str):
    folder.mkdir()
    source = (REPO_ROOT / "solutions" / "lec01_codesign" / "codesign.py").read_text("utf-8")
    (folder / "codesign.py").write_text(source + VALIDATE + "".join(overrides), "utf-8")
    return folder


def test_a_stub_that_raises_or_hands_its_input_back_earns_nothing(tmp_path):
    from autograder.engine import grade_submission

    result = grade_submission("lec01_codesign", _submission(tmp_path / "stub", ZEROS_OR_RAISE, UNCHANGED))
    for item in ("quantize", "round_e4m3", "to_e2m1"):
        assert result.item(item).score == 0, (item, result.item(item).score, result.item(item).feedback_md[:800])
    # the reference's own functions beside them keep full marks
    for item in ("flops_per_exp", "exp_ratio", "ridge_point", "trend_row"):
        assert result.item(item).status == "passed", item


def test_a_partial_implementation_keeps_its_must_raise_credit(tmp_path):
    """Saturation alone is a value the input does not give: the bad-input cases count."""
    from autograder.engine import grade_submission

    result = grade_submission("lec01_codesign", _submission(tmp_path / "partial", SATURATION_ONLY))
    item = result.item("round_e4m3")
    assert item.status == "partial" and 0 < item.score < item.max_score
    assert "暂不计分" not in item.feedback_md
