"""Answer keys of the report questions (instructor-only): computed from the reference and hw_specs.

`answer_key()` gives the number and choice items of grading.toml; nothing is typed in, so a change
to the chip table or the reference moves the keys with it. `EXPLANATIONS` (Chinese) say how each
answer comes about; they go into the solutions released after the deadline.
"""

from __future__ import annotations

import math

from hw_specs import B200, B300, BYTES_PER_ELEM, H100
from solutions.lec01_codesign.codesign import exp_ratio, flops_per_exp, quantize, trend_row
from solutions.lec01_codesign.handout_data import (
    DEMO2_N,
    MODEL_PARAMS,
    Q04_OPTIONS,
    Q08_OPTIONS,
    Q11_OPTIONS,
    Q14_OPTIONS,
    SIZE_SWEEP,
    demo_weights,
    relative_error,
    zero_fraction,
)


def _letter(options: dict[str, tuple[str, str]], name: str) -> str:
    return next(letter for letter, (option, _) in options.items() if option == name)


def answer_key() -> dict[str, float | str]:
    """Keys of every number and choice item: floats in the unit the question asks for, letters for choices."""
    b300, h100 = trend_row(B300, "nvfp4"), trend_row(H100, "fp8")
    x = demo_weights(DEMO2_N)
    small, large = demo_weights(SIZE_SWEEP[0]), demo_weights(SIZE_SWEEP[-1])
    error_growth = {scheme: relative_error(quantize(large, scheme), large)
                    - relative_error(quantize(small, scheme), small)
                    for scheme, _ in Q08_OPTIONS.values()}
    exp_b200_128 = exp_ratio(B200, "fp8", 128, 128)
    mla, mha = exp_ratio(B300, "fp8", 192, 128), exp_ratio(B300, "fp8", 128, 128)
    mla_effect = "same" if math.isclose(mla, mha) else ("worse" if mla > mha else "better")
    return {
        "q01_compute_headline": b300["compute"],
        "q02_fp8_same_precision": b300["fp8"],
        "q03_format_gain": b300["compute"] / b300["fp8"],
        "q04_least_grown": _letter(Q04_OPTIONS, min((name for name, _ in Q04_OPTIONS.values()), key=b300.get)),
        "q05_ridge_growth": b300["ridge"] / h100["ridge"],
        "q06_fp4_zero_fraction": 100 * zero_fraction(quantize(x, "fp4_tensor"), x),
        "q07_nvfp4_error": 100 * relative_error(quantize(x, "nvfp4"), x),
        "q08_size_sensitive": _letter(Q08_OPTIONS, max(error_growth, key=error_growth.get)),
        "q09_max_params": B300.mem_cap / BYTES_PER_ELEM["nvfp4"] / 1e9,
        "q10_kv_left": (B300.mem_cap - MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"]) / 1e9,
        "q11_b200_bottleneck": _letter(Q11_OPTIONS, "exp" if exp_b200_128 > 1 else "mma"),
        "q12_b200_d64_ratio": 100 * exp_ratio(B200, "fp8", 64, 64),
        "q13_b300_exp_needed": B300.peak_flops("fp8") / flops_per_exp(64, 64) / 1e12,
        "q14_mla_effect": _letter(Q14_OPTIONS, mla_effect),
    }


EXPLANATIONS: dict[str, str] = {
    "q01_compute_headline":
        "trend_row(B300, \"nvfp4\")[\"compute\"]：B300 的 NVFP4 稠密算力 ÷ H100 的 FP8 稠密算力（H100 公布的最低精度）。"
        "这是厂商宣传'代际提升'的口径，博客写作 7.5 倍。",
    "q02_fp8_same_precision":
        "trend_row(B300, \"nvfp4\")[\"fp8\"]：同为 FP8 时 B300 ÷ H100。同一种精度比较，才是硬件本身的进步。",
    "q03_format_gain":
        "厂商口径 ÷ 同口径 = 换数值格式（FP8 → NVFP4）带来的那部分倍数：宣传数字里有一大半来自格式，而不是更多的晶体管。",
    "q04_least_grown":
        "看 trend_row(B300, \"nvfp4\") 的 compute、bandwidth、capacity、nvlink 四个倍数，取最小的那个："
        "NVLink 只翻了一倍，带宽约 2.4 倍，容量 3.6 倍，算力（厂商口径）最多。",
    "q05_ridge_growth":
        "B300 在 NVFP4 下的屋脊点 ÷ H100 在 FP8 下的屋脊点。屋脊点 = 峰值算力 / 带宽，算力涨得比带宽快，"
        "它就变大：同一个程序更容易落在 roofline 的带宽斜坡上（memory wall）。",
    "q06_fp4_zero_fraction":
        "zero_fraction(quantize(x, \"fp4_tensor\"), x) × 100。整张量只有一个缩放因子 amax/6，离群值把它拉大，"
        "|x| 小于 0.25 × 缩放因子的普通值都落到 0。",
    "q07_nvfp4_error":
        "relative_error(quantize(x, \"nvfp4\"), x) × 100。每 16 个数一个 FP8 缩放因子，离群值只影响自己那一块。",
    "q08_size_sensitive":
        "数据越多，样本里的最大值越大（重尾）。只有一个缩放因子的 FP4 per-tensor 跟着 amax 变粗，误差明显上升；"
        "块缩放方案只看块内最大值，几乎不受影响；FP8 的动态范围大，也几乎不变。",
    "q09_max_params":
        "B300.mem_cap / BYTES_PER_ELEM[\"nvfp4\"] / 1e9：288 GB 除以每个参数 4.5 bit = 0.5625 字节，不留 KV cache。",
    "q10_kv_left":
        "(B300.mem_cap − 3000 亿 × 0.5625 字节) / 1e9：权重占 168.75 GB，剩下的才能给 KV cache 和激活。",
    "q11_b200_bottleneck":
        "exp_ratio(B200, \"fp8\", 128, 128) > 1：SFU 做 exp 的时间比 Tensor Core 做两次矩阵乘法还长，注意力被 exp 卡住。",
    "q12_b200_d64_ratio":
        "exp_ratio(B200, \"fp8\", 64, 64) × 100。d_head 越小，每次 exp 配的矩阵乘法越少（4·d_head FLOP），比值越大。",
    "q13_b300_exp_needed":
        "让比值回到 100% 需要 exp 吞吐 = 峰值 FP8 算力 / flops_per_exp(64, 64)，换算成 10^12 exp/s。"
        "它是 B300 实际 10.7 T/s 的大约两倍。",
    "q14_mla_effect":
        "MLA 式 d_qk = 192、d_v = 128，每次 exp 配 2·192 + 2·128 = 640 FLOP，多于 d_head = 128 的 512 FLOP，"
        "所以 t_exp / t_mma 变小，更不容易被 exp 卡住。",
    "q15_explain_scaling":
        "评分要点：(1) 一个缩放因子由 amax 决定，离群值让它变大，普通值除以它后小于 0.25 就被舍入到 0；"
        "(2) 数据越多 amax 越大，所以整张量 FP4 的误差随数据量变大；(3) NVFP4 每 16 个数一个 FP8（E4M3）块因子，"
        "离群值只影响同一块，FP32 张量级因子把块因子挪进 E4M3 的范围；(4) 代价：每个数多 0.5 bit（4.5 bit/值）。",
    "q16_explain_codesign":
        "评分要点：(1) 每次 exp 配 4·d_head FLOP 的矩阵乘法，Tensor Core 变快 2.5 倍而 SFU 只从 4.5 到 5 T/s，"
        "B200 上 FP8 注意力 t_exp / t_mma ≈ 2，exp 成了瓶颈（Amdahl 定律）；(2) 硬件：Blackwell Ultra 把 exp 吞吐翻倍到 "
        "10.7 T/s；(3) 软件：把一部分 exp 用 FMA 上的多项式近似（FlashAttention-4）、和矩阵乘法流水重叠，"
        "或选更大的 head 维度 / MLA 式形状；(4) 结论：瓶颈随另一个单元变快而转移，软硬件要一起设计。",
}
