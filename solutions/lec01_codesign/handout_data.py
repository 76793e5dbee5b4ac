"""What the handout notebook and the answer key share: the demo-2 data, its metrics, and the options
of the choice questions.

The notebook shows `demo_weights`, `relative_error` and `zero_fraction` with their source (the
build copies it with `inspect.getsource`), so the student's notebook and `answers.answer_key()`
quantize the very same numbers and measure them the same way.
"""

from __future__ import annotations

import numpy as np

from solutions.lec01_codesign.codesign import quantize
from solutions.lec01_codesign.variants import BACKWARD_FLOPS_PER_EXP, LECTURE  # noqa: F401 (BACKWARD_FLOPS_PER_EXP: q17's count)

SIZE_SWEEP = (1 << 12, 1 << 14, 1 << 16, 1 << 18)  # q10: how the errors move with the data size
ABLATION_SCALES = ("e8m0", "e4m3")  # q11/q12: the block-scale formats of the 2 × 2 ablation
FLOP_PER_PARAM_PER_TOKEN = 2  # one multiply-add per weight per token (decode)
# q09b–q09d: decode with a KV cache. Weights in NVFP4; W4A4 runs the matmul at the NVFP4 rate,
# W4A8 (FP8 activations) at the FP8 rate. The KV cache: a GQA model's K and V per layer and token.
DECODE_PRECISIONS = {"W4A4": "nvfp4", "W4A8": "fp8"}  # activation format -> the tensor-core rate it runs at
KV_PRECISION = "fp8"  # the KV cache is stored in FP8 (1 byte per value)
# The lecture's own parameters (variants.LECTURE); a student's are drawn by variants.variant.
DEMO2_SEED, DEMO2_DF, DEMO2_SCALE = LECTURE["demo2_seed"], LECTURE["demo2_df"], LECTURE["demo2_scale"]
DEMO2_N = LECTURE["demo2_n"]  # the lecture quantizes 2^20 values; 2^16 keeps the notebook fast
ABLATION_BLOCKS = tuple(LECTURE["ablation_blocks"])  # q11/q12: (larger, smaller) block of the ablation
MODEL_PARAMS = LECTURE["model_params_b"] * 1e9  # q07–q09d: the lecture's model (110 billion parameters) in NVFP4
HEAD_DIM = LECTURE["software_shape"][0]  # q15–q17: the lecture's d_head
KV_LAYERS, KV_HEADS, KV_HEAD_DIM = LECTURE["kv_layers"], LECTURE["kv_heads"], LECTURE["kv_head_dim"]
KV_BATCH = LECTURE["kv_batch"]  # q09d: concurrent sequences sharing each read of the weights
ROTATION_SIZE = LECTURE["rotation_size"]  # q24–q25: the block-diagonal Hadamard rotation's block
# q18–q19: NVIDIA's measurement, on the shape it was measured on. The technical blog 'Making Softmax
# More Efficient with NVIDIA Blackwell Ultra' reports GB300's FP8 attention forward pass (FPROP) end to
# end about 35 % faster than GB200's on DeepSeek-V3, i.e. MLA with d_qk = 192, d_v = 128.
MEASURED_DOCUMENT = "NVIDIA 技术博客 Making Softmax More Efficient with NVIDIA Blackwell Ultra"
MEASURED_FP8_FORWARD_GAIN = 1.35
MEASURED_MODEL, MEASURED_D_QK, MEASURED_D_V = "DeepSeek-V3", 192, 128


def demo_weights(n, seed=DEMO2_SEED, df=DEMO2_DF, scale=DEMO2_SCALE):
    """演示 2 的数据：自由度 df 的 Student-t 分布 × scale——像权重一样集中在 0 附近，但有重尾（离群值）。"""
    rng = np.random.default_rng(seed)
    return rng.standard_t(df=df, size=n) * scale


def relative_error(q, x):
    """相对误差 ||q − x|| / ||x||（小数；乘 100 就是百分数）。"""
    return float(np.linalg.norm(q - x) / np.linalg.norm(x))


def sustained_chip(chip, flops_share, bw_share):
    """规格表上的芯片 → 实测的"持续"芯片：flops_share 里列出的精度，算力乘以各自的比例（没列出的精度去掉）；
    HBM 带宽乘以 bw_share；其余的数字（容量、NVLink、功耗、exp 吞吐）照抄。"""
    d = chip.to_dict()
    d["flops"] = {p: dict(d["flops"][p], value=d["flops"][p]["value"] * share) for p, share in flops_share.items()}
    d["mem_bw"] = dict(d["mem_bw"], value=d["mem_bw"]["value"] * bw_share)
    return type(chip).from_dict(d)


def zero_fraction(q, x):
    """原本不是 0、量化后变成 0 的元素占全部元素的比例（小数）。"""
    return float(np.mean((q == 0) & (x != 0)))


# Choice questions: letter -> what the option names (the key picks the letter by computation).
# Letters are upper case; the grader and selfcheck both accept lower case too.
LEAST_GROWN_OPTIONS = {"A": ("compute", "算力（各代最低精度的稠密算力）"), "B": ("bandwidth", "HBM 带宽"),
                       "C": ("capacity", "HBM 容量"), "D": ("nvlink", "每 GPU 的 NVLink 带宽")}
WALL_OPTIONS = {"A": ("same_precision", "q04：同一种精度（FP8 对 FP8）的屋脊点之比"),
                "B": ("mixed_precision", "q05：各取最低精度（B300 的 NVFP4 对 H100 的 FP8）的屋脊点之比")}
# q06: the kernel a student's question is about (variants.WALL_KERNELS), as the prompt describes it
WALL_KERNELS = {"fp8": "在两块芯片上都用 FP8 计算，数据也按 FP8 从 HBM 读写",
                "nvfp4_on_chip": "在 H100 上用 FP8；到了 B300 上，数据仍按 FP8 从 HBM 读写，在片上量化成 NVFP4 再按 NVFP4 的速率计算"}
# q09g: which precision lets decode at the service's context reach its ridge with everything in HBM
# (the texts say no more than the choice: which of the two reaches what whenever the other does is the student's)
DECODE_DESIGN_OPTIONS = {"A": ("W4A4", "W4A4 能做到"),
                         "B": ("W4A8", "W4A4 做不到，W4A8 能做到"),
                         "C": ("neither", "两种都做不到")}
SIZE_OPTIONS = {"A": ("fp8_tensor", "FP8 per-tensor"), "B": ("fp4_tensor", "FP4 per-tensor"),
                "C": ("mxfp4", "MXFP4"), "D": ("nvfp4", "NVFP4")}
BOTTLENECK_OPTIONS = {"A": ("mma", "Tensor Core 的矩阵乘法"), "B": ("exp", "SFU 的 exp"),
                      "C": ("hbm", "HBM 带宽"), "D": ("nvlink", "NVLink")}
POSITION_OPTIONS = {"A": ("above", "高于两个模型的加速"), "B": ("between", "在两个模型的加速之间"),
                    "C": ("below", "低于两个模型的加速")}
MLA_OPTIONS = {"A": ("worse", "比值变大：更容易被 exp 卡住"), "B": ("better", "比值变小：更不容易被 exp 卡住"),
               "C": ("same", "比值不变")}



# q22–q27: real tensors (assignments/lec01_codesign/real_tensors.npz, made by tools/extract_real_tensors.py from real_tensors/__init__.py).
REAL_TENSORS_FILE = "real_tensors.npz"
BIT_BUDGET = 4.5  # the bit-budget lab (q27): bits per value a format may spend (4-bit elements + one 8-bit scale per block)
BUDGET_BLOCKS = (8, 16, 32)
BUDGET_SCALES = {"floor": "E8M0 FLOOR（2^(floor(log2 amax) − 2)，即 MXFP4 的）",
                 "rceil": "E8M0 RCEIL（2^ceil(log2(amax / 6))）",
                 "e4m3": "E4M3 + 张量级 FP32 因子 g（即 NVFP4 的）"}
BUDGET_OPTIONS = {letter: ((block, scale), f"块大小 {block}，{label}")
                  for letter, (block, (scale, label)) in zip(
                      "ABCDEFGHI", [(b, s) for b in BUDGET_BLOCKS for s in BUDGET_SCALES.items()])}
ROTATION_OPTIONS = {"A": ("smaller", "误差变小"), "B": ("larger", "误差变大")}


def format_bits(block):
    """每个数平均的比特数：4 bit 的 E2M1 元素 + 每块一个 8 bit 的缩放因子（张量级的 FP32 因子可忽略）。"""
    return 4 + 8 / block


def load_real_tensors(path=REAL_TENSORS_FILE):
    """真实张量：W（384 × 384 的权重）和 X（token 数 × 384 的激活），都是 float32；以及它们的出处。"""
    import json

    with np.load(path) as data:
        return data["X"], data["W"], json.loads(str(data["provenance"]))


def real_slice(x, w, tokens, outputs):
    """你的一块 Y = X·Wᵀ：X 取 tokens = [起点, 个数] 这几个 token（行），W 取 outputs = [起点, 个数] 这几个输出通道（行）；
    求和的那一维 K（384 个输入通道）全部保留。两块各自当作一个张量来量化。"""
    (t0, nt), (o0, no) = tokens, outputs
    return x[t0:t0 + nt], w[o0:o0 + no]


def quantize_matrix(a, scheme, block_size=None, scale_format=None):
    """按行（沿着矩阵乘法求和的那一维 K）分块量化一个矩阵：K = 384 是 32 的倍数，展平后的块不会跨行。"""
    flat = np.asarray(a, dtype=np.float64).ravel()
    return quantize(flat, scheme, block_size=block_size, scale_format=scale_format).reshape(np.shape(a))


def matmul_error(xq, wq, x, w):
    """Y = X·Wᵀ 的相对误差：两个操作数量化后按 FP32 相乘（FP32 累加），和未量化的 FP32 结果比。"""
    y = (x.astype(np.float32) @ w.astype(np.float32).T).astype(np.float64)
    yq = (xq.astype(np.float32) @ wq.astype(np.float32).T).astype(np.float64)
    return float(np.linalg.norm(yq - y) / np.linalg.norm(y))


def block_hadamard(n, size):
    """n × n 的正交旋转：对角线上放 n / size 个 size 阶归一化 Hadamard 矩阵（Sylvester 构造，size 是 2 的幂）。"""
    h = np.ones((1, 1))
    while h.shape[0] < size:
        h = np.block([[h, h], [h, -h]])
    return np.kron(np.eye(n // size), h / np.sqrt(size))
