"""What each item of lecture 1 teaches, as bounds every student's variant keeps (`check` samples
1,000 variants and names the item, the variant and the numbers of any bound that breaks).

Three kinds: the drawn world is a real chip and a real model (shares of the spec a chip sustains,
a model's shape against its parameter count); a number item's lesson holds (q04 >= 1: the
same-precision ridge grows); a choice's key leads the runner-up by `variants.MARGINS` (a student who
reasons right is never marked wrong by a draw that makes two options equal).
"""

from __future__ import annotations

import math

from authoring.lessons import Lesson, margin
from hw_specs import B200, B300, BYTES_PER_ELEM
from solutions.lec01_codesign import answers, variants
from solutions.lec01_codesign.codesign import exp_ratio, ridge_point, trend_row
from solutions.lec01_codesign.handout_data import LEAST_GROWN_OPTIONS, MEASURED_FP8_FORWARD_GAIN
from solutions.lec01_codesign.variants import MARGINS

TREND = ("h100_fp8_share", "h100_bw_share", "b300_fp8_share", "b300_nvfp4_share", "b300_bw_share")
SERVE = ("serve_fp8_share", "serve_nvfp4_share", "serve_bw_share")
MODEL = ("model_params_b", "kv_layers", "kv_heads", "kv_head_dim", "kv_batch")
TILE = ("real_tokens", "real_outputs", "rotation_size")
DEMO2 = ("demo2_seed", "demo2_df", "demo2_scale")
MOE = ("moe_model", "moe_batch")


def _measured(p: dict) -> bool:
    """A chip as a team measured it: every share below the spec sheet's 1 (LECTURE is the spec sheet)."""
    return any(p[name] != 1.0 for name in TREND + SERVE)


def _real(p: dict) -> dict[str, float]:
    return answers.tile_margins(answers.real_tensor_errors(p))


def _least_grown_lead(p: dict, k: dict) -> float:
    growth = sorted(answers.growth_step(p)[name] for name, _ in LEAST_GROWN_OPTIONS.values())
    return growth[1] / growth[0] - 1


def _size_lead(p: dict, k: dict) -> float:
    growth = answers.size_growth(p)
    return 100 * (growth["fp4_tensor"] - max(v for s, v in growth.items() if s != "fp4_tensor"))


def _position_lead(p: dict, k: dict) -> float:
    bounds = [answers.model_speedup(overlap=overlap) for overlap in (True, False)]
    return min(abs(MEASURED_FP8_FORWARD_GAIN - b) for b in bounds) / MEASURED_FP8_FORWARD_GAIN


def _service_lead(p: dict, k: dict) -> float:
    bounds = [answers.decode_context_limit(activations, p) for activations in ("W4A4", "W4A8")]
    return min(abs(p["service_context"] / bound - 1) for bound in bounds)


def _batch1_decode_over_ridge(p: dict) -> float:
    """q06c: one multiply-add (2 FLOP) per weight read, on the nearer of the two chips' ridges."""
    h100_run, b300_run = answers.run_chips(p)
    return max(2 / BYTES_PER_ELEM["fp8"] / ridge_point(h100_run, "fp8"),
               2 / BYTES_PER_ELEM["nvfp4"] / ridge_point(b300_run, "nvfp4"))


def _moe_wrong_lead(p: dict, k: dict) -> float:
    """q09k: how far the key lies (relative) from the tokens/s of a step that reads only the active parameters, every
    expert (the total), or B·k distinct experts up to E (no two tokens share one)."""
    _, total, active, experts, top_k = p["moe_model"]
    shared, expert = variants.moe_parts(p)
    key_bytes = shared + variants.moe_expected_experts(p) * expert
    wrong = (active * 1e9, total * 1e9, shared + min(p["moe_batch"] * top_k, experts) * expert)
    return min(abs(key_bytes / bytes_read - 1) for bytes_read in wrong)


def _moe_slip_lead(p: dict, k: dict) -> float:
    """q09k: how far the key lies (relative) from the bytes of two near misses of the stated routing: picks with
    replacement, 1 − (1 − 1/E)^(B·k) (the same count when k = 1), and the approximation 1 − e^(−B·k/E)."""
    _, _, _, experts, top_k = p["moe_model"]
    shared, expert = variants.moe_parts(p)
    key_bytes = shared + variants.moe_expected_experts(p) * expert
    reach = p["moe_batch"] * top_k
    slips = [1 - math.exp(-reach / experts)] + ([1 - (1 - 1 / experts) ** reach] if top_k > 1 else [])
    return min(abs(key_bytes / (shared + experts * share * expert) - 1) for share in slips)


def _moe_over_ridge(p: dict) -> float:
    """q09k: the step's FLOP/B (2 FLOP per active parameter and sequence over the bytes it reads) over the NVFP4 ridge."""
    active = p["moe_model"][2] * 1e9
    return 2 * active * p["moe_batch"] / answers.moe_step_bytes(p) / ridge_point(answers.serve_chip(p), "nvfp4")


def _tp_wrong_lead(p: dict) -> float:
    """q09l: how far (relative) a ring counted as moving the data once, or twice, or NVLink's both-direction figure
    taken as one direction's, lands from the key: the ring's 2(N − 1)/N against 1 and 2, and a factor 2."""
    ring = 2 * (p["tp_gpus"] - 1) / p["tp_gpus"]
    return min(abs(ring / 1 - 1), abs(ring / 2 - 1), 1.0)


def _weights(p: dict) -> float:
    return p["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"]


_B300_FORMAT_PEAK_RATIO = B300.peak_flops("nvfp4") / B300.peak_flops("fp8")

LESSONS: tuple[Lesson, ...] = (
    # --- the drawn world: real chips (q01–q09b) and a real model (q09c–q09d)
    Lesson("q01_compute_headline", "H100's FP8 GEMM sustains a real share of its peak",
           lambda p, k: p["h100_fp8_share"], *variants.GEMM_SHARE, reads=("h100_fp8_share",), applies=_measured),
    Lesson("q01_compute_headline", "B300's FP8 GEMM sustains a real share of its peak",
           lambda p, k: p["b300_fp8_share"], *variants.GEMM_SHARE, reads=("b300_fp8_share",), applies=_measured),
    Lesson("q02_format_gain", "B300's NVFP4 sustains no larger a share of its peak than FP8 does (and at least 0.7 of it)",
           lambda p, k: p["b300_nvfp4_share"] / p["b300_fp8_share"], *variants.LOWER_PRECISION_SHARE,
           reads=("b300_fp8_share", "b300_nvfp4_share"), applies=_measured),
    Lesson("q04_ridge_same_precision", "HBM sustains near its rating on H100",
           lambda p, k: p["h100_bw_share"], *variants.HBM_SHARE, reads=("h100_bw_share",), applies=_measured),
    Lesson("q04_ridge_same_precision", "HBM sustains near its rating on B300",
           lambda p, k: p["b300_bw_share"], *variants.HBM_SHARE, reads=("b300_bw_share",), applies=_measured),
    Lesson("q04_ridge_same_precision", "the same team's kernels reach nearly the same FP8 share on both chips (B300 / H100)",
           lambda p, k: p["b300_fp8_share"] / p["h100_fp8_share"], variants.SAME_TEAM_FP8[0] - 0.002,
           variants.SAME_TEAM_FP8[1] + 0.002, reads=("h100_fp8_share", "b300_fp8_share"), applies=_measured),
    Lesson("q04_ridge_same_precision", "the same team's streams reach nearly the same HBM share on both chips (B300 / H100)",
           lambda p, k: p["b300_bw_share"] / p["h100_bw_share"], variants.SAME_TEAM_HBM[0] - 0.002,
           variants.SAME_TEAM_HBM[1] + 0.002, reads=("h100_bw_share", "b300_bw_share"), applies=_measured),
    Lesson("q08_decode_tokens_per_s", "the serving B300's HBM sustains near its rating",
           lambda p, k: p["serve_bw_share"], *variants.HBM_SHARE, reads=("serve_bw_share",), applies=_measured),
    Lesson("q09_decode_batch", "the serving B300's FP8 GEMM sustains a real share of its peak",
           lambda p, k: p["serve_fp8_share"], *variants.GEMM_SHARE, reads=("serve_fp8_share",), applies=_measured),
    Lesson("q09_decode_batch", "the serving B300's NVFP4 sustains no larger a share than its FP8 (and at least 0.7 of it)",
           lambda p, k: p["serve_nvfp4_share"] / p["serve_fp8_share"], *variants.LOWER_PRECISION_SHARE,
           reads=("serve_fp8_share", "serve_nvfp4_share"), applies=_measured),
    Lesson("q09c_kv_bytes_per_token", "the model's width fits its parameter count (d_model = sqrt(params / 12 layers))",
           lambda p, k: variants.d_model(p), *variants.D_MODEL, reads=("model_params_b", "kv_layers")),
    Lesson("q09c_kv_bytes_per_token", "the KV width is at most half of d_model (two query heads per KV head or more)",
           lambda p, k: p["kv_heads"] * p["kv_head_dim"] / variants.d_model(p), high=0.5, reads=MODEL[:4]),
    Lesson("q09c_kv_bytes_per_token", "the model is as deep as dense LLMs of its width (d_model / layers)",
           lambda p, k: variants.d_model(p) / p["kv_layers"], *variants.D_MODEL_PER_LAYER, reads=("model_params_b", "kv_layers")),
    Lesson("q09c_kv_bytes_per_token", "the width holds no more query heads than dense LLMs use (d_model / head_dim)",
           lambda p, k: variants.query_heads(p), high=float(variants.MAX_QUERY_HEADS),
           reads=("model_params_b", "kv_layers", "kv_head_dim")),
    # --- number items: the lesson each one teaches
    Lesson("q01_compute_headline", "the headline is a gain", lambda p, k: k["q01_compute_headline"], low=1.0, reads=TREND),
    Lesson("q02_format_gain", "the format gains, never more than B300's NVFP4 / FP8 peak ratio",
           lambda p, k: k["q02_format_gain"], 1.0, _B300_FORMAT_PEAK_RATIO + 1e-9, reads=TREND),
    Lesson("q04_ridge_same_precision", "the same-precision ridge grows near the spec sheet's 1.058x (the team's shares nearly cancel)",
           lambda p, k: k["q04_ridge_same_precision"], 1.01, 1.21, reads=TREND),
    Lesson("q06b_wall_for_nvfp4_kernel", "the wall an NVFP4 kernel meets still grows",
           lambda p, k: k["q06b_wall_for_nvfp4_kernel"], low=1.0, reads=TREND),
    Lesson("q06c_decode_generation_speedup",
           "batch-1 decode lies far under the bandwidth roof on both chips (its FLOP/B over the ridge, FP8 on H100, NVFP4 on B300)",
           lambda p, k: _batch1_decode_over_ridge(p), high=0.05, reads=TREND),
    Lesson("q06c_decode_generation_speedup", "decode gains well under the compute headline (q06c / q01)",
           lambda p, k: k["q06c_decode_generation_speedup"] / k["q01_compute_headline"], high=0.9, reads=TREND),
    Lesson("q07_decode_intensity", "decode lies below the serving B300's NVFP4 ridge",
           lambda p, k: k["q07_decode_intensity"] / ridge_point(answers.serve_chip(p), "nvfp4"), high=1.0,
           reads=("decode_batch",) + SERVE),
    Lesson("q09b_decode_batch_w4a8", "W4A8 reaches its ridge at a smaller batch than W4A4",
           lambda p, k: k["q09b_decode_batch_w4a8"] / k["q09_decode_batch"], high=1.0, reads=SERVE),
    Lesson("q09d_kv_equal_weights_context", "at the crossover, weights and KV cache fit in the usable HBM",
           lambda p, k: (_weights(p) + p["kv_batch"] * k["q09d_kv_equal_weights_context"] * k["q09c_kv_bytes_per_token"])
           / (variants.USABLE_HBM * B300.mem_cap), high=1.0, reads=MODEL),
    Lesson("q09d_kv_equal_weights_context", "the crossover is a context a model serves",
           lambda p, k: k["q09d_kv_equal_weights_context"], *variants.CONTEXT, reads=MODEL),
    Lesson("q09e_ridge_share_with_kv",
           f"with the KV cache read (at q09's batch, or the largest the HBM holds), decode falls short of the ridge by a gap worth explaining "
           f"(at most {variants.Q09E_MOST_SHARE:.0%} of it)",
           lambda p, k: k["q09e_ridge_share_with_kv"], 1e-9, 100 * variants.Q09E_MOST_SHARE,
           reads=MODEL + SERVE + ("service_context",)),
    Lesson("q09e_ridge_share_with_kv", "the service q09e asks about fits: weights and its batch's KV cache in the usable HBM",
           lambda p, k: answers.service_bytes(p) / answers.usable_hbm(), high=1.0 + 1e-9,
           reads=MODEL + SERVE + ("service_context",)),
    Lesson("q09e_ridge_share_with_kv", "beside the weights, the usable HBM holds at least one sequence of the service's context",
           lambda p, k: answers.service_batch(p), low=1.0, reads=MODEL + SERVE + ("service_context",)),
    Lesson("q09j_chunked_prefill_tokens",
           f"the idle tensor cores of q09e's step take a real chunk of prompt tokens "
           f"({variants.PREFILL_CHUNK[0]:,.0f} to {variants.PREFILL_CHUNK[1]:,.0f})",
           lambda p, k: k["q09j_chunked_prefill_tokens"], *variants.PREFILL_CHUNK, reads=MODEL + SERVE + ("service_context",)),
    Lesson("q09f_w4a4_context_limit",
           f"W4A4 reaches its ridge within the HBM and the framework's batch up to a context of at least "
           f"{variants.MIN_W4A4_CONTEXT} tokens",
           lambda p, k: k["q09f_w4a4_context_limit"], low=float(variants.MIN_W4A4_CONTEXT), reads=MODEL + SERVE + ("max_batch",)),
    Lesson("q09f_w4a4_context_limit",
           f"the batch on the boundary, min(R·C / 2P, max_batch), is one a server runs (at most "
           f"{variants.BOUNDARY_BATCH_MOST:,} sequences)",
           lambda p, k: answers.boundary_batch("W4A4", p), 1.0, float(variants.BOUNDARY_BATCH_MOST),
           reads=MODEL + SERVE + ("max_batch",)),
    Lesson("q09f_w4a4_context_limit", "the framework's batch is one serving frameworks run (max_num_seqs, max_batch_size)",
           lambda p, k: p["max_batch"], float(variants.MAX_BATCH[0]), float(variants.BOUNDARY_BATCH_MOST),
           reads=("max_batch",)),
    Lesson("q09h_service_batch", "the rate promised per sequence is below batch 1's bandwidth-bound rate (q08): a promise "
           "the chip can keep", lambda p, k: p["service_rate"] / k["q08_decode_tokens_per_s"], 1e-9, 1.0,
           reads=MODEL + SERVE + ("service_rate",)),
    Lesson("q09h_service_batch", "the limit that caps the batch leads the next one (relative): a student who takes another "
           "limit misses the key", lambda p, k: variants.service_lead(p), low=variants.Q09H_LEAD,
           reads=MODEL + SERVE + ("service_context", "service_rate")),
    Lesson("q09h_service_batch", "the framework's batch limit (q09f) lies above q09h's batch by its lead: it never binds here",
           lambda p, k: p["max_batch"] / k["q09h_service_batch"] - 1, low=variants.Q09H_LEAD - 1e-9,
           reads=MODEL + SERVE + ("service_context", "service_rate", "max_batch")),
    Lesson("q09h_service_batch", "the service runs at least two sequences at a time",
           lambda p, k: min(answers.service_limits(p).values()), low=2.0,
           reads=MODEL + SERVE + ("service_context", "service_rate")),
    Lesson("q09i_speculative_speedup", "the batch fits: both models' weights and its KV cache in the usable HBM",
           lambda p, k: ((p["model_params_b"] + p["draft_params_b"]) * 1e9 * BYTES_PER_ELEM["nvfp4"]
                         + p["spec_batch"] * p["service_context"] * k["q09c_kv_bytes_per_token"]) / answers.usable_hbm(),
           high=1.0, reads=MODEL + ("service_context", "draft_params_b", "spec_batch")),
    Lesson("q09i_speculative_speedup", "speculation pays: the best draft length beats no draft (γ = 0)",
           lambda p, k: k["q09i_speculative_speedup"], low=1.0 + variants.Q09I_GAP,
           reads=MODEL + SERVE + ("service_context", "draft_params_b", "draft_accept", "spec_batch")),
    Lesson("q09i_speculative_speedup", "speculation gains less than a round's most tokens, 1 / (1 − α)", lambda p, k: k["q09i_speculative_speedup"] * (1 - p["draft_accept"]), 1e-9, 1.0,
           reads=MODEL + SERVE + ("service_context", "draft_params_b", "draft_accept", "spec_batch")),
    Lesson("q09i_speculative_speedup",
           f"the best draft length lies inside γ = 1…{variants.DRAFT_LENGTHS[-1] - 1} and beats both neighbours by "
           f"{variants.Q09I_GAP:.1%} (relative tokens/s): an optimum, not 'the longest offered'",
           lambda p, k: variants.draft_lead(p), low=variants.Q09I_GAP,
           reads=MODEL + SERVE + ("service_context", "draft_params_b", "draft_accept", "spec_batch")),
    Lesson("q09k_moe_tokens_per_s", "the MoE model is one that exists: its part outside the routed experts, active − k·expert, "
           "is a real share of its active parameters", lambda p, k: variants.moe_parts(p)[0] / (p["moe_model"][2] * 1e9),
           0.05, 0.95, reads=MOE),
    Lesson("q09k_moe_tokens_per_s", "its NVFP4 weights fit in the serving B300's usable HBM",
           lambda p, k: p["moe_model"][1] * 1e9 * BYTES_PER_ELEM["nvfp4"] / answers.usable_hbm(), high=1.0, reads=MOE),
    Lesson("q09k_moe_tokens_per_s", "the step lies far under the bandwidth roof (its FLOP/B over the NVFP4 ridge)",
           lambda p, k: _moe_over_ridge(p), high=0.5, reads=MOE + SERVE),
    Lesson("q09k_moe_tokens_per_s", "counting only the k active experts, every expert, or B·k distinct ones misses the key "
           "(relative distance of the bytes read)", _moe_wrong_lead, low=0.08, reads=MOE),
    # q09k is graded at 0.2 %: its near misses of the stated routing must lie beyond it
    Lesson("q09k_moe_tokens_per_s", "picks with replacement, or the exponential approximation, miss the key (relative "
           "distance of the bytes read, over q09k's 0.2 %)", _moe_slip_lead, low=0.0021, reads=MOE),
    Lesson("q09k_moe_tokens_per_s", "total/E per expert with nothing shared misses the key (relative distance of the bytes read)",
           lambda p, k: variants.moe_no_shared_lead(p), low=variants.MOE_NO_SHARED_LEAD, reads=MOE),
    Lesson("q09l_tp_allreduce_batch", "the tensor-parallel degree divides the model's query heads (Megatron splits attention "
           "by heads; the remainder of query heads over the GPUs)", lambda p, k: p["query_heads"] % p["tp_gpus"], 0.0, 0.0,
           reads=("query_heads", "tp_gpus")),
    Lesson("q09l_tp_allreduce_batch", "q09l's key ≤ 0.8 × the W4A4 ridge batch: past it NVLink, not the tensor cores, binds first "
           "(the key over the W4A4 ridge batch)",
           lambda p, k: k["q09l_tp_allreduce_batch"] / answers.decode_batch_at_ridge("W4A4", p), high=variants.Q09L_RIDGE_SHARE,
           reads=MODEL + SERVE + ("query_heads", "tp_gpus")),
    Lesson("q09l_tp_allreduce_batch", "the batch where NVLink's all-reduce time meets the shard's HBM read is one a server runs",
           lambda p, k: k["q09l_tp_allreduce_batch"], 16.0, 8192.0, reads=MODEL + SERVE + ("query_heads", "tp_gpus")),
    Lesson("q09l_tp_allreduce_batch", "a ring counted as moving the data once or twice, or NVLink's both-direction figure "
           "taken for one direction, misses the key (relative)", lambda p, k: _tp_wrong_lead(p), low=0.1, reads=("tp_gpus",)),
    Lesson("q10a_fp4_zero_share", "per-tensor FP4 turns a real share of the data into 0, not all of it",
           lambda p, k: k["q10a_fp4_zero_share"], 5.0, 99.9, reads=DEMO2 + ("demo2_n",)),
    Lesson("q12b_e8m0_clipped_blocks", "about four in ten blocks clip (three to over five)",
           lambda p, k: k["q12b_e8m0_clipped_blocks"], *variants.Q12B_CLIPPED, reads=DEMO2 + ("demo2_n", "ablation_blocks")),
    Lesson("q16_software_exp_share", "some exp must move to the FMA units, not all",
           lambda p, k: k["q16_software_exp_share"], 1e-9, 100 - 1e-9, reads=("software_shape",)),
    Lesson("q16b_emulated_exp_time", "the limit that sets the shortest time (the tensor cores, or the SFU and FMA pipe "
           "balanced) leads the other (relative): a student who takes the other limit misses the key",
           lambda p, k: variants.emulation_lead(p), low=variants.EMULATION_LEAD - 1e-9,
           reads=("software_shape", "exp_emulation")),
    Lesson("q16b_emulated_exp_time", "a software exp pays: attention takes less time than with every exp on the SFU",
           lambda p, k: k["q16b_emulated_exp_time"], 1e-9, 100 - 1e-9, reads=("software_shape", "exp_emulation")),
    Lesson("q17_backward_ratio", "the backward pass barely cares about exp (ratio under 100 %)",
           lambda p, k: k["q17_backward_ratio"], high=100.0, reads=("backward_shape",)),
    Lesson("q17_backward_ratio", "a count with d_qk and d_v swapped misses the key (relative), unless the head is "
           "square and the two counts are one", lambda p, k: variants.swapped_count_miss(p["backward_shape"]),
           low=variants.Q17_SWAP_APART, reads=("backward_shape",)),
    Lesson("q17b_decode_exp_vs_kv", "the design's group is one models use: from GQA's few query heads per KV head to "
           "MLA-like 128", lambda p, k: p["decode_attention"][0], *map(float, variants.DECODE_GROUPS), reads=("decode_attention",)),
    Lesson("q17c_prefill_attention_ratio", "the model's query heads are a whole number per KV head, and with the head "
           "dimension make up its width (H_q·d_head within a fifth of d_model)",
           lambda p, k: p["query_heads"] * p["kv_head_dim"] / variants.d_model(p) if p["query_heads"] % p["kv_heads"] == 0
           else math.nan, 0.8 - 1e-9, 1.2 + 1e-9, reads=MODEL[:4] + ("query_heads",)),
    Lesson("q17c_prefill_attention_ratio", "the model has no more query heads than dense LLMs use",
           lambda p, k: p["query_heads"], high=float(variants.MAX_QUERY_HEADS), reads=("query_heads",)),
    Lesson("q18_model_speedup", "the new chip is faster (overlap model)",
           lambda p, k: k["q18_model_speedup"], low=1.0, reads=("speedup_shape", "speedup_chips")),
    Lesson("q18_model_speedup", "one chip of the step is exp-bound, the other matmul-bound (on the table's exp rates)",
           lambda p, k: float(sorted(exp_ratio(answers.CHIPS[c], "fp8", *p["speedup_shape"]) > 1
                                     for c in p["speedup_chips"]) == [False, True]), low=1.0,
           reads=("speedup_shape", "speedup_chips")),
    Lesson("q18b_serial_speedup", "the new chip is faster (serial model)",
           lambda p, k: k["q18b_serial_speedup"], low=1.0, reads=("speedup_shape", "speedup_chips")),
    Lesson("q19_mma_efficiency", "the matmul efficiency that explains the measurement is a share",
           lambda p, k: k["q19_mma_efficiency"], 1e-9, 100.0, reads=("sfu_share",)),
    Lesson("q24_rotated_fp4_tensor_error", "the rotation rescues per-tensor FP4 (q22 − q24, pp)",
           lambda p, k: k["q22_real_fp4_tensor_error"] - k["q24_rotated_fp4_tensor_error"],
           low=variants.LESSON_MARGINS["q24_rotated_fp4_tensor_error"], reads=TILE),
    Lesson("q34p_nvfp4_end_prediction", "the error-squared model, calibrated on FP8, predicts NVFP4's measured end effect "
           "(q34b / q34p) within 2.5x: the tile is a fair proxy for small errors",
           lambda p, k: k["q34b_nvfp4_end_deficit"] / k["q34p_nvfp4_end_prediction"], *variants.Q34P_RATIO, reads=TILE),
    Lesson("q34p_nvfp4_end_prediction", "the measurement (q34b) typed in as the prediction misses the key (relative)",
           lambda p, k: abs(k["q34b_nvfp4_end_deficit"] / k["q34p_nvfp4_end_prediction"] - 1),
           low=variants.Q34P_MEASURED_MISS, reads=TILE),
    # --- choices: the key leads the runner-up
    margin("q03_least_grown", "relative: the smallest growth under the next", _least_grown_lead, MARGINS["q03_least_grown"],
           reads=("growth_pair",)),
    margin("q06_memory_wall", "relative: the mixed ratio over the same-precision one (the two kernels' walls differ)",
           lambda p, k: k["q05_ridge_mixed_precision"] / k["q04_ridge_same_precision"] - 1, MARGINS["q06_memory_wall"],
           reads=TREND),
    margin("q10_size_sensitive", "pp of error growth, 2^12 -> 2^18 values", _size_lead, MARGINS["q10_size_sensitive"],
           reads=DEMO2),
    margin("q13_bottleneck", "relative distance of the drawn chip's t_exp / t_mma from 1, on every basis of its exp "
           "throughput a student may take (the table's, and q15's where the table's is on another basis)",
           lambda p, k: answers.bottleneck_lead(p), MARGINS["q13_bottleneck"],
           reads=("bottleneck_case",)),
    margin("q14_mla_effect", "relative change of the ratio with the MLA shape",
           lambda p, k: abs(exp_ratio(B300, "fp8", *p["mla_shape"]) / exp_ratio(B300, "fp8", 128, 128) - 1),
           MARGINS["q14_mla_effect"], reads=("mla_shape",)),
    margin("q18c_measured_position", "relative distance of the measurement from the nearer bound", _position_lead,
           MARGINS["q18c_measured_position"]),
    Lesson("q25w_online_rotation_width", "the boundary is a layer width models use (1,024 to 65,536 output channels)",
           lambda p, k: k["q25w_online_rotation_width"], 1024.0, 65536.0, reads=("online_rotation",)),
    Lesson("q25w_online_rotation_width", "the slow unit sets the cost, not the op count: the same rotation as a 16 × 16 "
           "BF16 matmul on the tensor cores (32 FLOP a value) takes at most a quarter of the FMA pipe's time",
           lambda p, k: 2 * answers.ONLINE_HADAMARD / B200.peak_flops("bf16")
           / (math.log2(answers.ONLINE_HADAMARD) / answers.fp32_pipe_results_per_s()), high=0.25),
    Lesson("q25x_wgrad_rotation_share", "rotating both inputs costs a real share of the weight-gradient GEMM, under "
           "its whole time (%)", lambda p, k: k["q25x_wgrad_rotation_share"], 1.0, 100.0,
           reads=("online_rotation", "wgrad_layer")),
    # wgrad_layer is (K, N): rotating only X counts K of the N + K values a token brings, rotating only dY counts N
    Lesson("q25x_wgrad_rotation_share", "a count that rotates only X (as q25w) misses the key: its relative miss is N / (N + K), "
           "at least about a half (N >= K; rotating only dY misses by K / (N + K))",
           lambda p, k: p["wgrad_layer"][1] / sum(p["wgrad_layer"]), low=0.45, reads=("wgrad_layer",)),
    margin("q25_rotation_nvfp4", "pp of Y's NVFP4 error, rotated vs not", lambda p, k: _real(p)["q25_rotation_nvfp4"],
           MARGINS["q25_rotation_nvfp4"], reads=TILE),
    margin("q09g_decode_precision", "relative distance of the service's context from the nearer boundary",
           _service_lead, MARGINS["q09g_decode_precision"], reads=MODEL + SERVE + ("service_context", "max_batch")),
    # --- the bit-budget lab q27 discusses has one best configuration on every tile
    Lesson("q27_explain_format", "the lab's best configuration within the budget leads the second (pp of Y's error)",
           lambda p, k: _real(p)["budget_lab"], low=variants.LESSON_MARGINS["budget_lab"], reads=TILE),
)
