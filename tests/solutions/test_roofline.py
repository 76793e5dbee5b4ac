"""flops_per_exp, exp_ratio, ridge_point and trend_row on the chip table and on made-up chips."""

import math

import numpy as np
import pytest

from hw_specs import B200, B300, CHIPS, H100, RUBIN, Chip, MissingFigureError
from solutions.lec01_codesign import exp_ratio, flops_per_exp, ridge_point, trend_row


@pytest.mark.parametrize("d_qk, d_v", [(64, 64), (128, 128), (192, 128), (np.int64(1), 1)])
def test_flops_per_exp_counts_both_matmuls(d_qk, d_v):
    got = flops_per_exp(d_qk, d_v)
    assert got == 2 * d_qk + 2 * d_v and type(got) is int


@pytest.mark.parametrize("bad", [0, -64, 64.0, "64", True, None])
def test_flops_per_exp_rejects_non_positive_integers(bad):
    with pytest.raises(ValueError, match="positive integer"):
        flops_per_exp(bad, 64)


def test_exp_ratio_is_t_exp_over_t_mma():
    for chip in (H100, B200, B300):
        for prec in ("bf16", "fp8"):
            t_mma = flops_per_exp(128, 128) / chip.peak_flops(prec)
            t_exp = 1 / chip.exp_per_s
            assert exp_ratio(chip, prec, 128, 128) == pytest.approx(t_exp / t_mma, rel=1e-12)


def test_exp_ratio_reproduces_the_lecture_percentages():
    """43 % / 86 % on H100, about 195 % on B200 and 91 % on B300 (FP8), d_head = 128."""
    pct = {(c.name, p): f"{exp_ratio(c, p, 128, 128) * 100:.0f}%" for c in (H100, B200, B300) for p in ("bf16", "fp8")}
    assert (pct["H100", "bf16"], pct["H100", "fp8"], pct["B200", "fp8"], pct["B300", "fp8"]) == ("43%", "86%", "195%", "91%")
    assert all(exp_ratio(c, "fp8", 64, 64) > 1 for c in (H100, B200, B300))


def test_missing_figures_propagate():
    with pytest.raises(MissingFigureError, match="Rubin"):
        exp_ratio(RUBIN, "fp8", 128, 128)
    with pytest.raises(MissingFigureError, match="exp"):
        exp_ratio(RUBIN, "nvfp4", 128, 128)


def test_ridge_point_of_the_lecture():
    assert f"{ridge_point(H100, 'fp8'):,.0f}" == "591"
    assert f"{ridge_point(B300, 'nvfp4'):,.0f}" == "1,875"
    for chip in CHIPS.values():
        for prec in ("nvfp4", "fp8", "bf16"):
            if chip.has(prec):
                assert ridge_point(chip, prec) == pytest.approx(chip.peak_flops(prec) / chip.mem_bw)


def test_trend_row_b300_matches_the_lecture_observations():
    row = trend_row(B300, "nvfp4")
    assert set(row) == {"compute", "fp8", "bandwidth", "capacity", "nvlink", "power", "ridge"}
    shown = {k: f"{v:.1f}" for k, v in row.items() if k != "ridge"}
    assert shown == {"compute": "7.6", "fp8": "2.5", "bandwidth": "2.4", "capacity": "3.6", "nvlink": "2.0", "power": "2.0"}
    assert row["ridge"] == ridge_point(B300, "nvfp4")


def test_trend_row_of_rubin_has_none_for_unpublished_figures():
    row = trend_row(RUBIN, "nvfp4")
    assert row["fp8"] is None and row["power"] is None
    assert row["bandwidth"] == pytest.approx(RUBIN.mem_bw / H100.mem_bw)


def test_trend_row_of_the_base_itself_is_all_ones():
    row = trend_row(H100, "fp8")
    assert all(math.isclose(row[k], 1.0) for k in ("compute", "fp8", "bandwidth", "capacity", "nvlink", "power"))


def test_trend_row_with_a_made_up_chip_and_base():
    """Nothing in the functions may depend on the real table: scale every figure and see ratios follow."""
    spec = B300.to_dict()
    fake = Chip.from_dict({**spec, "name": "Fake"})
    assert trend_row(fake, "nvfp4", base=B300)["compute"] == pytest.approx(
        B300.peak_flops("nvfp4") / B300.peak_flops("nvfp4"))
    assert trend_row(B300, "fp8", base=B200)["compute"] == pytest.approx(B300.peak_flops("fp8") / B200.peak_flops("nvfp4"))
