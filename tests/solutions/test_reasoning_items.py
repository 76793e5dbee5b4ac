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


def test_the_end_to_end_predictions_accept_the_exact_form_of_their_model():
    """q34p's model (the error vector of a random direction, its length the tile's error times one factor)
    gives 1 − cos = 1 − 1/√(1 + r²) exactly; r²/2 is its small-error form, which the keys use. A student
    who calibrates the exact form on FP8 and predicts with it is right too: within each item's tolerance
    for every id of a class (per-tensor FP4's large error puts the two 7-30 % apart)."""
    import math

    from autograder.engine.registry import load_config

    tolerance = {item.id: item.rtol for item in load_config("lec01_codesign").items}
    measured_fp8 = answers.end_to_end()["fp8_tensor"]["deficit"]
    rng = np.random.default_rng(2026)
    for params in [variants.LECTURE] + [variants.variant(rng) for _ in range(60)]:
        tile = answers.end_tile_errors(params)
        factor = math.sqrt((1 - measured_fp8) ** -2 - 1) / tile["fp8_tensor"]   # 1 − cos(FP8) as measured
        exact = {name: 1 - 1 / math.sqrt(1 + (factor * tile[name]) ** 2) for name in tile}
        keys = answers.end_to_end_keys(params)
        for item, mine in (("q34p_nvfp4_end_prediction", answers.END_UNIT * exact["nvfp4"]),
                           ("q35p_fp4_end_prediction", exact["fp4_tensor"] / measured_fp8),
                           ("q34r_h16_end_prediction", exact["nvfp4 + H16"] / measured_fp8)):
            assert abs(mine - keys[item]) <= tolerance[item] * abs(keys[item]), (item, mine, keys[item])
