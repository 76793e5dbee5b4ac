"""What each report item of lecture 1 teaches, and why the ones declared `demand = "reasoning"` are.

The definition (docs/authoring.md, *What an item demands*): an item is reasoning when neither its
prompt nor the cells above it give the expression that yields the key, and the student has to
- MODEL: choose or set up the model themselves (which quantities enter, how they relate);
- DECISION: decide under a stated constraint, with a computation the notebook does not print; or
- PREDICTION: commit a prediction in an answer cell before the cell that computes or measures it runs.
Everything else with a key is read-off (a printed value, or a stated formula or definition filled in)
or measure. `REASONS` holds each reasoning item's kind and the expression the prompt must not give
away (tests/solutions/test_item_demands.py holds the notebook to it); docs/lec01_items.md is
generated from this module, grading.toml and lessons.py (`python tools/item_table.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Why(StrEnum):
    MODEL = "model"  # sets up the model: no formula given
    DECISION = "decision"  # decides under a constraint
    PREDICTION = "prediction"  # commits a prediction before the cell that verifies it runs


@dataclass(frozen=True)
class Reason:
    why: Why
    hidden: tuple[str, ...]  # the expression (fragments) the prompt and the cells above it must not state
    verified_by: str = ""  # PREDICTION: code in a later cell that computes or measures what was predicted


REASONS: dict[str, Reason] = {
    # the student sees that batch-1 decode sits under the bandwidth roof on both chips and that a token moves the
    # weights once: the gain is the bandwidth's times the weights' bytes', and the compute headline does not enter
    "q06c_decode_generation_speedup": Reason(Why.MODEL, ("B300_RUN.mem_bw / H100_RUN.mem_bw", "mem_bw / H100_RUN", "带宽之比 ×",
                                                         "字节之比", "权重的字节 ÷ 带宽", "权重字节 ÷ 带宽")),
    # the student sets up a step's FLOP and bytes with the KV cache, and decides which batch up to q09's gives the
    # most: the intensity grows with the batch, so the largest that fits beside the weights
    "q09e_ridge_share_with_kv": Reason(Why.DECISION, ("W / (W + B·L·k)", "W + B·L·k", "(C − W) / (L·k)", "装得下的最大值",
                                                      "batch 越大，强度越高")),
    # chunked prefill: the student sees that q09e's step lasts as long as its read, and what the idle tensor cores
    # could do in that time on the weights already read
    "q09j_chunked_prefill_tokens": Reason(Why.MODEL, ("R·(W + B·L·k)", "(W + B·L·k) / BW", "/ (2P) − B", "/ 2P − B",
                                                      "weight_bytes + service_batch * kv_per_sequence) /",
                                                      "nvfp4_flops * step_time", "spare_flop")),
    "q09f_w4a4_context_limit": Reason(Why.DECISION, ("2P·(1 − W/C)", "R·W / (2P − R·L·k)", "2P − R·W / B")),
    # a third limit (the rate promised to each sequence) and the step time on both roofs: which limit caps the batch
    "q09h_service_batch": Reason(Why.DECISION, ("max(2P·B / F", "(W + B·L·k) / BW", "F / (2P·T)", "(BW / T − W)",
                                                     "B / t(B)", "/ step_seconds(")),
    # speculative decoding: the draft's steps and the target's check step, each on both roofs; the best draft length
    "q09i_speculative_speedup": Reason(Why.DECISION, ("γ·t_d + t_v", "gamma * t_draft + t_check", "2P·B·(γ + 1) / F",
                                                      "MODEL_PARAMS * SPEC_BATCH * (gamma + 1)")),
    # MoE decode: the student works out an expert's size from the published counts and how many distinct experts a
    # batch's step reads on average under uniform routing: far more than the k a token uses
    "q09k_moe_tokens_per_s": Reason(Why.MODEL, ("(1 − k/E)^B", "(1 - k/E)", "1 − (1 − k", "(1 - MOE_TOP_K / MOE_EXPERTS)",
                                                "(total − active) / (E − k)", "(MOE_TOTAL_B - MOE_ACTIVE_B)", "experts_read",
                                                "E·(1 −", "E × (1 −")),
    # tensor-parallel decode: the student counts the all-reduces a step makes, a ring's traffic per GPU and NVLink's
    # one-direction rate, against the HBM time of the GPU's weight shard
    "q09l_tp_allreduce_batch": Reason(Why.MODEL, ("2(N − 1)/N", "2·(N − 1)/N", "2 * (TP_GPUS - 1) / TP_GPUS", "(TP_GPUS - 1)",
                                                  "link_bw / 2", "shard_seconds /", "allreduce_per_sequence", "4·L·(N − 1)")),
    "q28p_exp_if_memory_bound": Reason(Why.PREDICTION, ("2 * 4 / q28a", "8 / q28a", "/ (q28a_triad_gb_per_s * 5 / 3)",
                                                        "q28a × 40/24", "q28a × 5/3", "4.8 / q28a", "40 字节",
                                                        "numpy_triad_bytes /", "TRIAD_BYTES_MOVED"),
                                       verified_by="q28_exp_ns_per_value = exp_seconds() / EXP_N * 1e9"),
    # the student finds the least traffic an m × m matmul must move and where its intensity meets the CPU's ridge
    "q29c_gemm_edge_at_ridge": Reason(Why.MODEL, ("m / 6", "6 * q29b", "6 × q29b", "6 · q29b", "3m²", "3 m²", "3 * 4 * m",
                                                  "3 * 4 * edge", "(3 · 4 · m²)", "2 * m**3 /", "2m³ / (")),
    "q34p_nvfp4_end_prediction": Reason(Why.PREDICTION, ('/ tile_errors["fp8_tensor"]) ** 2', "1 − cos ≈", "r²/2", "r² / 2", "误差的平方"),
                                        verified_by='end_deficits = {name: end_deficit(e, end_embeddings["fp32"])'),
    # the software exp against two limits: the FMA pipe it shares with softmax, and the tensor cores; the best split
    "q16b_emulated_exp_time": Reason(Why.DECISION, ("(a + c) / (f + c)", "(a + s·c)", "1 − s", "(SOFTMAX_FMA_OPS + EXP_POLY_OPS) /",
                                                       "/ (pipes + EXP_POLY_OPS)", "两者相等时最快")),
    # an online rotation's cost on two units, one limit (the budget): the student counts the butterflies of a 16-wide
    # fast Walsh–Hadamard transform on the FMA pipe against the GEMM's 2N FLOP per activation on the tensor cores,
    # and solves for the width at which the rotation fits the budget (M and K cancel): a model set-up, like q29c
    "q25w_online_rotation_width": Reason(Why.MODEL, ("16 · 4 = 64", "16·log2", "16 * log2", "h·log2", "n·log2",
                                                        "log2(16) = 4", "每个数 4 个", "2N FLOP", "2·N FLOP",
                                                        "4 * gemm /", "4 / fma_pipe", "M、K 两边都有")),
    # the recipe's rotation in training: the student decides that both inputs of dW = dYᵀ·X are rotated (a rotation
    # along the summed dimension keeps the product only if both operands take it) and both are fresh, none stored
    # (M·N and M·K values), against the GEMM's 2·M·N·K FLOP: M cancels, both widths stay
    "q25x_wgrad_rotation_share": Reason(Why.MODEL, ("(WGRAD_N + WGRAD_K)", "N + K", "M·N + M·K", "M·(N + K)",
                                                    "1/N + 1/K", "1 / N + 1 / K", "2 * WGRAD_N * WGRAD_K",
                                                    "2·M·N·K", "dY 有 M·N 个数", "两个输入", "两个都要在线旋转",
                                                    "dY 和 X 都")),
    "q17_backward_ratio": Reason(Why.MODEL, ("6·d_qk + 4·d_v", "·d_qk + 4·d_v")),
    # decode's attention: the student counts a KV head's bytes and its group's exps per context token
    "q17b_decode_exp_vs_kv": Reason(Why.MODEL, ("G·BW", "2·d·b", "G / E", "2 * head_dim * BYTES_PER_ELEM", "group / B300.exp_per_s")),
    # the whole model's prefill: the student counts causal attention's scores over layers and heads against 2P a token
    "q17c_prefill_attention_ratio": Reason(Why.MODEL, ("(n + 1) / 2", "L·(L + 1)", "L(L+1)", "L² ·", "KV_LAYERS * QUERY_HEADS *")),
    # which scheme's error grows with the data, committed before the size sweep runs: q10a's prompt says the scale
    # follows the maximum, that a heavy-tailed sample's maximum grows with n is the student's to see
    "q10_size_sensitive": Reason(Why.PREDICTION, ("最大值越大", "样本里的最大值"),
                                 verified_by="sweep[scheme].append(relative_error(quantize(xn, scheme), xn))"),
    # the share E8M0 FLOOR clips if block maxima were spread evenly on a log scale, before the count on the data
    "q12p_e8m0_clip_prediction": Reason(Why.PREDICTION, ("log2(4/3)", "log2(4 / 3)", "log2(8/6)", "log2(8 / 6)", "log₂(4/3)", "0.415", "41.5", "[4, 8)", "三分之一"),
                                        verified_by="q12b_e8m0_clipped_blocks = np.mean(8 * mantissa > 6) * 100"),
}

# One line per item: what answering it teaches (English: the instructors' table, docs/lec01_items.md).
TEACHES: dict[str, str] = {
    "round_e4m3": "FP8 E4M3 rounding as the hardware does it: ties to even, saturation at 448",
    "to_e2m1": "FP4 E2M1 rounding: ties to even (the lecture's argmin is wrong there), saturation at 6",
    "quantize": "per-tensor, MXFP4 and NVFP4 scaling, exactly as specified",
    "flops_per_exp": "how much matmul work one softmax exp comes with (2·d_qk + 2·d_v)",
    "exp_ratio": "the exp-vs-matmul time ratio of attention on a chip",
    "ridge_point": "the roofline's ridge: peak FLOP/s over HBM bandwidth",
    "trend_row": "one chip's generation ratios to a base chip",
    "q01_compute_headline": "the vendor headline compares different precisions",
    "q02_format_gain": "how much of the headline is the format change, not the chip",
    "q03_least_grown": "which resource fell behind on the student's generation step (NVLink, or HBM capacity towards Rubin)",
    "q04_ridge_same_precision": "the memory wall: the same-precision ridge grows (about the spec sheet's 1.058x: one team's shares nearly cancel)",
    "q05_ridge_mixed_precision": "the mixed ratio is q04 times the format gain",
    "q06_memory_wall": "a kernel's wall is the ridge it must reach over the intensity it has: pick the ratio for your kernel",
    "q06b_wall_for_nvfp4_kernel": "a kernel that moves its data to NVFP4 also gains intensity: its wall grows less",
    "q06c_decode_generation_speedup": "set up batch-1 decode on two generations: under the bandwidth roof a token moves the "
                                      "weights once, so the gain is the bandwidth's times the format's bytes, far below the headline",
    "q07_decode_intensity": "decode's arithmetic intensity is tiny: memory-bound",
    "q08_decode_tokens_per_s": "bandwidth bounds batch-1 decode: bytes per token over bandwidth",
    "q09_decode_batch": "batching raises decode's intensity: the batch that reaches the W4A4 ridge (weights only)",
    "q09b_decode_batch_w4a8": "the slower operand's rate sets the ridge: W4A8 runs at FP8",
    "q09c_kv_bytes_per_token": "the KV cache's bytes per token from the GQA shape",
    "q09d_kv_equal_weights_context": "beyond some context decode reads more KV than weights",
    "q09e_ridge_share_with_kv": "verifies q09: with the KV cache read and held in the HBM (which may cap the batch), decode falls short of the ridge",
    "q09j_chunked_prefill_tokens": "chunked prefill: a memory-bound decode step leaves the tensor cores idle; prompt tokens "
                                   "ride on the weights it already reads, free up to the ridge",
    "q09f_w4a4_context_limit": "decode under three limits (ridge, HBM and the framework's batch): the longest context W4A4 "
                               "can be compute-bound, and which limit ends it",
    "q09g_decode_precision": "a design decision: the precision that stays compute-bound at the service's context, or none",
    "q09h_service_batch": "a design under three limits (HBM, and the rate promised per sequence on each roof): the "
                          "largest batch all allow; each limit caps it for some students",
    "q09i_speculative_speedup": "speculative decoding as a design: a draft's cheap steps buy tokens the memory-bound check "
                                "step verifies almost for free; the best draft length lies inside the range (longer drafts are mostly rejected "
                                "and push the check onto the compute roof)",
    "q09k_moe_tokens_per_s": "MoE decode: a batch's tokens pick different experts, so a step reads E·(1 − (1 − k/E)^B) "
                             "experts a layer, more than the k 'active' ones: at batch B a MoE decodes well below a dense "
                             "model of its active parameters",
    "q09l_tp_allreduce_batch": "tensor-parallel decode: each GPU reads 1/N of the weights, but every token's activations cross "
                               "NVLink twice a layer (a ring moves 2(N − 1)/N of them at one direction's rate): beyond some "
                               "batch NVLink, not HBM, bounds the step",
    "q10a_fp4_zero_share": "predict, then verify: per-tensor FP4 flushes |x| <= amax/24 to zero",
    "q10_size_sensitive": "predict, then verify: per-tensor scaling depends on the sample's maximum: error grows with n",
    "q11_scale_format_gain": "the ablation: the scale format's share of NVFP4's gain",
    "q12_block_size_gain": "the ablation: the block size's share, and that the two interact",
    "q12p_e8m0_clip_prediction": "predict, then verify: where E8M0 FLOOR puts a block's maximum, and how often that clips it",
    "q12b_e8m0_clipped_blocks": "verifies q12p: E8M0 FLOOR clips the block maximum in about four blocks of ten",
    "q13_bottleneck": "which unit bounds attention for the student's chip, precision and head shape",
    "q14_mla_effect": "the ratio scales as 1 / (d_qk + d_v): a wider head gives each exp more matmul",
    "q15_h100_tensor_basis": "compare figures on one basis: H100's exp rate on its tensor peak's SMs and clock",
    "q16_software_exp_share": "moving exp to FMA polynomials: the share that balances SFU and tensor cores",
    "q16b_emulated_exp_time": "a design under two limits: the FMA pipe a software exp shares with softmax caps the "
                              "split, the tensor cores cap the gain; why Blackwell Ultra doubled the SFU instead",
    "q17_backward_ratio": "count the backward pass's matmul work per exp: it barely cares about exp",
    "q17b_decode_exp_vs_kv": "decode's attention streams the KV cache: exp against the HBM read, per KV head and context "
                             "token, whatever the context; wide groups and narrow KV make exp a decode bottleneck too",
    "q17c_prefill_attention_ratio": "attention inside the whole model: causal prefill's QKᵀ and PV against the weights' "
                                    "matmuls grow with the prompt: demo 3's exp matters for long prompts",
    "q18_model_speedup": "the overlap (bottleneck) model of a generation step's attention speed-up",
    "q18b_serial_speedup": "the serial model: time = t_exp + t_mma, each part at its own chip's speed",
    "q18c_measured_position": "the one published measurement lies below both models",
    "q19_mma_efficiency": "invert q18's model: the matmul efficiency that explains the measurement (which unit bounds "
                          "each chip follows from the numbers)",
    "q22_real_fp4_tensor_error": "per-tensor FP4 on real, channel-structured activations",
    "q23_real_nvfp4_error": "NVFP4 on the same tile",
    "q24_rotated_fp4_tensor_error": "a Hadamard rotation spreads outlier channels: per-tensor FP4 recovers",
    "q25_rotation_nvfp4": "the same rotation's effect on NVFP4 depends on the tile",
    "q25x_wgrad_rotation_share": "the recipe's rotation in training runs along the summed token dimension, so both inputs of "
                                 "the weight-gradient GEMM take it and neither is a stored weight: both widths enter "
                                 "(4·(N + K) adds against 2·N·K FLOP a token): a real share of that GEMM unless it runs "
                                 "on the tensor cores (fused with the NVFP4 cast)",
    "q25w_online_rotation_width": "an online rotation's cost on two units: a 16-wide fast Walsh–Hadamard transform "
                                  "takes 4 adds a value on the FMA pipe, the GEMM 2N FLOP a value on the tensor cores "
                                  "(about 250x at peak): only wide layers keep it within budget",
    "q34a_fp8_end_deficit": "end to end: FP8 in all 36 linear layers of a real encoder barely moves its sentence embeddings",
    "q34p_nvfp4_end_prediction": "predict, then verify: from a tensor error to the end effect (1 − cos grows with the error squared)",
    "q34b_nvfp4_end_deficit": "verifies q34p: NVFP4's measured end effect, next to the tensor-error model's prediction",
    "q35p_fp4_end_prediction": "predict, then verify: the same error-squared model for a large error (per-tensor FP4)",
    "q34r_h16_end_prediction": "predict, then verify: the same model for NVFP4 after a 16-wide rotation, from the tile's error",
    "q35g_fp4_end_over_fp8": "verifies q35p: the measured ratio; a large error turns the embedding, the small-error model no longer holds",
    "q34h_h16_end_over_fp8": "verifies q34r: the measured ratio; one tile does not represent a rotation's effect on all 36 layers",
    "q35_fp4_rank_agreement": "an end task (ranking pairs) survives far more error than the embedding's cosine suggests",
    "q35m_nvfp4_weight_mb": "count a real model's linear weights from its shapes: what NVFP4 stores",
    "q28a_triad_gb_per_s": "measuring the CPU's bandwidth roof: a triad beyond the last-level cache, warmed up, median",
    "q29b_cpu_ridge": "the CPU's own ridge point from its two measured roofs",
    "q29c_gemm_edge_at_ridge": "place the matmul on the CPU's own roofline: its least traffic gives an intensity of m / 6, "
                               "past the ridge from a small edge on",
    "q28p_exp_if_memory_bound": "predict, then verify: the exp time the bandwidth roof alone allows",
    "q28_exp_ns_per_value": "measuring: warm up, repeat, take the median",
    "q28g_exp_vs_memory": "the gap between prediction and measurement tells which roof exp sits under",
    "q28f_fmas_per_exp": "on a CPU exp shares the vector units with the FMAs: its cost in FMAs (no SFU)",
    "q29_matmul_gflops": "measuring a matmul's FLOP rate",
    "q30_exp_share_64": "demo 3's serial model (q18b) on the student's own CPU: no exp unit of its own, so exp and the "
                        "matmul take turns on one set of vector units (d = 64)",
    "q31_exp_share_128": "the same at d = 128",
    "q32_vs_b300": "the CPU's t_exp / t_mma against B300's",
    "q20_explain_scaling": "explain: scale granularity and format",
    "q21_explain_codesign": "explain: why a small unit became the bottleneck",
    "q27_explain_format": "explain: a format chosen within a bit budget, from the measured frontier",
    "q36_explain_end_to_end": "explain: what the gap between a tensor's error and the whole model's end effect says",
    "q33_explain_measurement": "explain: how to time, and why the CPU differs from the spec-sheet model",
}

# Why an item's key is the same for every student, where it cannot move with the parameters.
SAME_FOR_EVERYONE: dict[str, str] = {
    "q12p_e8m0_clip_prediction": "a prediction from the scale rule alone (block maxima spread evenly on a log scale): "
                                 "the student's own data verifies it in q12b, whose key is the student's",
    "q18c_measured_position": "NVIDIA published one measurement, on one shape and one chip pair: a measurement "
                              "cannot be moved, so the item stays at 1 point",
    "q34a_fp8_end_deficit": "one model and one set of sentences ship with the kit (a 20 MB file; one per student "
                            "would not fit a student folder): the whole model's end effect is the same for everyone, "
                            "so the item stays at 1 point; the prediction built on it (q34p) uses the student's own tile",
    "q34b_nvfp4_end_deficit": "the same model and sentences for everyone (see q34a): 1 point; how far it lies from "
                              "the student's own prediction (q34p) is the question of q36",
    "q35g_fp4_end_over_fp8": "the same model and sentences for everyone (see q34a): 1 point; the prediction it "
                             "verifies (q35p) uses the student's own tile",
    "q34h_h16_end_over_fp8": "the same model and sentences for everyone (see q34a): 1 point; the prediction it "
                             "verifies (q34r) uses the student's own tile",
    "q35_fp4_rank_agreement": "the same model and sentences for everyone (see q34a): 1 point. The keys of q34a–q35 "
                              "are the reference pipeline's; a rounding bug the function items catch keeps them, "
                              "except the lecture's ties-to-smaller to_e2m1, which flips 3 of the 28 pair orderings "
                              "and loses this one (tests/solutions/test_end_to_end_fairness.py)",
    "q35m_nvfp4_weight_mb": "one model ships with the kit (see q34a): its weights' count is the same for everyone, 1 point",
}
