"""The reasoning items whose premise the student now works out: each key against an independent
computation of what its prompt leaves to the student."""

import itertools

import numpy as np
import pytest

from hw_specs import B200, B300, H100
from solutions.lec01_codesign import answers, variants
from solutions.lec01_codesign.handout_data import MEASURED_D_QK, MEASURED_D_V, MEASURED_FP8_FORWARD_GAIN


def test_q12ps_key_is_what_log_uniform_block_maxima_clip():
    """E8M0 FLOOR puts a block's maximum at 8·m (m the frexp mantissa) and clips it above 6. Block maxima
    spread evenly on a log scale over many octaves clip in the share q12p's key says (sampled here)."""
    amax = np.exp2(np.random.default_rng(0).uniform(-20, 20, 1_000_000))
    mantissa, _ = np.frexp(amax)
    sampled = 100 * np.mean(8 * mantissa > 6)
    assert answers.answer_key()["q12p_e8m0_clip_prediction"] == pytest.approx(sampled, abs=0.2)


def _speedup(sfu: float, mma: float, b200_exp_bound: bool, b300_exp_bound: bool) -> float:
    """The overlap model's B200 → B300 gain on the measured shape, each chip in the named regime."""
    flops = answers.flops_per_exp(MEASURED_D_QK, MEASURED_D_V)

    def time(chip, exp_bound):
        return 1 / (sfu * chip.exp_per_s) if exp_bound else flops / (mma * chip.peak_flops("fp8"))

    return time(B200, b200_exp_bound) / time(B300, b300_exp_bound)


@pytest.mark.parametrize("sfu", [0.70, 0.85, 1.00])
def test_q19_has_one_regime_that_explains_the_measurement(sfu):
    """q19's prompt no longer says which unit bounds each chip: of the four regimes exactly one reaches the
    measured gain at a matmul share a in (0, 1] that is consistent with it (each chip really in its regime)."""
    flops = answers.flops_per_exp(MEASURED_D_QK, MEASURED_D_V)
    consistent = []
    for b200_exp, b300_exp in itertools.product((True, False), repeat=2):
        for mma in np.linspace(0.01, 1.0, 9901):
            if not np.isclose(_speedup(sfu, mma, b200_exp, b300_exp), MEASURED_FP8_FORWARD_GAIN, rtol=1e-3):
                continue
            exp_bound = {chip: 1 / (sfu * chip.exp_per_s) >= flops / (mma * chip.peak_flops("fp8")) for chip in (B200, B300)}
            if (exp_bound[B200], exp_bound[B300]) == (b200_exp, b300_exp):
                consistent.append((b200_exp, b300_exp, mma))
    regimes = {(a, b) for a, b, _ in consistent}
    assert regimes == {(True, False)}, regimes
    found = [mma for *_, mma in consistent]
    key = answers.mma_efficiency_for_measured_gain(sfu)
    assert min(found) <= key + 1e-3 and key - 1e-3 <= max(found)


def test_q04_stays_near_the_spec_sheet_without_a_redraw():
    """One team's shares: B300's FP8 and HBM shares are near H100's (SAME_TEAM_FP8, SAME_TEAM_HBM), so q04 is
    the spec sheet's ratio times their quotient, never below 1.01, for every draw (no draw is rejected)."""
    spec = (B300.peak_flops("fp8") / B300.mem_bw) / (H100.peak_flops("fp8") / H100.mem_bw)
    rng = np.random.default_rng(7)
    growth = []
    for _ in range(5000):
        p = variants._trend_shares(rng)
        growth.append(spec * (p["b300_fp8_share"] / p["h100_fp8_share"]) / (p["b300_bw_share"] / p["h100_bw_share"]))
    assert 1.01 <= min(growth) and max(growth) <= 1.21, (min(growth), max(growth))
    assert max(growth) - min(growth) > 0.1  # still a number of the student's own
