"""What the handout notebook and the answer key share: the demo-2 data, its metrics, and the options
of the choice questions.

The notebook shows `demo_weights`, `relative_error` and `zero_fraction` with their source (the
build copies it with `inspect.getsource`), so the student's notebook and `answers.answer_key()`
quantize the very same numbers and measure them the same way.
"""

from __future__ import annotations

import numpy as np

DEMO2_SEED = 0
DEMO2_N = 1 << 16  # the lecture quantizes 2^20 values; 2^16 keeps the notebook fast
SIZE_SWEEP = (1 << 12, 1 << 14, 1 << 16, 1 << 18)  # q08: how the errors move with the data size
MODEL_PARAMS = 300e9  # q10: a 300-billion-parameter model stored in NVFP4


def demo_weights(n, seed=DEMO2_SEED):
    """讲义演示 2 的数据：自由度 5 的 Student-t 分布 × 0.02——像权重一样集中在 0 附近，但有重尾（离群值）。"""
    rng = np.random.default_rng(seed)
    return rng.standard_t(df=5, size=n) * 0.02


def relative_error(q, x):
    """相对误差 ||q − x|| / ||x||（小数；乘 100 就是百分数）。"""
    return float(np.linalg.norm(q - x) / np.linalg.norm(x))


def zero_fraction(q, x):
    """原本不是 0、量化后变成 0 的元素占全部元素的比例（小数）。"""
    return float(np.mean((q == 0) & (x != 0)))


# Choice questions: letter -> what the option names (the key picks the letter by computation).
Q04_OPTIONS = {"A": ("compute", "算力（各代最低精度的稠密算力）"), "B": ("bandwidth", "HBM 带宽"),
               "C": ("capacity", "HBM 容量"), "D": ("nvlink", "每 GPU 的 NVLink 带宽")}
Q08_OPTIONS = {"A": ("fp8_tensor", "FP8 per-tensor"), "B": ("fp4_tensor", "FP4 per-tensor"),
               "C": ("mxfp4", "MXFP4"), "D": ("nvfp4", "NVFP4")}
Q11_OPTIONS = {"A": ("mma", "Tensor Core 的矩阵乘法"), "B": ("exp", "SFU 的 exp"),
               "C": ("hbm", "HBM 带宽"), "D": ("nvlink", "NVLink")}
Q14_OPTIONS = {"A": ("worse", "比值变大：更容易被 exp 卡住"), "B": ("better", "比值变小：更不容易被 exp 卡住"),
               "C": ("same", "比值不变")}
