"""An independent review of lecture 1's report keys over a class of 400 student ids.

Every key is recomputed here from the lecture's formulas and hw_specs' published figures, with
number formats rounded on ml_dtypes' own value grids (nothing of solutions/ is imported for the
arithmetic), and compared with the key the grader uses for that id. Then each variant is judged as
a hardware reviewer would: is the drawn chip and model a real one, does every choice key lead its
runner-up by more than a right answer's own slack, and does every number the notebook invites the
student to read off a printed table still fall inside the item's tolerance?
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import lru_cache
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import hw_specs
from hw_specs import B200, B300, CHIPS, H100

pytestmark = pytest.mark.slow  # about a minute: 400 variants, their keys and the recomputation

IDS = [f"review-{i:03d}" for i in range(400)]
# A fixed test seed stands in for an instructor's secret one (the class's draws depend on it).
SEED_HEX = hashlib.sha256(b"cs349e independent review seed").hexdigest()
REAL_TENSORS = Path(__file__).resolve().parents[2] / "assignments" / "lec01_codesign" / "real_tensors.npz"

# --- what a reviewer counts as a real chip, model and service (published figures, common practice)
GEMM_SHARE = (0.55, 0.95)   # dense GEMM sustains this share of the spec peak on a tuned kernel
HBM_SHARE = (0.75, 0.97)    # STREAM-like kernels reach this share of the rated HBM bandwidth
USABLE_HBM = 0.9            # what the notebook states: weights + KV in 90 % of the HBM
MIN_W4A4_CONTEXT = 64       # q09f: below this the decode design (q09g) has no W4A4 side worth asking about
Q09E_MOST = 90.0            # q09e: nearer 100 % of the ridge, "about 100" earns it and there is no gap to explain
BOUNDARY_BATCH_MOST = 8192  # q09f: the batch on the W4A4 boundary (R·C / 2P reached ~12k before the framework's limit)
D_MODEL_PER_LAYER = (40, 200) # dense LLMs: Llama 3 8B / 70B / 405B at 128 / 102 / 130, GPT-3 at 128
MAX_QUERY_HEADS = 128       # d_model / head_dim: Llama 3 405B has 128
# --- how far a choice key must lead for the right reasoning always to earn it
CHOICE_LEAD = {
    "q03_least_grown": 0.05,        # relative: a growth read to the table's 2 decimals cannot flip it
    "q09g_decode_precision": 0.05,  # relative distance of the service's context from either boundary
    "q10_size_sensitive": 1.0,      # pp of error growth over the runner-up
    "q13_bottleneck": 0.05,         # relative distance of t_exp / t_mma from 1
    "q14_mla_effect": 0.05,         # relative change of the ratio
    "q18c_measured_position": 0.05, # relative distance of the measured 1.35 from the nearer model
    "q25_rotation_nvfp4": 0.1,      # pp of Y's error: float32 vs float64 products move it by < 1e-4 pp
}


# ---------------------------------------------------------------- number formats, on ml_dtypes' grids
def _grid(dtype, count: int) -> np.ndarray:
    """The non-negative finite values of an ml_dtypes float type in code order (code = index)."""
    values = np.arange(count, dtype=np.uint8).view(dtype).astype(np.float64)
    return values[np.isfinite(values)]


E4M3_GRID = _grid(ml_dtypes.float8_e4m3fn, 127)  # codes 0x00..0x7e: 0 .. 448 (0x7f is NaN)
E2M1_GRID = _grid(ml_dtypes.float4_e2m1fn, 8)    # 0, 0.5, 1, 1.5, 2, 3, 4, 6


def round_to_grid(x, grid: np.ndarray) -> np.ndarray:
    """Nearest grid value of |x| (ties to the even code, saturating at the top), sign kept."""
    x = np.asarray(x, dtype=np.float64)
    a = np.minimum(np.abs(x), grid[-1])
    low = np.clip(np.searchsorted(grid, a, side="right") - 1, 0, len(grid) - 2)
    below, above = a - grid[low], grid[low + 1] - a
    up = (above < below) | ((above == below) & ((low + 1) % 2 == 0))
    return np.copysign(np.where(up, grid[low + 1], grid[low]), x)


def _floor_log2(a: np.ndarray) -> np.ndarray:
    e = np.floor(np.log2(a))
    e = np.where(2.0 ** e > a, e - 1, e)
    return np.where(2.0 ** (e + 1) <= a, e + 1, e)


def quant(x, scheme: str, block: int | None = None, scale: str | None = None) -> np.ndarray:
    """DESIGN §2's four schemes; block schemes with any block size and either scale format."""
    x = np.asarray(x, dtype=np.float64)
    amax = np.abs(x).max()
    if scheme == "fp8_tensor":
        s = amax / 448
        return round_to_grid(x / s, E4M3_GRID) * s
    if scheme == "fp4_tensor":
        s = amax / 6
        return round_to_grid(x / s, E2M1_GRID) * s
    block = block or {"mxfp4": 32, "nvfp4": 16}[scheme]
    scale = scale or {"mxfp4": "e8m0", "nvfp4": "e4m3"}[scheme]
    blocks = x.reshape(-1, block)
    bmax = np.abs(blocks).max(axis=1, keepdims=True)
    if scale == "e8m0":
        s = 2.0 ** (_floor_log2(np.where(bmax > 0, bmax, 1.0)) - 2)
    else:
        g = amax / (6 * 448)
        s = round_to_grid(bmax / 6 / g, E4M3_GRID) * g
    live = (bmax > 0) & (s > 0)
    safe = np.where(live, s, 1.0)
    return np.where(live, round_to_grid(blocks / safe, E2M1_GRID) * safe, 0.0).reshape(x.shape)


def rel(q, x) -> float:
    return float(np.linalg.norm(q - x) / np.linalg.norm(x))


# ---------------------------------------------------------------- the independent key
def ridge(flops: float, bw: float) -> float:
    return flops / bw


def exp_ratio(chip, precision: str, d_qk: int, d_v: int, exp_per_s: float | None = None) -> float:
    """t_exp / t_mma: one exp per score against 2·d_qk + 2·d_v FLOP of QKᵀ and PV."""
    return chip.peak_flops(precision) / (2 * d_qk + 2 * d_v) / (exp_per_s or chip.exp_per_s)


def fwht_ops(size: int) -> int:
    """Adds and subtracts of an in-place fast Walsh–Hadamard transform of `size` values, counted while it runs
    (and checked against the Sylvester matrix on a random vector)."""
    x = np.random.default_rng(size).standard_normal(size)
    y, ops, span = x.copy(), 0, 1
    while span < size:
        for start in range(0, size, 2 * span):
            for i in range(start, start + span):
                y[i], y[i + span] = y[i] + y[i + span], y[i] - y[i + span]
                ops += 2
        span *= 2
    h = np.array([[1.0]])
    while h.shape[0] < size:
        h = np.block([[h, h], [h, -h]])
    assert np.allclose(y, h @ x)
    return ops


def hadamard(n: int, size: int) -> np.ndarray:
    h = np.array([[1.0]])
    while len(h) < size:
        h = np.vstack([np.hstack([h, h]), np.hstack([h, -h])])
    return np.kron(np.eye(n // size), h / math.sqrt(size))


@lru_cache(maxsize=1)
def real_tensors():
    with np.load(REAL_TENSORS) as data:
        return data["X"].astype(np.float64), data["W"].astype(np.float64)


def student_t(p: dict, n: int) -> np.ndarray:
    return np.random.default_rng(p["demo2_seed"]).standard_t(df=p["demo2_df"], size=n) * p["demo2_scale"]


def decode_limit(p: dict, flops: float, bw: float) -> float:
    """Longest context L at which some batch B <= max_batch reaches the ridge R with W + B·L·k <= C:
    2P·B >= R·(W + B·L·k) and W + B·L·k <= C  =>  L <= 2P·(1 − W/C) / (R·k);
    B = R·W / (2P − R·L·k) <= max_batch  =>  L <= (2P − R·W / max_batch) / (R·k)."""
    params = p["model_params_b"] * 1e9
    w, k = params * 0.5625, kv_bytes(p)
    c = USABLE_HBM * B300.mem_cap
    r = ridge(flops, bw)
    return min(2 * params * (1 - w / c) / (r * k), (2 * params - r * w / p["max_batch"]) / (r * k))


def kv_bytes(p: dict) -> float:
    return 2 * p["kv_layers"] * p["kv_heads"] * p["kv_head_dim"] * 1


def active_moe_shared(p: dict) -> float:
    """The parameters of a MoE model outside its routed experts: active minus k experts of (total − active) / (E − k)."""
    _, total_b, active_b, n_experts, top_k = p["moe_model"]
    return (active_b - top_k * (total_b - active_b) / (n_experts - top_k)) * 1e9


def recompute(p: dict) -> tuple[dict, dict, dict]:
    """(keys, choice leads, facts) of one variant, from the lecture's formulas alone."""
    nv, f8, bf16 = 4.5 / 8, 1.0, 2.0
    h_f8 = H100.peak_flops("fp8") * p["h100_fp8_share"]
    h_bw = H100.mem_bw * p["h100_bw_share"]
    b_f8, b_nv = B300.peak_flops("fp8") * p["b300_fp8_share"], B300.peak_flops("nvfp4") * p["b300_nvfp4_share"]
    b_bw = B300.mem_bw * p["b300_bw_share"]
    s_f8, s_nv = B300.peak_flops("fp8") * p["serve_fp8_share"], B300.peak_flops("nvfp4") * p["serve_nvfp4_share"]
    s_bw = B300.mem_bw * p["serve_bw_share"]
    params = p["model_params_b"] * 1e9
    weights = params * nv
    k = {}
    k["q01_compute_headline"] = b_nv / h_f8
    k["q02_format_gain"] = b_nv / b_f8
    k["q04_ridge_same_precision"] = ridge(b_f8, b_bw) / ridge(h_f8, h_bw)
    k["q05_ridge_mixed_precision"] = ridge(b_nv, b_bw) / ridge(h_f8, h_bw)
    k["q06b_wall_for_nvfp4_kernel"] = k["q05_ridge_mixed_precision"] / (f8 / nv)
    k["q06c_decode_generation_speedup"] = b_bw / h_bw * f8 / nv  # batch-1 decode: bytes over bandwidth on both chips
    k["q07_decode_intensity"] = 2 * p["decode_batch"] / nv
    k["q08_decode_tokens_per_s"] = s_bw / weights
    k["q09_decode_batch"] = ridge(s_nv, s_bw) / (2 / nv)
    k["q09b_decode_batch_w4a8"] = ridge(s_f8, s_bw) / (2 / nv)
    k["q09c_kv_bytes_per_token"] = kv_bytes(p)
    k["q09d_kv_equal_weights_context"] = weights / (p["kv_batch"] * kv_bytes(p))
    # q09e: q09's batch, or the largest whose KV cache fits beside the weights in the usable HBM
    batch = min(k["q09_decode_batch"], (USABLE_HBM * B300.mem_cap - weights) / (p["service_context"] * kv_bytes(p)))
    service_bytes = weights + batch * p["service_context"] * kv_bytes(p)
    k["q09e_ridge_share_with_kv"] = 100 * (2 * params * batch / service_bytes) / ridge(s_nv, s_bw)
    # q09j: that step lasts service_bytes / BW; the NVFP4 rate fills it with FLOP, decode takes 2P·B, a prompt token 2P
    k["q09j_chunked_prefill_tokens"] = (s_nv * service_bytes / s_bw - 2 * params * batch) / (2 * params)
    # q09h: the largest batch the HBM and the promised rate allow (a step is the slower of computing and reading)
    per_seq = p["service_context"] * kv_bytes(p)
    rate = p["service_rate"]
    most = min((USABLE_HBM * B300.mem_cap - weights) / per_seq, s_nv / (2 * params * rate), (s_bw / rate - weights) / per_seq)
    k["q09h_service_batch"] = most
    # q09i: speculative decoding, the best of γ = 0..8 over γ = 0
    alpha, spec_b, draft = p["draft_accept"], p["spec_batch"], p["draft_params_b"] * 1e9
    t_d = max(2 * draft * spec_b / s_nv, draft * nv / s_bw)
    rates = [spec_b * (1 - alpha ** (g + 1)) / (1 - alpha)
             / (g * t_d + max(2 * params * spec_b * (g + 1) / s_nv, (weights + spec_b * p["service_context"] * kv_bytes(p)) / s_bw))
             for g in range(9)]
    k["q09i_speculative_speedup"] = max(rates) / rates[0]
    best = max(range(9), key=rates.__getitem__)  # q09i's lesson: an inner optimum, ahead of both neighbours
    draft_lead = rates[best] / max(rates[best - 1], rates[best + 1]) - 1 if 0 < best < 8 else -1.0
    # q09k: a MoE step reads what every token uses plus each expert some token picked. A token's k distinct experts
    # miss a given one with probability C(E − 1, k) / C(E, k); all B tokens miss it with that to the B-th power
    _, total_b, active_b, n_experts, top_k = p["moe_model"]
    expert_params = (total_b - active_b) * 1e9 / (n_experts - top_k)
    missed = math.comb(n_experts - 1, top_k) / math.comb(n_experts, top_k)
    moe_bytes = (active_b * 1e9 - top_k * expert_params + n_experts * (1 - missed ** p["moe_batch"]) * expert_params) * nv
    k["q09k_moe_tokens_per_s"] = s_bw / moe_bytes
    # q09l: a ring all-reduce of M bytes over N GPUs is N − 1 reduce-scatter and N − 1 all-gather rounds of M / N each
    # way; NVLink's table figure counts both directions. Two all-reduces a layer of d_model BF16 values a sequence
    gpus = p["tp_gpus"]
    ring_seconds_per_sequence = 2 * p["kv_layers"] * (2 * (gpus - 1)) * (p["query_heads"] * p["kv_head_dim"] * bf16 / gpus) \
        / (B300.link_bw / 2)
    k["q09l_tp_allreduce_batch"] = (weights / gpus / s_bw) / ring_seconds_per_sequence
    limits = {"A": decode_limit(p, s_nv, s_bw), "B": decode_limit(p, s_f8, s_bw)}
    k["q09f_w4a4_context_limit"] = limits["A"]
    k["q09g_decode_precision"] = next((c for c in "AB" if p["service_context"] <= limits[c]), "C")

    # demo 2
    large = student_t(p, 1 << 18)
    growth = {}
    for letter, scheme in zip("ABCD", ("fp8_tensor", "fp4_tensor", "mxfp4", "nvfp4")):
        small = large[:1 << 12]
        growth[letter] = rel(quant(large, scheme), large) - rel(quant(small, scheme), small)
    k["q10_size_sensitive"] = max(growth, key=growth.get)
    x = student_t(p, p["demo2_n"])
    k["q10a_fp4_zero_share"] = 100 * float(np.mean((quant(x, "fp4_tensor") == 0) & (x != 0)))
    big, little = p["ablation_blocks"]
    abl = {(b, s): rel(quant(x, "mxfp4", b, s), x) for b in (big, little) for s in ("e8m0", "e4m3")}
    k["q11_scale_format_gain"] = 100 * (abl[little, "e8m0"] - abl[little, "e4m3"])
    k["q12_block_size_gain"] = 100 * (abl[big, "e4m3"] - abl[little, "e4m3"])
    bmax = np.abs(x.reshape(-1, little)).max(axis=1)
    bmax = bmax[bmax > 0]
    k["q12b_e8m0_clipped_blocks"] = 100 * float(np.mean(bmax / 2.0 ** (_floor_log2(bmax) - 2) > 6))

    # demo 3
    chip, precision, d_qk, d_v = p["bottleneck_case"]
    bottleneck = exp_ratio(CHIPS[chip], precision, d_qk, d_v)
    k["q13_bottleneck"] = "B" if bottleneck > 1 else "A"
    sxm5_exp = hw_specs.H100_SXM5_SMS * hw_specs.EX2_PER_SM_PER_CLK["Hopper"] * hw_specs.H100_SXM5_BOOST_HZ
    # a student who applies q15 takes H100's exp rate on its tensor peaks' basis: the key must hold there too
    bottlenecks = [bottleneck] + ([exp_ratio(H100, precision, d_qk, d_v, exp_per_s=sxm5_exp)] if chip == "H100" else [])
    mla = exp_ratio(B300, "fp8", *p["mla_shape"]) / exp_ratio(B300, "fp8", 128, 128)
    k["q14_mla_effect"] = "A" if mla > 1 else "B"
    k["q15_h100_tensor_basis"] = 100 * exp_ratio(H100, "bf16", *p["basis_shape"], exp_per_s=sxm5_exp)
    k["q16_software_exp_share"] = 100 * max(0.0, 1 - 1 / exp_ratio(B200, "fp8", *p["software_shape"]))
    # q16b: per score, in SFU-only exp time: tensor cores 1 / ratio; a share s on the FMA pipe costs s·c + a results
    # there at 128 / 16 = 8 per SFU exp2; the best s balances the two: the slowest of the three units sets the time
    poly, softmax = p["exp_emulation"]
    split = np.linspace(0, 1, 100_001)
    best_split = float(np.maximum(1 - split, (softmax + split * poly) / 8).min())
    k["q16b_emulated_exp_time"] = 100 * max(1 / exp_ratio(B200, "fp8", *p["software_shape"]), best_split)
    d_qk, d_v = p["backward_shape"]
    k["q17_backward_ratio"] = 100 * B200.peak_flops("fp8") / (6 * d_qk + 4 * d_v) / B200.exp_per_s
    group, dim, kv_format = p["decode_attention"]
    k["q17b_decode_exp_vs_kv"] = 100 * (group / B300.exp_per_s) / (2 * dim * {"fp8": f8, "nvfp4": nv}[kv_format] / s_bw)
    n = p["service_context"]
    attention = p["kv_layers"] * p["query_heads"] * n * (n + 1) / 2 * 4 * p["kv_head_dim"]
    k["q17c_prefill_attention_ratio"] = 100 * attention / (2 * params * n)

    def score_time(chip, overlap, d_qk, d_v, mma=1.0, sfu=1.0):
        t_exp, t_mma = 1 / (sfu * chip.exp_per_s), (2 * d_qk + 2 * d_v) / (mma * chip.peak_flops("fp8"))
        return max(t_exp, t_mma) if overlap else t_exp + t_mma

    old, new = (CHIPS[c] for c in p["speedup_chips"])
    k["q18_model_speedup"] = score_time(old, True, *p["speedup_shape"]) / score_time(new, True, *p["speedup_shape"])
    k["q18b_serial_speedup"] = score_time(old, False, *p["speedup_shape"]) / score_time(new, False, *p["speedup_shape"])
    bounds = sorted(score_time(B200, o, 192, 128) / score_time(B300, o, 192, 128) for o in (True, False))
    k["q18c_measured_position"] = "C" if 1.35 < bounds[0] else "A" if 1.35 > bounds[1] else "B"
    # B300 matmul-bound at efficiency a: 640 / (a·peak) = (1 / (b·exp_B200)) / 1.35
    k["q19_mma_efficiency"] = 100 * 640 * p["sfu_share"] * B200.exp_per_s * 1.35 / B300.peak_flops("fp8")

    # real tensors: one tile of Y = X·Wᵀ, both operands quantized along K
    xs, ws = real_tensors()
    (t0, nt), (o0, no) = p["real_tokens"], p["real_outputs"]
    xt, wt = xs[t0:t0 + nt], ws[o0:o0 + no]
    y = xt @ wt.T

    def y_error(scheme, a, b):
        qa = quant(a.ravel(), scheme).reshape(a.shape)
        qb = quant(b.ravel(), scheme).reshape(b.shape)
        return float(np.linalg.norm(qa @ qb.T - y) / np.linalg.norm(y))

    h = hadamard(xt.shape[1], p["rotation_size"])
    real = {s: y_error(s, xt, wt) for s in ("fp4_tensor", "nvfp4")}
    real.update({f"{s} rotated": y_error(s, xt @ h, wt @ h) for s in ("fp4_tensor", "nvfp4")})
    k["q22_real_fp4_tensor_error"] = 100 * real["fp4_tensor"]
    k["q23_real_nvfp4_error"] = 100 * real["nvfp4"]
    k["q24_rotated_fp4_tensor_error"] = 100 * real["fp4_tensor rotated"]
    k["q25_rotation_nvfp4"] = "A" if real["nvfp4 rotated"] < real["nvfp4"] else "B"
    # q25w: count a 16-point fast Walsh–Hadamard transform's adds and subtracts by running it; per SM and clock on the
    # exp table's basis: the FMA pipe's 128 results, the tensor cores' NVFP4 FLOP; 2N FLOP a value of X in the GEMM
    budget, gemm_share = p["online_rotation"]
    ops_per_value = fwht_ops(16) / 16
    clocks = B200.exp_per_s / hw_specs.EX2_PER_SM_PER_CLK["Blackwell"]  # SMs × clock
    tensor_per_clock = B200.peak_flops("nvfp4") * gemm_share / clocks
    fma_per_clock = hw_specs.FP32_FMA_PER_SM_PER_CLK["Blackwell"]
    # rotation / GEMM = (ops / fma) / (2N / tensor) <= budget / 100
    k["q25w_online_rotation_width"] = ops_per_value / fma_per_clock * tensor_per_clock / (2 * budget / 100)
    # q25x: dW = dYᵀ·X rotates dY (tokens × N) and X (tokens × K) online; per token: (N + K) values against 2·N·K FLOP
    wk, wn = p["wgrad_layer"]
    k["q25x_wgrad_rotation_share"] = 100 * (ops_per_value * (wn + wk) / fma_per_clock) / (2 * wn * wk / tensor_per_clock)
    k["q06_memory_wall"] = {"fp8": "A", "nvfp4_on_chip": "B"}[p["wall_kernel"]]
    base, new_name = (CHIPS[c] for c in p["growth_pair"])
    base_low = next(pr for pr in hw_specs.PRECISIONS if base.has(pr))
    step = {"A": CHIPS[new_name.name].peak_flops("nvfp4") / base.peak_flops(base_low),
            "B": new_name.mem_bw / base.mem_bw, "C": new_name.mem_cap / base.mem_cap, "D": new_name.link_bw / base.link_bw}
    k["q03_least_grown"] = min(step, key=step.get)

    def lead(values: dict) -> float:
        first, second = sorted(values.values())[:2]
        return second / first - 1

    service = p["service_context"]
    leads = {
        "q03_least_grown": lead(step),
        "q09g_decode_precision": min(abs(service / limit - 1) for limit in limits.values()),
        "q10_size_sensitive": 100 * (growth["B"] - max(v for c, v in growth.items() if c != "B")),
        "q13_bottleneck": min(abs(b - 1) for b in bottlenecks) if len({b > 1 for b in bottlenecks}) == 1 else 0.0,
        "q14_mla_effect": abs(mla - 1),
        "q18c_measured_position": min(abs(1.35 / b - 1) for b in bounds),
        "q25_rotation_nvfp4": 100 * abs(real["nvfp4 rotated"] - real["nvfp4"]),
    }
    x_tile_peak = float(np.abs(xt).max() / np.sqrt(np.mean(xt ** 2)))
    facts = {
        "d_model": math.sqrt(params / (12 * p["kv_layers"])),
        "service_batch": batch,
        "service_bytes": service_bytes,
        "ablation_pair": tuple(p["ablation_blocks"]),
        "weights": weights,
        "crossover_bytes": weights + p["kv_batch"] * k["q09d_kv_equal_weights_context"] * kv_bytes(p),
        "draft_lead": draft_lead,
        "boundary_batch": min(ridge(s_nv, s_bw) * USABLE_HBM * B300.mem_cap / (2 * params), p["max_batch"]),
        "growth": growth,
        "abl": abl,
        "tile_peak_over_rms": x_tile_peak,
        "data_peak_over_rms": float(np.abs(x).max() / np.sqrt(np.mean(x ** 2))),
        "real": real,
    }
    return k, leads, facts


# ---------------------------------------------------------------- the class under review
@pytest.fixture(scope="module")
def review():
    """Per id: the drawn parameters, the grader's key and the independent recomputation."""
    from autograder.engine import key_cache
    from autograder.engine import variants as engine_variants
    from autograder.engine.assignment import load_assignment

    saved = engine_variants.read_seed, key_cache.ENABLED
    engine_variants.read_seed = lambda name, root=None: bytes.fromhex(SEED_HEX)
    key_cache.ENABLED = False  # the store is the instructor's seed's: draw this seed's class afresh
    try:
        assignment = load_assignment("lec01_codesign")
        rows = []
        for sid in IDS:
            params = engine_variants.params_for("lec01_codesign", sid)
            kit = dict(assignment.key_for(params))
            rows.append((sid, params, kit, *recompute(params)))
        return rows
    finally:
        engine_variants.read_seed, key_cache.ENABLED = saved


def _tolerances() -> dict[str, float]:
    from autograder.engine.registry import load_config

    return {item.id: item.rtol for item in load_config("lec01_codesign").items_of("number")}


def test_every_key_agrees_with_the_independent_recomputation(review):
    """Numbers within a tenth of the item's own tolerance, choices letter for letter."""
    rtol = _tolerances()
    mismatches = []
    for sid, _, kit, mine, _, _ in review:
        for item, value in mine.items():
            key = kit[item]
            same = key == value if isinstance(value, str) else abs(key - value) <= rtol[item] / 10 * abs(value)
            if not same:
                mismatches.append(f"{sid} {item}: kit {key!r}, recomputed {value!r}")
    assert len(review) >= 400
    assert mismatches == []


def test_every_drawn_chip_and_model_is_a_real_one(review):
    """Shares a tuned kernel sustains; a lower precision never sustains a larger share; a model whose
    width fits its parameter count, as deep as dense LLMs of its width, with at most 128 query heads;
    decode that fits in the HBM at q09d's crossover and in q09e's service."""
    bad = []
    for sid, p, kit, mine, _, facts in review:
        for share in ("h100_fp8_share", "b300_fp8_share", "serve_fp8_share"):
            if not GEMM_SHARE[0] <= p[share] <= GEMM_SHARE[1]:
                bad.append(f"{sid}: {share} {p[share]}")
        for share in ("h100_bw_share", "b300_bw_share", "serve_bw_share"):
            if not HBM_SHARE[0] <= p[share] <= HBM_SHARE[1]:
                bad.append(f"{sid}: {share} {p[share]}")
        for chip in ("b300", "serve"):
            if p[f"{chip}_nvfp4_share"] > p[f"{chip}_fp8_share"]:
                bad.append(f"{sid}: {chip} NVFP4 sustains {p[f'{chip}_nvfp4_share']} > FP8's {p[f'{chip}_fp8_share']}")
        if not 2048 <= facts["d_model"] <= 16384 or p["kv_heads"] * p["kv_head_dim"] > facts["d_model"] / 2:
            bad.append(f"{sid}: {p['model_params_b']}B with {p['kv_layers']} layers x {p['kv_heads']} KV heads x "
                       f"{p['kv_head_dim']} (d_model {facts['d_model']:.0f})")
        if facts["crossover_bytes"] > USABLE_HBM * B300.mem_cap:
            bad.append(f"{sid}: q09d's crossover needs {facts['crossover_bytes'] / 1e9:.0f} GB")
        if not D_MODEL_PER_LAYER[0] <= facts["d_model"] / p["kv_layers"] <= D_MODEL_PER_LAYER[1]:  # once 93 of 400 above 200
            bad.append(f"{sid}: {p['model_params_b']}B with {p['kv_layers']} layers: d_model {facts['d_model']:.0f}, "
                       f"{facts['d_model'] / p['kv_layers']:.0f} per layer")
        if facts["d_model"] / p["kv_head_dim"] > MAX_QUERY_HEADS:  # once 61 of 400, up to 242
            bad.append(f"{sid}: d_model {facts['d_model']:.0f} holds {facts['d_model'] / p['kv_head_dim']:.0f} query heads of {p['kv_head_dim']}")
        if facts["service_bytes"] > USABLE_HBM * B300.mem_cap * (1 + 1e-9) or facts["service_batch"] < 1:
            # once 106 of 400 at q09's batch, up to 6,179 GB of KV cache
            bad.append(f"{sid}: q09e's service needs {facts['service_bytes'] / 1e9:,.0f} GB ({facts['service_batch']:.1f} sequences)")
        if not 1 < mine["q02_format_gain"] <= B300.peak_flops("nvfp4") / B300.peak_flops("fp8") + 1e-9:
            bad.append(f"{sid}: q02 {mine['q02_format_gain']:.3f} beyond the peak ratio")
        if mine["q04_ridge_same_precision"] < 1 or mine["q06b_wall_for_nvfp4_kernel"] < 1:
            bad.append(f"{sid}: the memory wall falls (q04 {mine['q04_ridge_same_precision']:.3f})")
        if not mine["q09b_decode_batch_w4a8"] < mine["q09_decode_batch"]:
            bad.append(f"{sid}: W4A8 needs a larger batch than W4A4")
        if mine["q09f_w4a4_context_limit"] < MIN_W4A4_CONTEXT:  # once 57.7 tokens: a 24B model, 111 x 16 x 128 KV
            bad.append(f"{sid}: W4A4 reaches its ridge only below {mine['q09f_w4a4_context_limit']:.0f} tokens")
        if mine["q09e_ridge_share_with_kv"] > Q09E_MOST:  # once 56 of 400 draws: up to 99 %
            bad.append(f"{sid}: q09e reaches {mine['q09e_ridge_share_with_kv']:.1f} % of the ridge (context {p['service_context']})")
        if facts["boundary_batch"] > BOUNDARY_BATCH_MOST:
            bad.append(f"{sid}: q09f's boundary needs a batch of {facts['boundary_batch']:,.0f} sequences")
        if not 0 < active_moe_shared(p) < p["moe_model"][2] * 1e9 or p["moe_model"][1] * 1e9 * 0.5625 > USABLE_HBM * B300.mem_cap:
            bad.append(f"{sid}: MoE {p['moe_model']} is no model one B300 serves")
        if not 2 <= p["moe_batch"] <= 512 or p["tp_gpus"] not in (2, 4, 8):
            bad.append(f"{sid}: MoE batch {p['moe_batch']}, {p['tp_gpus']} tensor-parallel GPUs")
        if not 16 <= mine["q09l_tp_allreduce_batch"] <= 8192:
            bad.append(f"{sid}: q09l's batch {mine['q09l_tp_allreduce_batch']:.0f} is none a server runs")
        if p["query_heads"] % p["tp_gpus"]:  # once 39 % of ids: 43 query heads on 8 GPUs
            bad.append(f"{sid}: {p['query_heads']} query heads do not split over {p['tp_gpus']} GPUs")
        if mine["q09l_tp_allreduce_batch"] > 0.8 * mine["q09_decode_batch"]:  # once 1 in 10 ids: the tensor cores bind first
            bad.append(f"{sid}: q09l's batch {mine['q09l_tp_allreduce_batch']:.0f} lies past 0.8 of W4A4's ridge batch")
        if facts["draft_lead"] < 0.005:  # once 8 (the top of the range) for about 3 in 10 ids, 0 for 1 in 20
            bad.append(f"{sid}: q09i's best draft length is no inner optimum (lead {facts['draft_lead']:.4f})")
    assert bad == []


def test_no_choice_key_is_a_coin_toss(review):
    """Each choice key leads its runner-up by more than a right answer's own slack."""
    close = [f"{sid} {item}: lead {value:.4g} < {CHOICE_LEAD[item]}" for sid, _, _, _, leads, _ in review
             for item, value in leads.items() if value < CHOICE_LEAD[item]]
    assert close == []


def test_a_number_read_off_the_printed_ablation_table_earns_q11_and_q12(review):
    """q11 and q12 invite reading the ablation table, printed in percent to 2 decimals: differences of
    two printed values are off by up to 0.01 pp, which must lie inside the item's tolerance."""
    rtol = _tolerances()
    tight = []
    for sid, _, _, mine, _, facts in review:
        printed = {cell: round(100 * value, 2) for cell, value in facts["abl"].items()}
        (big, little) = sorted({b for b, _ in printed}, reverse=True)
        read = {"q11_scale_format_gain": printed[little, "e8m0"] - printed[little, "e4m3"],
                "q12_block_size_gain": printed[big, "e4m3"] - printed[little, "e4m3"]}
        for item, value in read.items():
            if abs(value - mine[item]) > rtol[item] * abs(mine[item]):
                tight.append(f"{sid} {item}: key {mine[item]:.4f}, read off the table {value:.2f}")
    assert tight == []


def test_the_texts_reviewed_hold_for_every_id(review):
    """Two released claims once failed for some ids: the q20 rubric expected the scale format to beat the
    block size (false for 17 of 400: the block size wins on a 4x block change such as (128, 32)), and q22 / the
    q27 rubric said the real X is more outlier-dominated than the student's Student-t data (true for 114 of
    400 tiles only). Both directions occur in the class, and the texts no longer presume either."""
    from solutions.lec01_codesign.explanations import EXPLANATIONS, RUBRICS

    block_wins = [sid for sid, _, _, mine, _, _ in review if mine["q12_block_size_gain"] > mine["q11_scale_format_gain"]]
    # and mostly where the larger block is 128 (the rubric: "其他的块大小组合很少如此"): (64, 16) and (32, 8) are 4x
    # changes too; of 3,000 draws (64, 16) flipped for 3 of 498, all on 4,096 values, the others never
    pairs = [facts["ablation_pair"] for sid, *_, facts in review if sid in block_wins]
    assert pairs.count((128, 32)) >= 10 * (len(pairs) - pairs.count((128, 32))), pairs
    assert set(pairs) <= {(128, 32), (64, 16)}, pairs
    tile_wins = [sid for sid, *_, facts in review if facts["tile_peak_over_rms"] > facts["data_peak_over_rms"]]
    assert 0 < len(block_wins) < len(review) and 0 < len(tile_wins) < len(review)
    q20 = " ".join(c.expects for c in RUBRICS["q20_explain_scaling"])
    assert "准得多" not in q20 and "自己的" in q20 and "相差 4 倍" not in q20 and "块大到 128 时" in q20
    for text in (EXPLANATIONS["q22_real_fp4_tensor_error"], " ".join(c.expects for c in RUBRICS["q27_explain_format"])):
        assert "更受离群值支配" not in text


def test_q10a_is_not_read_off_the_table_that_verifies_it(review):
    """q10a is a prediction; the table right below prints per-tensor FP4's zero share to one decimal. The
    printed figure once earned it for every id (rtol 0.005): a count's share is exact, so only the computation
    does (a share that happens to be a one-decimal figure, such as 12.5 % of 4,096, stays printable)."""
    from autograder.engine.registry import load_config

    spec = next(i for i in load_config("lec01_codesign").items_of("number") if i.id == "q10a_fp4_zero_share")
    copied = [sid for sid, _, _, mine, _, _ in review
              if abs(round(share := mine["q10a_fp4_zero_share"], 1) - share) <= spec.atol + spec.rtol * share]
    assert len(copied) <= len(review) // 100, copied
