"""Three questions of lecture 1 judged over a class of 400 draws, from the parameters alone (the
formulas written out here, the Student-t data drawn with numpy's own generator):

- q09e verifies q09's weights-only batch with the KV cache read. A service context so short that
  the share of the ridge stays near 100 % asks nothing: "about 100" earns it, and the gap the
  explanation discusses is not there. And the service it asks about must exist: at q09's batch the
  weights and the KV cache once needed up to 24 times the usable HBM (153B, 126 layers × 16 KV heads ×
  192, batch 393, context 20,303: 6,179 GB of KV), so q09e asks at the largest batch that fits.
- q10a is a prediction the table right below verifies; the table prints the zero share to one
  decimal. A tolerance that lets the printed figure through makes the prediction a copy.
- q09f's boundary: the batch on it must be one a server runs. Where the HBM alone ends W4A4's reach it
  is R·C / 2P, up to ~12k sequences for a 20B model; the framework's batch limit (max_batch) ends it sooner.
- q09i weighs draft lengths 0..8: the best must lie inside, ahead of both neighbours, for every draw (it was 8,
  the top of the range, for a third of the ids, and 0 for one in twenty).
"""

from functools import lru_cache

import numpy as np
import pytest

from hw_specs import B300, BYTES_PER_ELEM
from solutions.lec01_codesign import variants

CLASS = 400
# q09e: the KV cache read at q09's batch is at least a ninth of the weight bytes, so the share is at most 90 %
Q09E_MOST = 90.0
# q09f: the batch on the boundary is at most the framework's limit, drawn up to 4,096 (vLLM's max_num_seqs default
# is 256 to 1,024, TensorRT-LLM's max_batch_size 2,048), or a little above q09h's batch where that is larger; the draw may double it, to 8,192 at most, where no batch keeps q09g's margin
BOUNDARY_BATCH_MOST = 8192


@lru_cache(maxsize=1)
def _class() -> tuple[dict, ...]:
    return tuple(variants.variant(np.random.default_rng(seed)) for seed in range(CLASS))


def _serve_ridge(p: dict) -> float:
    return B300.peak_flops("nvfp4") * p["serve_nvfp4_share"] / (B300.mem_bw * p["serve_bw_share"])


def _q09e_batch(p: dict) -> float:
    """q09e's batch: q09's R·W / 2P, capped at what fits beside the weights, (C − W) / (L·k)."""
    params = p["model_params_b"] * 1e9
    weights = params * BYTES_PER_ELEM["nvfp4"]
    kv = 2 * p["kv_layers"] * p["kv_heads"] * p["kv_head_dim"] * BYTES_PER_ELEM["fp8"]
    return min(_serve_ridge(p) * weights / (2 * params),
               (variants.USABLE_HBM * B300.mem_cap - weights) / (p["service_context"] * kv))


def _q09e_bytes(p: dict) -> float:
    """What q09e's batch holds in HBM (and reads a step): W + B·L·k."""
    kv = 2 * p["kv_layers"] * p["kv_heads"] * p["kv_head_dim"] * BYTES_PER_ELEM["fp8"]
    return p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"] + _q09e_batch(p) * p["service_context"] * kv


def _q09e(p: dict) -> float:
    """Share of the ridge at q09e's batch B with L = SERVICE_CONTEXT: 2P·B / (W + B·L·k) over R."""
    return 100 * 2 * p["model_params_b"] * 1e9 * _q09e_batch(p) / _q09e_bytes(p) / _serve_ridge(p)


def _q10a(p: dict) -> float:
    """Per-tensor FP4 flushes |x| / (amax / 6) <= 0.25 (half of E2M1's 0.5, the tie going to the even 0)."""
    x = np.random.default_rng(p["demo2_seed"]).standard_t(df=p["demo2_df"], size=p["demo2_n"]) * p["demo2_scale"]
    return 100 * float(np.mean((np.abs(x) <= np.abs(x).max() / 24) & (x != 0)))


def _tolerance(item: str) -> tuple[float, float]:
    from autograder.engine.registry import load_config

    spec = next(i for i in load_config("lec01_codesign").items_of("number") if i.id == item)
    return spec.rtol, spec.atol


def test_q09e_leaves_a_gap_to_discuss_for_every_draw():
    near_full = [f"seed {seed}: {share:.2f} % (context {p['service_context']})"
                 for seed, p in enumerate(_class()) if (share := _q09e(p)) > Q09E_MOST]
    assert near_full == []
    assert _q09e(variants.LECTURE) <= Q09E_MOST


def test_q09es_service_fits_in_the_usable_hbm_for_every_draw():
    """The weights and q09e's batch's KV cache fit in USABLE_HBM for every draw, with a sequence or more, and the
    key is the share at that batch: at q09's batch the scenario overflowed the HBM for 106 of 400 ids."""
    from solutions.lec01_codesign.answers import answer_key

    usable = variants.USABLE_HBM * B300.mem_cap
    overflowing = [f"seed {seed}: {_q09e_bytes(p) / 1e9:,.0f} GB" for seed, p in enumerate(_class())
                   if _q09e_bytes(p) > usable * (1 + 1e-9) or _q09e_batch(p) < 1]
    assert overflowing == []
    capped = [p for p in _class() if _q09e_batch(p) < _serve_ridge(p) * BYTES_PER_ELEM["nvfp4"] / 2]
    assert 0 < len(capped) < CLASS  # both cases occur: the question is the same for everyone, the cap the student's to find
    for p in capped[:20] + [variants.LECTURE]:
        assert answer_key(p)["q09e_ridge_share_with_kv"] == pytest.approx(_q09e(p), rel=1e-9)


def test_q10a_cannot_be_copied_off_the_verifying_table():
    """The figure the table prints (one decimal, in percent) fails the tolerance for all but a few ids
    (a share that happens to be a one-decimal figure, such as 12.5 % of 4,096 values, stays printable)."""
    rtol, atol = _tolerance("q10a_fp4_zero_share")
    copied = [seed for seed, p in enumerate(_class())
              if abs(round(share := _q10a(p), 1) - share) <= atol + rtol * share]
    assert len(copied) <= CLASS // 100, copied


def _boundary(p: dict) -> tuple[float, float]:
    """q09f from its three limits: (the longest context, the batch on it). Reaching the ridge R needs
    B >= R·W / (2P − R·L·k); B·L·k <= C − W and B <= max_batch each bound L."""
    params = p["model_params_b"] * 1e9
    w, k, c, ridge = params * 0.5625, 2 * p["kv_layers"] * p["kv_heads"] * p["kv_head_dim"], variants.USABLE_HBM * B300.mem_cap, _serve_ridge(p)
    fits, runs = 2 * params * (1 - w / c) / (ridge * k), (2 * params - ridge * w / p["max_batch"]) / (ridge * k)
    length = min(fits, runs)
    return length, ridge * w / (2 * params - ridge * length * k)


def test_q09fs_boundary_batch_is_one_a_server_runs():
    """The boundary batch stays within the framework's limit; without it (R·C / 2P) the class needs up to ~10k."""
    from solutions.lec01_codesign.answers import answer_key

    boundaries = [_boundary(p) for p in _class()]
    assert max(batch for _, batch in boundaries) <= BOUNDARY_BATCH_MOST
    assert all(batch <= p["max_batch"] * (1 + 1e-9) for (_, batch), p in zip(boundaries, _class()))
    hbm_only = [_serve_ridge(p) * variants.USABLE_HBM * B300.mem_cap / (2e9 * p["model_params_b"]) for p in _class()]
    assert max(hbm_only) > 2 * variants.MAX_BATCH[1]  # what the limit is for
    for p, (length, _) in list(zip(_class(), boundaries))[:40]:
        assert answer_key(p)["q09f_w4a4_context_limit"] == pytest.approx(length, rel=1e-9)


def test_q09is_best_draft_length_lies_inside_the_range_with_a_lead():
    """In a class of 400 draws (`check`'s lessons take 1,000): the best γ is 1..7, ahead of γ − 1 and
    γ + 1 by variants.Q09I_GAP, and every inner length is somebody's best."""
    best = []
    for p in _class():
        rates = variants.speculative_throughputs(p)
        g = max(rates, key=rates.get)
        assert 0 < g < 8, p
        assert rates[g] >= (1 + variants.Q09I_GAP) * max(rates[g - 1], rates[g + 1]), p
        best.append(g)
    assert set(best) == set(range(1, 8))


def test_q09es_explanation_claims_no_batch_limit_the_class_contradicts():
    """For the draws whose service context lies below the W4A4 boundary (q09g's A), a larger batch does reach
    the ridge within the HBM: the explanation once said a larger batch can never win the intensity back."""
    from solutions.lec01_codesign.explanations import EXPLANATIONS

    recoverable = [seed for seed, p in enumerate(_class())
                   if p["service_context"] < variants.decode_context_limit(p, "nvfp4")]
    assert 0 < len(recoverable) < CLASS
    text = EXPLANATIONS["q09e_ridge_share_with_kv"]
    assert "追不回来" not in text
    assert "2P / (L·k)" in text and "q09f" in text  # the intensity a batch tends to, and the memory limit


def test_q09ds_prompt_quotes_the_capacity_share_the_draws_keep():
    """The prompt says every model's NVFP4 weights take less than half the usable HBM (so KV as large fits):
    the share it quotes is USABLE_HBM / 2 of the capacity, and the largest model drawn stays below it."""
    from solutions.lec01_codesign import handout

    prompt = next(cell.prompt for cell in handout.CELLS if getattr(cell, "id", None) == "q09d_kv_equal_weights_context")
    assert f"容量的 {variants.USABLE_HBM / 2:.0%}" in prompt
    assert variants.MODEL_PARAMS_B[1] * 1e9 * BYTES_PER_ELEM["nvfp4"] <= variants.USABLE_HBM / 2 * B300.mem_cap
