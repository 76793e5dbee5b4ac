"""Per-student variants of lecture 1: the parameters each student's questions are asked with.

`LECTURE` is the lecture's own worked example (the spec sheet as printed, a 300B model at batch 1,
d_head = 128, the lecture's Student-t data, all of the real tensors): its keys are the ones the
released solutions show. `variant(rng)` draws a student's parameters. Every numeric item depends on
at least one continuous draw (or on several discrete ones), so that a classmate's number fails this
student's tolerance: tests/solutions/test_lecture_variants.py measures that over a class.

What varies, and why the questions stay the same questions:
- trend (q01–q06b): the sustained share of the spec peak the team measured on its own H100 and B300
  (GEMM per precision, HBM bandwidth). The vendor headline (share 1) is one case.
- decode (q07–q09b): the same three shares measured again on the serving team's B300 with its decode
  kernels, drawn on their own: were they the trend's, the seven trend and decode numbers would hang on
  five draws, and two students close on those five would share all seven.
- decode (q07–q09d): the batch of q07, the model size, the KV cache's shape and the batch of q09d.
- demo 2 (q11–q12b): the Student-t data (seed, degrees of freedom, scale, size) and the two block
  sizes of the 2 × 2 ablation.
- demo 3 (q15–q18b): the head shapes of the basis, software-exp, backward and speed-up questions.
  q18c and q19 stay on the shape NVIDIA measured (a measurement cannot be moved); q19 assumes the
  SFU reaches a share of its peak (1 in the lecture): B200 stays exp-bound and B300 matmul-bound
  for every share drawn, so the question is the same one.
- real tensors (q22–q26): one tile of Y = X·Wᵀ (a few tokens × a few output channels, all of K),
  and the rotation's block size.
"""

from __future__ import annotations

import numpy as np

LECTURE = {
    # sustained share of the spec peak (1.0 = the spec sheet)
    "h100_fp8_share": 1.0,
    "h100_bw_share": 1.0,
    "b300_fp8_share": 1.0,
    "b300_nvfp4_share": 1.0,
    "b300_bw_share": 1.0,
    # decode: the serving B300's sustained shares
    "serve_fp8_share": 1.0,
    "serve_nvfp4_share": 1.0,
    "serve_bw_share": 1.0,
    "decode_batch": 1,
    "model_params_b": 300,
    "kv_layers": 64,
    "kv_heads": 8,
    "kv_head_dim": 128,
    "kv_batch": 64,
    # demo 2
    "demo2_seed": 0,
    "demo2_df": 5.0,
    "demo2_scale": 0.02,
    "demo2_n": 1 << 16,
    "ablation_blocks": [32, 16],
    # demo 3: [d_qk, d_v]
    "basis_shape": [128, 128],
    "software_shape": [128, 128],
    "backward_shape": [128, 128],
    "speedup_shape": [192, 128],
    "speedup_chips": ["B200", "B300"],
    "sfu_share": 1.0,  # q19: the share of its exp peak the SFU is assumed to reach
    # real tensors: [first, count]
    "real_tokens": [0, 102],
    "real_outputs": [0, 384],
    "rotation_size": 128,
}

REAL_TOKENS, REAL_OUTPUTS = 102, 384  # rows of X (tokens) and of W (output channels) in real_tensors.npz
HEAD_DIMS = tuple(range(64, 257, 8))  # head dimensions a model may use: multiples of 8
ABLATION_PAIRS = ((32, 16), (64, 32), (64, 16), (32, 8), (16, 8), (128, 32))  # (larger, smaller) block
# q18/q18b: a generation step with one side exp-bound and the other matmul-bound for d_qk + d_v in
# [240, 480] (B200 → B300: B200 exp-bound; H100 → B200: H100 matmul-bound), so the speed-up moves with
# the shape (H100 → B300 is matmul-bound on both sides there: its speed-up would be one constant)
SPEEDUP_CHIPS = (("B200", "B300"), ("H100", "B200"))


def _share(rng: np.random.Generator, low: float, high: float) -> float:
    return round(float(rng.uniform(low, high)), 3)


def _log_int(rng: np.random.Generator, low: int, high: int) -> int:
    return int(round(float(np.exp(rng.uniform(np.log(low), np.log(high))))))


def _shape(rng: np.random.Generator, low: int, high: int) -> list[int]:
    """A head shape [d_qk, d_v] from HEAD_DIMS with low <= d_qk + d_v <= high."""
    pairs = [(q, v) for q in HEAD_DIMS for v in HEAD_DIMS if v <= q and low <= q + v <= high]
    q, v = pairs[int(rng.integers(len(pairs)))]
    return [q, v]


def variant(rng: np.random.Generator) -> dict:
    """One student's parameters (JSON-plain)."""
    tokens, outputs = int(rng.integers(4, 25)), int(rng.choice([16, 32, 48]))
    fp8 = _share(rng, 0.30, 0.95)
    return {
        "h100_fp8_share": _share(rng, 0.30, 0.95),
        "h100_bw_share": _share(rng, 0.50, 0.95),
        "b300_fp8_share": fp8,
        # NVFP4 sustains at least half the share FP8 does: 1.5x FP8's FLOP/s or more, so the format
        # still gains (q02 > 1) and the same-precision ratio stays the one that measures the wall (q06)
        "b300_nvfp4_share": _share(rng, max(0.25, fp8 / 2), 0.90),
        "b300_bw_share": _share(rng, 0.50, 0.95),
        "decode_batch": int(rng.integers(2, 49)),
        "model_params_b": _log_int(rng, 20, 440),  # NVFP4 weights fit in one B300 (288 GB) with room to spare
        "kv_layers": int(rng.integers(16, 129)),
        "kv_heads": int(rng.choice([1, 2, 4, 8, 16])),
        "kv_head_dim": int(rng.choice([64, 96, 128, 192, 256])),
        "kv_batch": _log_int(rng, 8, 512),
        "demo2_seed": int(rng.integers(1, 2**31)),
        "demo2_df": round(float(rng.uniform(2.5, 10.0)), 2),
        "demo2_scale": round(float(np.exp(rng.uniform(np.log(0.002), np.log(0.2)))), 5),
        "demo2_n": int(rng.choice([1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16])),
        "ablation_blocks": list(ABLATION_PAIRS[int(rng.integers(len(ABLATION_PAIRS)))]),
        "basis_shape": _shape(rng, 128, 512),
        "software_shape": _shape(rng, 128, 400),
        # 6·d_qk + 4·d_v >= 5·(d_qk + d_v) > 1000 FLOP: the backward ratio stays below 100 % (q17)
        "backward_shape": _shape(rng, 208, 512),
        "speedup_shape": _shape(rng, 240, 480),
        "speedup_chips": list(SPEEDUP_CHIPS[int(rng.integers(len(SPEEDUP_CHIPS)))]),
        "sfu_share": _share(rng, 0.70, 1.00),
        "real_tokens": [int(rng.integers(0, REAL_TOKENS - tokens + 1)), tokens],
        "real_outputs": [16 * int(rng.integers(0, (REAL_OUTPUTS - outputs) // 16 + 1)), outputs],
        "rotation_size": int(rng.choice([32, 64, 128])),
        **_serve_shares(rng),  # drawn last: the parameters drawn before keep their values
    }


def _serve_shares(rng: np.random.Generator) -> dict:
    """The serving B300's shares, in the trend's ranges (NVFP4 at least half FP8's share: W4A4 still
    needs a larger batch than W4A8, q09 > q09b)."""
    fp8 = _share(rng, 0.30, 0.95)
    return {"serve_fp8_share": fp8, "serve_nvfp4_share": _share(rng, max(0.25, fp8 / 2), 0.90),
            "serve_bw_share": _share(rng, 0.50, 0.95)}


# Items whose key must move with the parameters (`check` fails if one has the same key in every sample):
# every number item with a key. The choice items' keys follow from the parameters too, but most
# of them are conceptual (the same letter for every student); q25 and q26 move with the tile.
DEPENDENT = (
    "q01_compute_headline", "q02_format_gain", "q04_ridge_same_precision", "q05_ridge_mixed_precision",
    "q06b_wall_for_nvfp4_kernel", "q07_decode_intensity", "q08_decode_tokens_per_s", "q09_decode_batch",
    "q09b_decode_batch_w4a8", "q09c_kv_bytes_per_token", "q09d_kv_equal_weights_context",
    "q11_scale_format_gain", "q12_block_size_gain", "q12b_e8m0_clipped_blocks", "q15_h100_tensor_basis",
    "q16_software_exp_share", "q17_backward_ratio", "q18_model_speedup", "q18b_serial_speedup",
    "q19_mma_efficiency", "q22_real_fp4_tensor_error", "q23_real_nvfp4_error", "q24_rotated_fp4_tensor_error",
)
