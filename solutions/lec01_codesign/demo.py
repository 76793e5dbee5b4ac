"""The lecture's three demos, computed with the reference functions.

Every number in a table or an observation is computed here from `hw_specs` and the reference
functions; the only literals are the demo's inputs (head shapes, model size, seed) and claims
quoted from the literature, which are named constants below with their source.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from console import fmt_bytes, fmt_num, print_header, print_observations, print_table
from hw_specs import (
    B200,
    B300,
    BYTES_PER_ELEM,
    EX2_PER_SM_PER_CLK,
    GH100_FULL_SMS,
    H100,
    H100_SXM5_BOOST_HZ,
    H100_SXM5_SMS,
    PRECISIONS,
    RUBIN,
    RUBIN_SMS,
)
from solutions.lec01_codesign.codesign import (
    E2M1_MAX,
    SCHEMES,
    exp_ratio,
    flops_per_exp,
    quantize,
    ridge_point,
    trend_row,
)

# Claims quoted from the literature (not derivable from the chip table).
BLOG_B300_SPEEDUP = 7.5  # 'Inside NVIDIA Blackwell Ultra': "7.5x" dense NVFP4 vs Hopper
MA_PATTERSON_2026 = {"years": "2012–2022", "fp64_growth": 80, "bandwidth_growth": 17}

# Demo inputs.
TREND_CHIPS = (H100, B200, B300, RUBIN)
ATTENTION_CHIPS = (H100, B200, B300)
HEAD_SHAPES = (("d_head = 64", 64, 64), ("d_head = 128", 128, 128), ("MLA 式（d_qk=192, d_v=128）", 192, 128))
MODEL_PARAMS = 300e9
E2M1_BITS = 4  # a plain FP4 value: 1 sign, 2 exponent, 1 mantissa bit


def lowest_precision(chip) -> str:
    """The vendor's headline precision: the lowest-bit one the chip publishes."""
    return next(p for p in PRECISIONS if chip.has(p))


def _times(ratio) -> str:
    return "-" if ratio is None else f"{ratio:.1f}×"


def _pct(fraction: float, digits: int = 0) -> str:
    return f"{fraction * 100:.{digits}f}%"


# ---------------------------------------------------------------------------
# Demo 1: generation trends
# ---------------------------------------------------------------------------
def demo1_trends() -> None:
    print_header("演示 1：四代 NVIDIA 数据中心 GPU 的关键规格（相对 H100 的倍数）")
    rows, trend = [], {}
    for chip in TREND_CHIPS:
        low = lowest_precision(chip)
        t = trend[chip.name] = trend_row(chip, low)
        rows.append([
            chip.name, f"{fmt_num(chip.peak_flops(low))}FLOP/s ({low})", _times(t["compute"]),
            _times(t["fp8"]), _times(t["bandwidth"]), _times(t["capacity"]), _times(t["nvlink"]),
            _times(t["power"]), f"{t['ridge']:,.0f}",
        ])
    print_table(["芯片", "最低精度稠密算力", "算力倍数", "FP8 倍数", "带宽倍数", "容量倍数", "NVLink 倍数",
                 "功耗倍数", "屋脊点 FLOP/B"], rows)

    h100, b300 = trend[H100.name], trend[B300.name]
    same_ridge = ridge_point(B300, "fp8") / ridge_point(H100, "fp8")
    nvfp4_wall = b300["ridge"] / h100["ridge"] * BYTES_PER_ELEM["nvfp4"] / BYTES_PER_ELEM["fp8"]
    mp = MA_PATTERSON_2026
    print_observations([
        f"按厂商口径（各代最低精度），Blackwell Ultra 的算力是 H100 的 {b300['compute']:.1f} 倍"
        f"（博客写 {BLOG_B300_SPEEDUP:.1f} 倍）；但同为 FP8 只有 {b300['fp8']:.1f} 倍——"
        f"其余的 {b300['compute'] / b300['fp8']:.1f} 倍来自换了更低的数值格式。读厂商数字时，先确认比较的是不是同一种精度。",
        f"带宽只涨了 {b300['bandwidth']:.1f} 倍，容量涨了 {b300['capacity']:.1f} 倍，NVLink 涨了 {b300['nvlink']:.1f} 倍："
        f"算力增长远快于带宽和互连。屋脊点从 {h100['ridge']:,.0f} 涨到 {b300['ridge']:,.0f}，但这是各取最低精度的比："
        f"同为 FP8 只从 {h100['ridge']:,.0f} 涨到 {ridge_point(B300, 'fp8'):,.0f}（{same_ridge:.2f} 倍），同样的运算几乎没碰到"
        f"更高的'内存墙'（memory wall）；换成 NVFP4 的内核每个数只搬 {BYTES_PER_ELEM['nvfp4']:g} 字节，自己的算术强度也涨了 "
        f"{BYTES_PER_ELEM['fp8'] / BYTES_PER_ELEM['nvfp4']:.2f} 倍，它碰到的墙涨了约 {nvfp4_wall:.2f} 倍，"
        f"不是 {b300['ridge'] / h100['ridge']:.1f} 倍。",
        f"Ma & Patterson（2026）给过一个更长期的数字：{mp['years']} 年 NVIDIA GPU 的 64 位算力涨了 "
        f"{mp['fp64_growth']} 倍，带宽只涨了 {mp['bandwidth_growth']} 倍。",
        f"Rubin 换成 HBM4，带宽一下涨到 {fmt_bytes(RUBIN.mem_bw)}/s（Blackwell Ultra 的 "
        f"{RUBIN.mem_bw / B300.mem_bw:.2f} 倍）：当 decode 受限于带宽，下一代最该补的就是带宽。",
        f"功耗也在涨（{H100.power_w:,.0f} W → {B300.power_w:,.0f} W，{b300['power']:.1f} 倍）："
        "每块芯片更强，但每瓦的产出（tok/s/MW）才是数据中心真正在乎的。",
    ])


# ---------------------------------------------------------------------------
# Demo 2: NVFP4's two-level scaling
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class QuantError:
    """How one scheme did on the demo data."""

    scheme: str
    bits_per_value: float
    relative_error: float  # ||q - x|| / ||x||
    zero_fraction: float  # share of nonzero inputs that became 0

    @property
    def sqnr_db(self) -> float:
        return 20 * np.log10(1 / self.relative_error)


BITS_PER_VALUE = {
    "fp8_tensor": BYTES_PER_ELEM["fp8"] * 8,
    "fp4_tensor": E2M1_BITS,
    "mxfp4": BYTES_PER_ELEM["mxfp4"] * 8,
    "nvfp4": BYTES_PER_ELEM["nvfp4"] * 8,
}


def heavy_tailed_weights(n: int = 1 << 20, seed: int = 0) -> np.ndarray:
    """Student-t (df = 5) × 0.02: mostly near 0, with more outliers than a Gaussian."""
    return np.random.default_rng(seed).standard_t(df=5, size=n) * 0.02


def quantization_errors(x: np.ndarray) -> dict[str, QuantError]:
    errors = {}
    for scheme in SCHEMES:
        q = quantize(x, scheme)
        errors[scheme] = QuantError(
            scheme=scheme,
            bits_per_value=BITS_PER_VALUE[scheme],
            relative_error=float(np.linalg.norm(q - x) / np.linalg.norm(x)),
            zero_fraction=float(np.mean((q == 0) & (x != 0))),
        )
    return errors


@dataclass(frozen=True)
class Saturation:
    """How often MXFP4's FLOOR scale pushes a block's maximum past E2M1's 6, and what it costs."""

    block_fraction: float  # share of blocks whose maximum lands above 6 after scaling (then clips)
    error_share: float  # share of MXFP4's squared error carried by the clipped elements
    scaled_max_range: tuple[float, float]  # smallest and largest block maximum after scaling


def mxfp4_saturation(x: np.ndarray) -> Saturation:
    """The block maximum over 2^(floor(log2 max) − 2) lies in [4, 8): above 6 it saturates."""
    block = SCHEMES["mxfp4"]
    blocks = x.reshape(-1, block)
    bmax = np.abs(blocks).max(axis=1, keepdims=True)
    live = bmax[:, 0] > 0
    blocks, bmax = blocks[live], bmax[live]
    _, k = np.frexp(bmax)
    scaled = np.abs(blocks) / np.ldexp(1.0, k - 3)
    clipped = scaled > E2M1_MAX
    error = (quantize(x, "mxfp4").reshape(-1, block)[live] - blocks) ** 2
    block_max = scaled.max(axis=1)
    return Saturation(float(clipped.any(axis=1).mean()), float(error[clipped].sum() / error.sum()),
                      (float(block_max.min()), float(block_max.max())))


def demo2_nvfp4(n: int = 1 << 20, seed: int = 0) -> None:
    print_header(f"演示 2：NVFP4 的两级缩放——同样 4 位，误差差多少？（真的量化 {n:,} 个数）")
    x = heavy_tailed_weights(n, seed)
    errors = quantization_errors(x)
    saturation = mxfp4_saturation(x)
    mx_block, nv_block = SCHEMES["mxfp4"], SCHEMES["nvfp4"]
    labels = {
        "fp8_tensor": "FP8 E4M3，整个张量一个缩放",
        "fp4_tensor": "FP4 E2M1，整个张量一个缩放",
        "mxfp4": f"MXFP4：每 {mx_block} 个数一个 2 的幂缩放",
        "nvfp4": f"NVFP4：每 {nv_block} 个数一个 FP8 缩放 + 张量级 FP32",
    }
    print_table(["方案", "比特/数", "相对误差", "SQNR (dB)", "被量化成 0 的比例"], [
        [labels[e.scheme], f"{e.bits_per_value:g}", _pct(e.relative_error, 2), f"{e.sqnr_db:.1f}",
         _pct(e.zero_fraction, 1)]
        for e in errors.values()
    ])

    nv_bits = BITS_PER_VALUE["nvfp4"]
    weights = MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"]
    hbm = B300.mem_cap
    print(f"\n存储账：{MODEL_PARAMS / 1e8:.0f} 亿参数 × {nv_bits:g} bit = {fmt_bytes(weights)}，"
          f"放进 {fmt_bytes(hbm)}（B300）后还剩 {fmt_bytes(hbm - weights)} 给 KV cache；"
          f"{fmt_bytes(hbm)} 最多能放 {hbm / BYTES_PER_ELEM['nvfp4'] / 1e9:.0f}B 参数（不留 KV）。")

    fp8, fp4, mx, nv = (errors[s] for s in ("fp8_tensor", "fp4_tensor", "mxfp4", "nvfp4"))
    print_observations([
        f"整个张量只用一个缩放因子时，FP4 的相对误差是 {_pct(fp4.relative_error, 2)}：为了照顾少数离群的大值，"
        f"缩放因子被拉得很大，{_pct(fp4.zero_fraction, 1)} 的'普通'数都被量化成了 0。",
        f"把缩放因子缩小到每 {nv_block} 个数一个（NVFP4），误差降到 {_pct(nv.relative_error, 2)}——"
        f"每一小块都按自己的最大值缩放，离群值只'连累'同一块里的 {nv_block - 1} 个邻居。"
        f"代价是每个数多 {nv_bits - E2M1_BITS:g} bit。",
        f"MXFP4 的块更大（{mx_block}）、缩放因子只能是 2 的幂，误差 {_pct(mx.relative_error, 2)}，介于两者之间。"
        "它的指数向下取整（FLOOR），块内最大值缩放后落在 [4, 8)：超过 6 的部分被截断——这组数据里 "
        f"{_pct(saturation.block_fraction, 0)} 的块截断了自己的最大值，这些元素贡献了 MXFP4 平方误差的 "
        f"{_pct(saturation.error_share, 0)}。NVIDIA 说 NVFP4 'markedly lower error than standard FP4'，"
        "在这组数据上可以复现这个方向。",
        f"作为对照，{fp8.bits_per_value:g} 位的 FP8 误差只有 {_pct(fp8.relative_error, 2)}。"
        "博客说 NVFP4 的模型精度'通常与 FP8 相差不到约 1%'——那是**模型任务精度**，不是这里的逐元素误差；"
        "两者的关系要靠第 3 讲的实验来理解。",
    ])


# ---------------------------------------------------------------------------
# Demo 3: the softmax exp bottleneck
# ---------------------------------------------------------------------------
def demo3_exp_bottleneck() -> None:
    print_header("演示 3：softmax 的指数运算会不会拖慢注意力？（t_exp / t_mma > 100% 表示 exp 是瓶颈）")
    rows = []
    for chip in ATTENTION_CHIPS:
        for precision in ("bf16", "fp8"):
            rows.append([chip.name, precision, f"{chip.exp_per_s / 1e12:.1f} T/s"]
                        + [_pct(exp_ratio(chip, precision, dqk, dv)) for _, dqk, dv in HEAD_SHAPES])
    print_table(["芯片", "注意力矩阵乘法精度", "SFU exp 吞吐"] + [label for label, _, _ in HEAD_SHAPES], rows)

    d = 128
    fpe = flops_per_exp(d, d)
    small = {chip.name: exp_ratio(chip, "fp8", 64, 64) for chip in ATTENTION_CHIPS}
    b300_fp8 = exp_ratio(B300, "fp8", d, d)
    h100_ex2 = H100_SXM5_SMS * EX2_PER_SM_PER_CLK["Hopper"] * H100_SXM5_BOOST_HZ  # on the tensor peaks' basis
    h100_same_basis = {p: H100.peak_flops(p) / fpe / h100_ex2 for p in ("bf16", "fp8")}
    verdict = "都超过" if min(small.values()) > 1 else "并非都超过"
    print_observations([
        f"Hopper 上 exp 基本不是瓶颈：d_head = {d} 时（每次 exp 配 {fpe} FLOP 的矩阵乘法），"
        f"BF16 下 exp 只需要矩阵乘法时间的 {_pct(exp_ratio(H100, 'bf16', d, d))}，"
        f"FP8 下 {_pct(exp_ratio(H100, 'fp8', d, d))}。口径要小心：{H100.exp_per_s / 1e12:.1f} T exp/s 与完整的 GH100"
        f"（{GH100_FULL_SMS} 个 SM）相符，而 {H100.peak_flops('bf16') / 1e12:g} TFLOPS 是 H100 SXM5 的 {H100_SXM5_SMS} 个 SM、"
        f"{H100_SXM5_BOOST_HZ / 1e9:g} GHz；同一口径下这两个比值是 {_pct(h100_same_basis['bf16'])} / "
        f"{_pct(h100_same_basis['fp8'])}。",
        f"Blackwell 的 Tensor Core（FP8）比 Hopper 快了约 {B200.peak_flops('fp8') / H100.peak_flops('fp8'):.1f} 倍，"
        f"exp 吞吐却只从 {H100.exp_per_s / 1e12:.1f} 涨到 {B200.exp_per_s / 1e12:.1f} T/s："
        f"FP8 注意力、d_head = {d} 时，exp 需要的时间是矩阵乘法的约 {_pct(exp_ratio(B200, 'fp8', d, d))}——"
        "注意力的速度被 SFU 卡住了，再快的 Tensor Core 也没用（瓶颈模型：max(t_exp, t_mma) 取慢的那个）。",
        f"Blackwell Ultra 把 exp 吞吐提高到 {B300.exp_per_s / 1e12:.1f} T/s（Blackwell 的 "
        f"{B300.exp_per_s / B200.exp_per_s:.1f} 倍），d_head = {d} 的比值回到约 {_pct(b300_fp8)}"
        f"{'，低于 100%' if b300_fp8 < 1 else '，仍高于 100%'}。这就是博客里'accelerated softmax'的来历："
        "一个看似不起眼的单元，因为别的单元变快而成了瓶颈。",
        "软件也在想办法：FlashAttention-4 等内核把一部分 exp 改用普通 FMA 单元上的多项式来近似计算，"
        "把负载从 SFU 分出去。NVIDIA 公布的每个 SM 每个时钟的 ex2 次数：Blackwell "
        f"{EX2_PER_SM_PER_CLK['Blackwell']}，Blackwell Ultra FP32 和 FP16 都是 {EX2_PER_SM_PER_CLK['Blackwell Ultra FP32']}；"
        f"Rubin 的 FP32 仍是 {EX2_PER_SM_PER_CLK['Rubin FP32']}，只有 FP16 再翻倍到 {EX2_PER_SM_PER_CLK['Rubin FP16']}。"
        f"Rubin 有 {RUBIN_SMS} 个 SM，但没有公布时钟，所以表里没有 exp/s 的绝对数字。"
        "硬件和软件在同一个瓶颈上一起使劲——这就是协同设计。",
        "d_head 越小，每次 exp 配的矩阵乘法越少，越容易被 exp 卡住（d_head = 64 时 FP8 的比值："
        + "、".join(f"{name} {_pct(r)}" for name, r in small.items())
        + f"，{verdict} 100%）：模型结构的一个'小参数'，直接决定了硬件的哪个单元成为瓶颈。",
    ])


def main() -> None:
    demo1_trends()
    demo2_nvfp4()
    demo3_exp_bottleneck()
