"""Answer keys of the report questions (instructor-only): computed from the reference and hw_specs.

`answer_key(params=None)` gives the number and choice items of grading.toml for one student's
parameters (variants.py; None = the lecture's own, LECTURE); nothing is typed in, so a change to
the chip table, the reference or a student's parameters moves the keys with it. The explanations (and the rubrics of
the text questions) live in `explanations.py`, the one place the released solutions read them from.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np

import hw_specs
from hw_specs import B200, B300, BYTES_PER_ELEM, CHIPS, EX2_PER_SM_PER_CLK, FP32_FMA_PER_SM_PER_CLK, H100
from solutions.lec01_codesign.codesign import exp_ratio, flops_per_exp, quantize, ridge_point, trend_row
from solutions.lec01_codesign.handout_data import (
    ABLATION_BLOCKS,
    ABLATION_SCALES,
    BACKWARD_FLOPS_PER_EXP,
    BIT_BUDGET,
    BOTTLENECK_OPTIONS,
    BUDGET_OPTIONS,
    DECODE_PRECISIONS,
    DECODE_DESIGN_OPTIONS,
    FLOP_PER_PARAM_PER_TOKEN,
    KV_PRECISION,
    LEAST_GROWN_OPTIONS,
    MEASURED_D_QK,
    MEASURED_D_V,
    MEASURED_FP8_FORWARD_GAIN,
    MLA_OPTIONS,
    POSITION_OPTIONS,
    REAL_TENSORS_FILE,
    ROTATION_OPTIONS,
    SIZE_OPTIONS,
    SIZE_SWEEP,
    WALL_OPTIONS,
    block_hadamard,
    demo_weights,
    format_bits,
    load_real_tensors,
    matmul_error,
    quantize_matrix,
    real_slice,
    relative_error,
    sustained_chip,
    zero_fraction,
)
from solutions.lec01_codesign.encoder import (
    END_FORMATS,
    ENCODER_FILE,
    encode,
    end_deficit,
    linear_weights,
    load_encoder,
    pair_similarities,
    rank_agreement,
    rotate16,
)
from solutions.lec01_codesign import variants
from solutions.lec01_codesign.variants import DRAFT_LENGTHS, LECTURE, USABLE_HBM
from solutions.lec01_codesign.codesign import to_e2m1

# The real tensors ship in the student folder; the key reads the repository's copy of that file.
REAL_TENSORS = Path(__file__).resolve().parents[2] / "assignments" / "lec01_codesign" / REAL_TENSORS_FILE


def lecture_params() -> dict:
    """The lecture's own parameters, as a fresh dict."""
    return json.loads(json.dumps(LECTURE))


def _params(params) -> dict:
    return lecture_params() if params is None else dict(params)


def _letter(options: dict[str, tuple], name) -> str:
    return next(letter for letter, (option, _) in options.items() if option == name)


def run_chips(params=None):
    """The team's measured H100 and B300 (q01–q06c): the spec sheet times the sustained shares."""
    p = _params(params)
    h100 = sustained_chip(H100, {"fp8": p["h100_fp8_share"]}, p["h100_bw_share"])
    b300 = sustained_chip(B300, {"nvfp4": p["b300_nvfp4_share"], "fp8": p["b300_fp8_share"]}, p["b300_bw_share"])
    return h100, b300


def serve_chip(params=None):
    """The serving team's measured B300 (q07–q09b): the spec sheet times its own sustained shares."""
    p = _params(params)
    return sustained_chip(B300, {"nvfp4": p["serve_nvfp4_share"], "fp8": p["serve_fp8_share"]}, p["serve_bw_share"])


def demo2_data(params=None, n=None):
    """The student's demo-2 data (their seed, degrees of freedom and scale), n values (default theirs)."""
    p = _params(params)
    return demo_weights(p["demo2_n"] if n is None else n, p["demo2_seed"], p["demo2_df"], p["demo2_scale"])


@lru_cache(maxsize=8)
def _sweep_sample(seed: int, df: float, scale: float):
    """The largest sample of the size sweep: every smaller sample of the same data (the sweep's 2^12,
    the student's demo2_n) is its prefix, since the generator draws value after value."""
    x = demo_weights(SIZE_SWEEP[-1], seed, df, scale)
    x.flags.writeable = False
    return x


def demo2_prefix(params=None, n=None):
    """demo2_data(params, n) for n up to the sweep's largest, sliced from the one shared sample."""
    p = _params(params)
    n = p["demo2_n"] if n is None else n
    if n > SIZE_SWEEP[-1]:
        return demo2_data(p, n)
    return _sweep_sample(p["demo2_seed"], p["demo2_df"], p["demo2_scale"])[:n]


def size_growth(params=None) -> dict[str, float]:
    """q10: each scheme's relative error at the sweep's largest size minus at its smallest (fractions).
    MXFP4's E8M0 blocks are local to each block: the small sample's quantization is a prefix of the
    large one's, so it is sliced, not recomputed. Cached per data (the key and `check` both ask)."""
    p = _params(params)
    return dict(_size_growth(p["demo2_seed"], p["demo2_df"], p["demo2_scale"]))


def _size_growth(seed: int, df: float, scale: float) -> dict[str, float]:
    return {scheme: sweep_growth(seed, df, scale, scheme) for scheme, _ in SIZE_OPTIONS.values()}


@lru_cache(maxsize=256)
def sweep_growth(seed: int, df: float, scale: float, scheme: str) -> float:
    """One scheme's error growth over the size sweep on the data (seed, df, scale); the variant draw
    (variants._demo2_seed) asks for per-tensor FP4's first, the key for all four."""
    large = _sweep_sample(seed, df, scale)
    small = large[:SIZE_SWEEP[0]]
    q_large = quantize(large, scheme)
    q_small = q_large[:SIZE_SWEEP[0]] if scheme == "mxfp4" else quantize(small, scheme)
    return relative_error(q_large, large) - relative_error(q_small, small)


def tile_margins(real: dict[str, float]) -> dict[str, float]:
    """The leads (percentage points of Y's error) of what is read off a tile: the rotation's rescue of
    per-tensor FP4 (q22 − q24), its effect on NVFP4 (q25), and the bit-budget lab's best configuration
    within the budget over the second (q27 discusses it)."""
    within = sorted(real[letter] for letter, ((block, _), _) in BUDGET_OPTIONS.items() if format_bits(block) <= BIT_BUDGET)
    return {"q24_rotated_fp4_tensor_error": 100 * (real["fp4_tensor"] - real["fp4_tensor rotated"]),  # q24 < q22
            "q25_rotation_nvfp4": 100 * abs(real["nvfp4 rotated"] - real["nvfp4"]),
            "budget_lab": 100 * (within[1] - within[0])}


def ablation_errors(x, blocks=ABLATION_BLOCKS) -> dict[tuple[int, str], float]:
    """Relative error of FP4 block scaling for each (block size, scale format) of the 2 × 2 ablation."""
    return {(block, scale): relative_error(quantize(x, "mxfp4", block_size=block, scale_format=scale), x)
            for block in blocks for scale in ABLATION_SCALES}


def h100_exp_on_tensor_basis() -> float:
    """H100's ex2/s on the basis of its tensor peaks: 132 SMs × 16 ex2/clk × 1.83 GHz."""
    return hw_specs.H100_SXM5_SMS * hw_specs.EX2_PER_SM_PER_CLK["Hopper"] * hw_specs.H100_SXM5_BOOST_HZ


def attention_time_per_score(chip, precision: str, d_qk: int, d_v: int, *, overlap: bool = True,
                             mma_efficiency: float = 1.0) -> float:
    """The demo-3 model of one score's time, with its two bounds: exp and matmul overlap perfectly
    (a bottleneck model, the longer of the two) or run one after the other (their sum)."""
    t_exp = 1 / chip.exp_per_s
    t_mma = flops_per_exp(d_qk, d_v) / (mma_efficiency * chip.peak_flops(precision))
    return max(t_exp, t_mma) if overlap else t_exp + t_mma


def model_speedup(*, overlap: bool, d_qk: int = MEASURED_D_QK, d_v: int = MEASURED_D_V,
                  chips: tuple[str, str] = ("B200", "B300")) -> float:
    """old → new FP8 attention speed-up of the model; by default B200 → B300 on the shape NVIDIA measured."""
    old, new = (CHIPS[name] for name in chips)
    return (attention_time_per_score(old, "fp8", d_qk, d_v, overlap=overlap)
            / attention_time_per_score(new, "fp8", d_qk, d_v, overlap=overlap))


def mma_efficiency_for_measured_gain(sfu_share: float = 1.0) -> float:
    """The share of peak MMA with which the overlap model's B200 → B300 speed-up on the measured
    shape equals the measured one, the SFUs reaching `sfu_share` of their exp peak, with B200 still
    exp-bound and B300 matmul-bound (checked)."""
    t_b200 = 1 / (sfu_share * B200.exp_per_s)
    t_b300 = t_b200 / MEASURED_FP8_FORWARD_GAIN
    efficiency = flops_per_exp(MEASURED_D_QK, MEASURED_D_V) / (B300.peak_flops("fp8") * t_b300)
    shape = (MEASURED_D_QK, MEASURED_D_V)
    t_mma_b200 = attention_time_per_score(B200, "fp8", *shape, mma_efficiency=efficiency, overlap=False) - 1 / B200.exp_per_s
    assert t_mma_b200 < t_b200, "B200 must stay exp-bound"
    assert 1 / (sfu_share * B300.exp_per_s) < t_b300, "B300 must be matmul-bound"
    return efficiency


def measured_position() -> str:
    """Where NVIDIA's measured gain lies against the two bounds of the model (the option's name)."""
    low, high = sorted((model_speedup(overlap=True), model_speedup(overlap=False)))
    return "above" if MEASURED_FP8_FORWARD_GAIN > high else "below" if MEASURED_FP8_FORWARD_GAIN < low else "between"


def emulation_times(params=None) -> dict[str, float]:
    """q16b on B200, FP8, the software shape, per score in units of the SFU-only exp time: the tensor cores'
    time, 1 / (t_exp / t_mma), and the exp's at the best split s, where the SFU's 1 − s equals the FMA pipe's
    (a + s·c) / f (f: FMA-pipe results over SFU exp2 per SM and clock): (a + c) / (f + c)."""
    p = _params(params)
    poly, softmax = p["exp_emulation"]
    pipes = FP32_FMA_PER_SM_PER_CLK["Blackwell"] / EX2_PER_SM_PER_CLK["Blackwell"]
    return {"tensor": 1 / exp_ratio(B200, "fp8", *p["software_shape"]), "balanced": (softmax + poly) / (pipes + poly)}


def emulated_exp_time(params=None) -> float:
    """q16b: attention's time per score, over its time with every exp on the SFU, when the best share moves to
    the FMA pipe: the three units overlap, so it is the larger of the tensor cores' and the balanced exp's."""
    return max(emulation_times(params).values())


ONLINE_HADAMARD = 16  # q25w: the rotation's order, one NVFP4 block (NVIDIA's NVFP4 recipe)


def fp32_pipe_results_per_s() -> float:
    """B200's FMA-pipe results per second on the exp table's basis (its SMs × clock = exp/s over ex2 per SM and clock)."""
    return B200.exp_per_s / EX2_PER_SM_PER_CLK["Blackwell"] * FP32_FMA_PER_SM_PER_CLK["Blackwell"]


def online_rotation_width(params=None) -> float:
    """q25w: the smallest output width N of Y = X·Wᵀ (B200, NVFP4) at which rotating X online costs at most the
    budget's share of the GEMM's time. A fast Walsh–Hadamard transform of order h takes h·log2(h) additions and
    subtractions per h values (log2 h levels of h/2 butterflies, an add and a subtract each) on the FMA pipe; the GEMM
    does 2·N FLOP per value of X on the tensor cores. M and K cancel: N = ops per value · F / (2 · R · budget)."""
    p = _params(params)
    budget, share = p["online_rotation"]
    ops_per_value = math.log2(ONLINE_HADAMARD)
    flops = B200.peak_flops("nvfp4") * share
    return ops_per_value * flops / (2 * fp32_pipe_results_per_s() * budget / 100)


def wgrad_rotation_share(params=None) -> float:
    """q25x: the share of the weight-gradient GEMM dW = dYᵀ·X (B200, NVFP4, M tokens) that rotating both of its
    inputs online takes: NVIDIA's recipe rotates dY (M × N) and X (M × K) along M, the summed dimension, 16 values at
    a time; neither is a stored weight. log2(16) FMA-pipe results a value against 2·M·N·K FLOP: M cancels."""
    p = _params(params)
    k, n = p["wgrad_layer"]
    _, share = p["online_rotation"]
    rotation = math.log2(ONLINE_HADAMARD) * (n + k) / fp32_pipe_results_per_s()
    return rotation / (2 * n * k / (B200.peak_flops("nvfp4") * share))


def decode_intensity(batch: int = 1) -> float:
    """Decode of `batch` sequences, weights only: FLOP per byte of NVFP4 weights read."""
    return batch * FLOP_PER_PARAM_PER_TOKEN / BYTES_PER_ELEM["nvfp4"]


def decode_batch_at_ridge(activations: str, params=None) -> float:
    """The batch at which weight-only decode reaches the serving B300's ridge, for W4A4 or W4A8."""
    return ridge_point(serve_chip(params), DECODE_PRECISIONS[activations]) / decode_intensity()


def kv_bytes_per_token(params=None) -> float:
    """Bytes of K and V one token of context holds, per sequence: 2 × layers × KV heads × d × bytes."""
    p = _params(params)
    return 2 * p["kv_layers"] * p["kv_heads"] * p["kv_head_dim"] * BYTES_PER_ELEM[KV_PRECISION]


def kv_equal_weights_context(params=None) -> float:
    """The context length L at which one decode step of kv_batch sequences reads as many KV bytes as
    weight bytes (the weights are read once per step for the whole batch, the KV once per sequence)."""
    p = _params(params)
    return p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"] / (p["kv_batch"] * kv_bytes_per_token(p))


def growth_step(params=None) -> dict:
    """q03: the trend row of the student's generation step (the new chip at NVFP4 over the base)."""
    base, new = _params(params)["growth_pair"]
    return trend_row(CHIPS[new], "nvfp4", base=CHIPS[base])


def bottleneck_ratio(params=None) -> float:
    """q13: t_exp / t_mma of the student's chip, precision and head shape."""
    chip, precision, d_qk, d_v = _params(params)["bottleneck_case"]
    return exp_ratio(CHIPS[chip], precision, d_qk, d_v)


def bottleneck_ratios(params=None) -> tuple[float, ...]:
    """q13's t_exp / t_mma on each basis a student may take H100's exp throughput on: the table's
    exp_per_s and, for H100, the throughput on the basis of its tensor peaks (q15); one ratio otherwise."""
    chip, precision, d_qk, d_v = _params(params)["bottleneck_case"]
    ratios = (exp_ratio(CHIPS[chip], precision, d_qk, d_v),)
    if chip == "H100":
        ratios += (H100.peak_flops(precision) / flops_per_exp(d_qk, d_v) / h100_exp_on_tensor_basis(),)
    return ratios


def bottleneck_lead(params=None) -> float:
    """q13's margin: the smallest relative distance of t_exp / t_mma from 1 over the bases of
    bottleneck_ratios, or 0 when the bases disagree on the bottleneck."""
    ratios = bottleneck_ratios(params)
    if len({r > 1 for r in ratios}) > 1:
        return 0.0
    return min(abs(r - 1) for r in ratios)


def usable_hbm() -> float:
    """The bytes of the serving B300's HBM weights and KV cache may fill (the rest: runtime, activations)."""
    return USABLE_HBM * B300.mem_cap


def decode_context_limit(activations: str, params=None) -> float:
    """The longest context per sequence at which decode (weights and KV cache read every step) can reach
    the serving B300's ridge for W4A4 or W4A8 with the weights and the whole batch's KV in the usable
    HBM and at most max_batch sequences (what the serving framework runs at once). Per step: 2P·B FLOP over
    W + B·L·k bytes; reaching the ridge R needs B >= R·W / (2P − R·L·k). At that batch W + B·L·k <= C
    holds up to L = 2P·(1 − W/C) / (R·k), and B <= B_max up to L = (2P − R·W / B_max) / (R·k): the shorter."""
    p = _params(params)
    params_count = p["model_params_b"] * 1e9
    weights = params_count * BYTES_PER_ELEM["nvfp4"]
    ridge = ridge_point(serve_chip(p), DECODE_PRECISIONS[activations])
    flop_per_token = FLOP_PER_PARAM_PER_TOKEN * params_count
    fits = flop_per_token * (1 - weights / usable_hbm()) / (ridge * kv_bytes_per_token(p))
    runs = (flop_per_token - ridge * weights / p["max_batch"]) / (ridge * kv_bytes_per_token(p))
    return min(fits, runs)


def boundary_batch(activations: str, params=None) -> float:
    """The batch on q09f's boundary (W4A4) or W4A8's: R·C / 2P where the HBM ends the reach, max_batch where
    the framework does."""
    p = _params(params)
    flop_per_token = FLOP_PER_PARAM_PER_TOKEN * p["model_params_b"] * 1e9
    return min(ridge_point(serve_chip(p), DECODE_PRECISIONS[activations]) * usable_hbm() / flop_per_token,
               float(p["max_batch"]))


def service_batch(params=None) -> float:
    """q09e's batch: q09's weights-only batch, unless the weights and that many sequences' KV cache of the
    service's context overflow the usable HBM; then the largest batch that fits, (C − W) / (L·k)."""
    p = _params(params)
    weights = p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"]
    fits = (usable_hbm() - weights) / (p["service_context"] * kv_bytes_per_token(p))
    return min(decode_batch_at_ridge("W4A4", p), fits)


def service_bytes(params=None) -> float:
    """What one decode step of q09e reads, and what its batch holds in HBM: W + B·L·k (at most usable_hbm())."""
    p = _params(params)
    weights = p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"]
    return weights + service_batch(p) * p["service_context"] * kv_bytes_per_token(p)


def ridge_share_with_kv(params=None) -> float:
    """q09e: the share of the NVFP4 ridge W4A4 decode reaches at q09e's batch (service_batch) once each
    sequence reads its KV cache of the service's context: the intensity 2P·B / (W + B·L·k) over R. At
    q09's batch (2P·B = R·W, when it fits) that is W / (W + B·L·k)."""
    p = _params(params)
    flop = FLOP_PER_PARAM_PER_TOKEN * p["model_params_b"] * 1e9 * service_batch(p)
    return flop / service_bytes(p) / ridge_point(serve_chip(p), "nvfp4")


def chunked_prefill_tokens(params=None) -> float:
    """q09j: the prompt tokens one decode step of q09e can take along without growing longer (chunked prefill).
    The step is memory-bound: it lasts (W + B·L·k) / BW, in which the tensor cores could do R·(W + B·L·k)
    FLOP; decode uses 2P·B of it, and a prompt token 2P more on the same weights (its own attention and the
    KV cache it writes are left out): R·(W + B·L·k) / 2P − B tokens."""
    p = _params(params)
    flop_per_token = FLOP_PER_PARAM_PER_TOKEN * p["model_params_b"] * 1e9
    return ridge_point(serve_chip(p), "nvfp4") * service_bytes(p) / flop_per_token - service_batch(p)


def decode_design(params=None) -> str:
    """q09g: at the service's context, which precision reaches its ridge within the HBM (the option's name)."""
    p = _params(params)
    context = p["service_context"]
    if context <= decode_context_limit("W4A4", p):
        return "W4A4"
    return "W4A8" if context <= decode_context_limit("W4A8", p) else "neither"


def service_step_seconds(batch: float, params=None) -> float:
    """One W4A4 decode step of `batch` sequences at the service's context on the serving B300, by the roofline:
    the longer of computing 2P·B FLOP at the NVFP4 rate and reading W + B·L·k bytes at the bandwidth."""
    p = _params(params)
    chip, params_count = serve_chip(p), p["model_params_b"] * 1e9
    weights = params_count * BYTES_PER_ELEM["nvfp4"]
    compute = FLOP_PER_PARAM_PER_TOKEN * params_count * batch / chip.peak_flops("nvfp4")
    memory = (weights + batch * p["service_context"] * kv_bytes_per_token(p)) / chip.mem_bw
    return max(compute, memory)


def service_limits(params=None) -> dict[str, float]:
    """q09h: the largest batch each limit allows. The usable HBM: (C − W) / (L·k). The promised rate T
    (a step at most 1 / T): on the compute roof F / (2P·T), on the memory roof (BW / T − W) / (L·k)."""
    p = _params(params)
    chip, params_count = serve_chip(p), p["model_params_b"] * 1e9
    weights = params_count * BYTES_PER_ELEM["nvfp4"]
    per_sequence = p["service_context"] * kv_bytes_per_token(p)
    rate = p["service_rate"]
    return {"hbm": (usable_hbm() - weights) / per_sequence,
            "rate_compute": chip.peak_flops("nvfp4") / (FLOP_PER_PARAM_PER_TOKEN * params_count * rate),
            "rate_memory": (chip.mem_bw / rate - weights) / per_sequence}


def promised_rate_batch(params=None) -> float:
    """q09h: the largest batch every limit allows, the sequences the service can run at once."""
    return min(service_limits(params).values())


def speculative_throughputs(params=None) -> dict[int, float]:
    """q09i: tokens/s of the whole batch (`spec_batch` sequences at the service's context, W4A4 on the serving
    B300) for each draft length γ of DRAFT_LENGTHS. One round: γ draft steps (the draft model's NVFP4 weights,
    its KV cache ignored), then one target step that checks γ + 1 tokens a sequence (2P·B·(γ + 1) FLOP, the
    weights and every sequence's KV cache read once); a round yields (1 − α^(γ+1)) / (1 − α) tokens a sequence."""
    p = _params(params)
    chip = serve_chip(p)
    params_count, draft = p["model_params_b"] * 1e9, p["draft_params_b"] * 1e9
    batch, accept = p["spec_batch"], p["draft_accept"]
    flops, bandwidth = chip.peak_flops("nvfp4"), chip.mem_bw

    def step(flop: float, read: float) -> float:
        return max(flop / flops, read / bandwidth)

    t_draft = step(FLOP_PER_PARAM_PER_TOKEN * draft * batch, draft * BYTES_PER_ELEM["nvfp4"])
    kv_read = batch * p["service_context"] * kv_bytes_per_token(p)
    return {gamma: batch * (1 - accept ** (gamma + 1)) / (1 - accept)
            / (gamma * t_draft + step(FLOP_PER_PARAM_PER_TOKEN * params_count * batch * (gamma + 1),
                                      params_count * BYTES_PER_ELEM["nvfp4"] + kv_read))
            for gamma in DRAFT_LENGTHS}


def speculative_speedup(params=None) -> float:
    """q09i: the best draft length's tokens/s over plain decode's (γ = 0): 1 when no draft pays."""
    throughputs = speculative_throughputs(params)
    return max(throughputs.values()) / throughputs[0]


def moe_step_bytes(params=None) -> float:
    """q09k: the NVFP4 weight bytes one decode step of `moe_batch` sequences reads on average: the part every token
    reads, and each routed expert some token of the batch picked (expected count E·(1 − (1 − k/E)^B) per layer)."""
    p = _params(params)
    shared, expert = variants.moe_parts(p)
    return (shared + variants.moe_expected_experts(p) * expert) * BYTES_PER_ELEM["nvfp4"]


def moe_tokens_per_s(params=None) -> float:
    """q09k: each sequence's tokens/s on the serving B300: one token a step, a step as long as its average weight
    read over the bandwidth (memory-bound: 2·active·B FLOP on those bytes lies far below the ridge)."""
    return serve_chip(params).mem_bw / moe_step_bytes(params)


TP_ACTIVATION_BYTES = BYTES_PER_ELEM["bf16"]  # q09l: the activations the all-reduces sum, in BF16


def tp_allreduce_batch(params=None) -> float:
    """q09l: the batch at which a decode step's all-reduce traffic over NVLink takes as long as reading the GPU's
    weight shard from HBM. Megatron-style tensor parallelism over N GPUs: two all-reduces a layer (after attention,
    after the MLP) of B × d_model BF16 values; a ring all-reduce sends 2(N − 1)/N of them from each GPU, at NVLink's
    one-direction rate (half the table's both-direction figure). Each GPU reads W / N of the weights."""
    p = _params(params)
    chip, gpus = serve_chip(p), p["tp_gpus"]
    shard_seconds = p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"] / gpus / chip.mem_bw
    width = p["query_heads"] * p["kv_head_dim"]
    per_sequence = 2 * p["kv_layers"] * 2 * (gpus - 1) / gpus * width * TP_ACTIVATION_BYTES / (chip.link_bw / 2)
    return shard_seconds / per_sequence


def decode_exp_over_kv_read(params=None) -> float:
    """q17b: in decode attention, the SFU's exp time over the HBM time of reading the KV cache. Per context
    token and KV head: G exps (one per query head of the group) against K and V of d values each:
    G / E over 2·d·b / BW, whatever the context length, the layers and the KV heads."""
    group, head_dim, kv_format = _params(params)["decode_attention"]
    return (group / B300.exp_per_s) / (2 * head_dim * BYTES_PER_ELEM[kv_format] / serve_chip(params).mem_bw)


def prefill_attention_ratio(params=None) -> float:
    """q17c: a causal prefill's attention FLOP (QKᵀ and PV, a prompt of the service's context L) over its weights'
    FLOP: every layer and query head scores token i against i tokens, L·(L + 1) / 2 scores, each with
    flops_per_exp(d, d) of matmul; the weights take 2P FLOP a token."""
    p = _params(params)
    context, head_dim = p["service_context"], p["kv_head_dim"]
    attention = p["kv_layers"] * p["query_heads"] * context * (context + 1) / 2 * flops_per_exp(head_dim, head_dim)
    weights = FLOP_PER_PARAM_PER_TOKEN * p["model_params_b"] * 1e9 * context
    return attention / weights


def fp4_zero_share(params=None) -> float:
    """q10a: the share of the student's demo-2 values per-tensor FP4 turns into 0 (the quantizer's own count)."""
    x = demo2_prefix(params)
    return zero_fraction(quantize(x, "fp4_tensor"), x)


def e8m0_blocks_that_clip(x, block: int = ABLATION_BLOCKS[-1]) -> float:
    """Share of nonzero blocks whose maximum, scaled by the E8M0 FLOOR scale 2^(floor(log2 amax) − 2),
    lands above 6 (in (6, 8)): there the grid is finer than NVFP4's and the cost is clipping."""
    amax = np.abs(x.reshape(-1, block)).max(axis=1)
    amax = amax[amax > 0]
    mantissa, _ = np.frexp(amax)  # amax = m · 2^e with m in [0.5, 1): scaled max = 8·m, in [4, 8)
    return float(np.mean(8 * mantissa > 6))


def rceil_quantize(a, block: int):
    """FP4 blocks with the E8M0 RCEIL scale 2^ceil(log2(amax / 6)): the block maximum never exceeds 6
    after scaling (no clipping), at the price of a coarser grid. ceil(log2) exactly, via np.frexp."""
    blocks = np.asarray(a, dtype=np.float64).reshape(-1, block)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    mantissa, exponent = np.frexp(amax / 6)  # amax / 6 = m · 2^e, m in [0.5, 1): ceil(log2) = e, or e − 1 at m = 0.5
    scale = np.where(amax > 0, np.ldexp(1.0, np.where(mantissa == 0.5, exponent - 1, exponent)), 1.0)
    return (to_e2m1(blocks / scale) * scale).reshape(np.shape(a))


def budget_quantize(a, block: int, scale: str):
    """One configuration of the bit-budget lab: FP4 elements, `block` values per scale of kind `scale`."""
    if scale == "rceil":
        return rceil_quantize(a, block)
    return quantize_matrix(a, "mxfp4", block_size=block, scale_format={"floor": "e8m0", "e4m3": "e4m3"}[scale])


@lru_cache(maxsize=1)
def _real_tensors():
    return load_real_tensors(REAL_TENSORS)[:2]


def real_tensors(params=None):
    """The student's tile of the real tensors: (X rows, W rows)."""
    p = _params(params)
    return real_slice(*_real_tensors(), p["real_tokens"], p["real_outputs"])


def real_tensor_errors(params=None) -> dict[str, float]:
    """Relative error of Y = X·Wᵀ on the student's tile of the real tensors: per scheme, plain and
    rotated (block Hadamard on the K dimension, applied to both operands: (XH)(WH)ᵀ = XWᵀ); and per
    bit-budget configuration. matmul_error's arithmetic, with the exact product computed once."""
    p = lecture_params() if params is None else params
    tile = {name: p[name] for name in ("real_tokens", "real_outputs", "rotation_size")}  # all the errors depend on
    return dict(_real_tensor_errors(json.dumps(tile, sort_keys=True)))


@lru_cache(maxsize=64)
def _real_tensor_errors(canonical: str) -> dict[str, float]:
    p = json.loads(canonical)
    x, w = real_tensors(p)
    y = (x.astype(np.float32) @ w.astype(np.float32).T).astype(np.float64)

    def error(xq, wq):  # = matmul_error(xq, wq, x, w)
        yq = (xq.astype(np.float32) @ wq.astype(np.float32).T).astype(np.float64)
        return float(np.linalg.norm(yq - y) / np.linalg.norm(y))

    h = block_hadamard(x.shape[1], p["rotation_size"])
    xh, wh = x @ h, w @ h
    errors = {}
    for scheme in ("fp4_tensor", "nvfp4"):
        errors[scheme] = error(quantize_matrix(x, scheme), quantize_matrix(w, scheme))
        errors[f"{scheme} rotated"] = error(quantize_matrix(xh, scheme), quantize_matrix(wh, scheme))
    for letter, ((block, scale), _) in BUDGET_OPTIONS.items():
        errors[letter] = error(budget_quantize(x, block, scale), budget_quantize(w, block, scale))
    return errors


def budget_choice(params=None) -> str:
    """The configuration with the lowest measured error among those within the bit budget."""
    errors = real_tensor_errors(params)
    within = [letter for letter, ((block, _), _) in BUDGET_OPTIONS.items() if format_bits(block) <= BIT_BUDGET]
    return min(within, key=errors.get)


def budget_frontier(params=None) -> list[str]:
    """The error-vs-bits frontier: configurations no other beats on both bits and error."""
    errors = real_tensor_errors(params)
    bits = {letter: format_bits(block) for letter, ((block, _), _) in BUDGET_OPTIONS.items()}
    return [a for a in BUDGET_OPTIONS if not any(bits[b] <= bits[a] and errors[b] < errors[a] for b in BUDGET_OPTIONS)]


def canonical(params) -> str:
    """The cache key of a parameter set: canonical JSON (None = LECTURE)."""
    return json.dumps(_params(params), sort_keys=True, separators=(",", ":"))


def answer_key(params=None) -> dict[str, float | str]:
    """Keys of every number and choice item for `params` (None = LECTURE): floats in the unit the
    question asks for, letters for choices."""
    return dict(_answer_key(canonical(params)))


@lru_cache(maxsize=512)  # a pure function of the sources and the parameters: computed once per variant
def _answer_key(canonical_params: str) -> dict[str, float | str]:
    keys = {**_number_keys(canonical_params), **_choice_keys(canonical_params)}
    return dict(sorted(keys.items()))  # in item order


def number_keys(params=None) -> dict[str, float]:
    """The keys of the number items only (`answer_key` without the choices: q10's size sweep is the
    costly part of a key, and the class statistics in the tests need only the numbers)."""
    return dict(_number_keys(canonical(params)))


def _choice_keys(canonical_params: str) -> dict[str, str]:
    p = json.loads(canonical_params)
    error_growth = size_growth(p)
    mla, mha = exp_ratio(B300, "fp8", *p["mla_shape"]), exp_ratio(B300, "fp8", 128, 128)
    mla_effect = "same" if math.isclose(mla, mha) else ("worse" if mla > mha else "better")
    real = real_tensor_errors(p)
    numbers = _number_keys(canonical_params)
    return {
        "q03_least_grown": _letter(LEAST_GROWN_OPTIONS,
                                   min((name for name, _ in LEAST_GROWN_OPTIONS.values()), key=growth_step(p).get)),
        # a kernel's wall is the ridge it must reach over the intensity it has: an FP8 kernel on both chips
        # meets the same-precision ratio; one that keeps its FP8 bytes but computes in NVFP4 on B300
        # meets the mixed ratio (its FLOP/B is unchanged, the ridge it must reach is NVFP4's)
        "q06_memory_wall": _letter(WALL_OPTIONS, {"fp8": "same_precision", "nvfp4_on_chip": "mixed_precision"}[p["wall_kernel"]]),
        "q09g_decode_precision": _letter(DECODE_DESIGN_OPTIONS, decode_design(p)),
        "q10_size_sensitive": _letter(SIZE_OPTIONS, max(error_growth, key=error_growth.get)),
        "q13_bottleneck": _letter(BOTTLENECK_OPTIONS, "exp" if bottleneck_ratio(p) > 1 else "mma"),
        "q14_mla_effect": _letter(MLA_OPTIONS, mla_effect),
        "q18c_measured_position": _letter(POSITION_OPTIONS, measured_position()),
        "q25_rotation_nvfp4": _letter(ROTATION_OPTIONS,
                                      "smaller" if real["nvfp4 rotated"] < real["nvfp4"] else "larger"),
    }


@lru_cache(maxsize=512)
def _number_keys(canonical_params: str) -> dict[str, float]:
    p = json.loads(canonical_params)
    h100_run, b300_run = run_chips(p)
    b300 = trend_row(b300_run, "nvfp4", base=h100_run)
    x = demo2_prefix(p)
    big, little = p["ablation_blocks"]
    ablation = ablation_errors(x, (big, little))
    forward = exp_ratio(B200, "fp8", *p["software_shape"])
    d_qk, d_v = p["backward_shape"]
    backward = B200.peak_flops("fp8") / (BACKWARD_FLOPS_PER_EXP["d_qk"] * d_qk + BACKWARD_FLOPS_PER_EXP["d_v"] * d_v) \
        / B200.exp_per_s
    real = real_tensor_errors(p)
    (d_qk18, d_v18), chips18 = p["speedup_shape"], tuple(p["speedup_chips"])
    same = ridge_point(b300_run, "fp8") / ridge_point(h100_run, "fp8")
    mixed = b300["ridge"] / ridge_point(h100_run, "fp8")
    # a kernel that moves its data from FP8 to NVFP4 also moves fewer bytes per value: its own FLOP/B
    # rises by bytes(fp8) / bytes(nvfp4), so the intensity it still lacks grows only mixed × that inverse
    wall_for_nvfp4_kernel = mixed * BYTES_PER_ELEM["nvfp4"] / BYTES_PER_ELEM["fp8"]
    return {
        "q01_compute_headline": b300["compute"],
        "q02_format_gain": b300["compute"] / b300["fp8"],
        "q04_ridge_same_precision": same,
        "q05_ridge_mixed_precision": mixed,
        "q06b_wall_for_nvfp4_kernel": wall_for_nvfp4_kernel,
        # batch-1 decode reads every weight once per token and does one multiply-add with it: about 2 FLOP/B on
        # both chips, far below either ridge, so a token takes the weights' bytes over the bandwidth
        "q06c_decode_generation_speedup": b300_run.mem_bw / h100_run.mem_bw * BYTES_PER_ELEM["fp8"] / BYTES_PER_ELEM["nvfp4"],
        "q07_decode_intensity": decode_intensity(p["decode_batch"]),
        "q08_decode_tokens_per_s": serve_chip(p).mem_bw / (p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"]),
        "q09_decode_batch": decode_batch_at_ridge("W4A4", p),
        "q09b_decode_batch_w4a8": decode_batch_at_ridge("W4A8", p),
        "q09c_kv_bytes_per_token": kv_bytes_per_token(p),
        "q09d_kv_equal_weights_context": kv_equal_weights_context(p),
        "q09e_ridge_share_with_kv": 100 * ridge_share_with_kv(p),
        "q09j_chunked_prefill_tokens": chunked_prefill_tokens(p),
        "q09f_w4a4_context_limit": decode_context_limit("W4A4", p),
        "q09h_service_batch": promised_rate_batch(p),
        "q09i_speculative_speedup": speculative_speedup(p),
        "q09k_moe_tokens_per_s": moe_tokens_per_s(p),
        "q09l_tp_allreduce_batch": tp_allreduce_batch(p),
        "q10a_fp4_zero_share": 100 * fp4_zero_share(p),
        "q11_scale_format_gain": 100 * (ablation[little, "e8m0"] - ablation[little, "e4m3"]),
        "q12_block_size_gain": 100 * (ablation[big, "e4m3"] - ablation[little, "e4m3"]),
        # the share of one octave (amax / s in [4, 8)) that lies above 6, were block maxima log-uniform
        "q12p_e8m0_clip_prediction": 100 * math.log2(8 / 6),
        "q12b_e8m0_clipped_blocks": 100 * e8m0_blocks_that_clip(x, little),
        "q15_h100_tensor_basis": 100 * H100.peak_flops("bf16") / flops_per_exp(*p["basis_shape"])
        / h100_exp_on_tensor_basis(),
        "q16_software_exp_share": 100 * max(0.0, 1 - 1 / forward),
        "q16b_emulated_exp_time": 100 * emulated_exp_time(p),
        "q17_backward_ratio": 100 * backward,
        "q17b_decode_exp_vs_kv": 100 * decode_exp_over_kv_read(p),
        "q17c_prefill_attention_ratio": 100 * prefill_attention_ratio(p),
        "q18_model_speedup": model_speedup(overlap=True, d_qk=d_qk18, d_v=d_v18, chips=chips18),
        "q18b_serial_speedup": model_speedup(overlap=False, d_qk=d_qk18, d_v=d_v18, chips=chips18),
        "q19_mma_efficiency": 100 * mma_efficiency_for_measured_gain(p["sfu_share"]),
        "q22_real_fp4_tensor_error": 100 * real["fp4_tensor"],
        "q23_real_nvfp4_error": 100 * real["nvfp4"],
        "q24_rotated_fp4_tensor_error": 100 * real["fp4_tensor rotated"],
        "q25w_online_rotation_width": online_rotation_width(p),
        "q25x_wgrad_rotation_share": 100 * wgrad_rotation_share(p),
        **end_to_end_keys(p),
    }


# ---------------------------------------------------------------- the end-to-end lab (q34a–q35)
ENCODER = Path(__file__).resolve().parents[2] / "assignments" / "lec01_codesign" / ENCODER_FILE
END_UNIT = 1e4  # the prompts ask for 1 − cos in units of 10⁻⁴


@lru_cache(maxsize=1)
def end_to_end() -> dict[str, dict[str, float]]:
    """The reference forward of every END_FORMATS entry over the shipped sentences: per format, the
    mean 1 − cos of its sentence embeddings to FP32's and its pairs' rank agreement with FP32's.
    The same for every student (one model, one set of sentences): computed once per course (the
    grader's key store, keyed by the sources and the encoder file), read by every later process."""
    from autograder.engine.key_cache import cached_value

    return cached_value("lec01_codesign", "end_to_end", _end_to_end)


def _end_to_end() -> dict[str, dict[str, float]]:
    model, _, pairs, _ = load_encoder(ENCODER)
    embeddings = {name: encode(model, linear_weights(model, scheme, rotate), scheme, rotate)
                  for name, (scheme, rotate) in END_FORMATS.items()}
    fp32 = embeddings["fp32"]
    similarity = pair_similarities(fp32, pairs)
    return {name: {"deficit": end_deficit(e, fp32), "agreement": rank_agreement(pair_similarities(e, pairs), similarity)}
            for name, e in embeddings.items()}


def end_tile_errors(params=None) -> dict[str, float]:
    """The student's tile of the real tensors under each quantized END_FORMATS entry (matmul_error)."""
    x, w = real_tensors(params)
    errors = {}
    for name, (scheme, rotate) in END_FORMATS.items():
        if scheme is not None:
            xs, ws = (rotate16(x), rotate16(w)) if rotate else (x, w)
            errors[name] = matmul_error(quantize_matrix(xs, scheme), quantize_matrix(ws, scheme), x, w)
    return errors


def end_prediction(params=None, name: str = "nvfp4") -> float:
    """q34p (and, over FP8's, q35p and q34r): a format's 1 − cos if the embedding's error were the
    tile error times one factor for every format (random direction): 1 − cos ≈ r²/2 grows with the
    square, calibrated on FP8's measurement."""
    tile = end_tile_errors(params)
    return end_to_end()["fp8_tensor"]["deficit"] * (tile[name] / tile["fp8_tensor"]) ** 2


def end_exact_prediction(params=None, name: str = "fp4_tensor") -> float:
    """The same random-direction model without the small-error approximation: with r² = 2 × end_prediction
    (the r²/2 model's 1 − cos), 1 − cos = 1 − 1/√(1 + r²), below r²/2 for every r > 0. A measurement above
    the r²/2 prediction is therefore not the approximation failing."""
    return 1 - 1 / math.sqrt(1 + 2 * end_prediction(params, name))


@lru_cache(maxsize=1)
def end_weight_zero_shares(scheme: str = "fp4_tensor") -> dict[str, tuple[float, int]]:
    """Per linear layer of the encoder: the share of its weights `scheme` turns into 0 (the quantizer's own
    count) and the layer's number of weights."""
    model = load_encoder(ENCODER)[0]
    return {name: (zero_fraction(quantize_matrix(w, scheme), w), w.size) for name, w in linear_weights(model).items()}


def end_to_end_keys(params=None) -> dict[str, float]:
    """The number keys of q34a–q35. q35p and q34r predict a format's 1 − cos over FP8's from the
    tile's errors alone, so a quantize too slow for the whole model still answers them."""
    measured, predicted = end_to_end(), end_prediction(params)
    fp4_ratio, h16_ratio = (end_prediction(params, name) / measured["fp8_tensor"]["deficit"] for name in ("fp4_tensor", "nvfp4 + H16"))
    return {
        "q34a_fp8_end_deficit": END_UNIT * measured["fp8_tensor"]["deficit"],
        "q34p_nvfp4_end_prediction": END_UNIT * predicted,
        "q35p_fp4_end_prediction": fp4_ratio,
        "q34r_h16_end_prediction": h16_ratio,
        # what verifies them: the measured ratios
        "q35g_fp4_end_over_fp8": measured["fp4_tensor"]["deficit"] / measured["fp8_tensor"]["deficit"],
        "q34h_h16_end_over_fp8": measured["nvfp4 + H16"]["deficit"] / measured["fp8_tensor"]["deficit"],
        "q34b_nvfp4_end_deficit": END_UNIT * measured["nvfp4"]["deficit"],
        "q35_fp4_rank_agreement": 100 * measured["fp4_tensor"]["agreement"],
        "q35m_nvfp4_weight_mb": nvfp4_weight_mb(),
    }


@lru_cache(maxsize=1)
def nvfp4_weight_mb() -> float:
    """q35m: the 36 linear layers' weights in NVFP4 (4-bit elements, one 8-bit scale per 16), in MB."""
    model = load_encoder(ENCODER)[0]
    return sum(w.size for w in linear_weights(model).values()) * format_bits(16) / 8 / 1e6
