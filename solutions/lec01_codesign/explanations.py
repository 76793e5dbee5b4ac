"""What the released solutions say after each answer, and the rubric of the text questions — one
source for both (`python -m autograder release-solutions lec01_codesign` reads EXPLANATIONS; the
handout prints each text question's criteria with their points from RUBRICS, so the TA sees them
in formgrader next to the answer). Student-facing, so in Chinese. Numbers are formatted from the
answer key and hw_specs, never typed in; an explanation says how and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import hw_specs
from hw_specs import B200, B300, BYTES_PER_ELEM, H100
from solutions.lec01_codesign.answers import answer_key, h100_exp_on_tensor_basis
from solutions.lec01_codesign.codesign import exp_ratio, flops_per_exp
from solutions.lec01_codesign.handout_data import BACKWARD_FLOPS_PER_EXP, HEAD_DIM, MEASURED_FP8_FORWARD_GAIN

_KEY = answer_key()


def _sci(value: float) -> str:
    """5e15, 3.865e12: compact and exact enough for a formula in a sentence."""
    mantissa, exponent = f"{value:.4e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


_D = HEAD_DIM
_FPE = flops_per_exp(_D, _D)
_NV_BITS, _MX_BITS = 8 * BYTES_PER_ELEM["nvfp4"], 8 * BYTES_PER_ELEM["mxfp4"]
_B200_RATIO = exp_ratio(B200, "fp8", _D, _D)
_BACKWARD_FACTOR = (BACKWARD_FLOPS_PER_EXP["d_qk"] + BACKWARD_FLOPS_PER_EXP["d_v"]) * _D / _FPE
_FP8_GAIN = B200.peak_flops("fp8") / H100.peak_flops("fp8")
_SXM5 = f"{hw_specs.H100_SXM5_SMS} × {hw_specs.EX2_PER_SM_PER_CLK['Hopper']} × {hw_specs.H100_SXM5_BOOST_HZ / 1e9:g} GHz"
_GH100 = f"{hw_specs.GH100_FULL_SMS} × {hw_specs.EX2_PER_SM_PER_CLK['Hopper']} × {hw_specs.GH100_FULL_CLOCK_HZ / 1e9:g} GHz"


@dataclass(frozen=True)
class Criterion:
    """One line of a text question's rubric: what the answer must address, worth `points`."""

    points: int
    asks: str  # shown with the question (students and TAs): what to address
    expects: str  # shown in the released solutions: what a full-credit answer says


RUBRICS: dict[str, tuple[Criterion, ...]] = {
    "q20_explain_scaling": (
        Criterion(2, "为什么整张量 FP4 会把很多数变成 0（引用你算出的比例）",
                  "整张量只有一个缩放因子 amax / 6，由离群值决定；普通的数除以它之后 ≤ 0.25（E2M1 最小非零值 0.5 的一半，"
                  "恰好 0.25 也按平局取偶数舍入到 0），就变成 0。"),
        Criterion(1, "整张量 FP4 的误差怎样随数据量变化，为什么（引用你在 q10 的结果）",
                  "数据越多，重尾分布里出现的最大值越大，缩放因子越大，更多的数被舍入成 0；块缩放只看块内的最大值。"),
        Criterion(1, "NVFP4 赢过 MXFP4 主要靠什么：块大小还是缩放因子的格式（引用 2 × 2 消融的数字）",
                  f"E4M3 块因子（加 FP32 张量级因子）比 2 的幂因子准得多：块大小从 32 减到 16 只省下约 "
                  f"{_KEY['q12_block_size_gain']:.1f} 个百分点，缩放格式从 E8M0 换成 E4M3 省下约 "
                  f"{_KEY['q11_scale_format_gain']:.1f} 个百分点；2 的幂因子向下取整，块内最大值缩放后落在 [4, 8)，"
                  "超过 6 的部分被截断。"),
        Criterion(1, "代价是什么",
                  f"每个数多 {_NV_BITS - 4:g} bit（{_NV_BITS:g} bit/值，MXFP4 是 {_MX_BITS:g}），硬件要多做一级缩放（FP32 张量级因子）。"),
    ),
    "q21_explain_codesign": (
        Criterion(1, "一个看似不起眼的单元为什么会成为瓶颈（用演示 3 的数字）",
                  f"每次 exp 只配 2·d_qk + 2·d_v FLOP 的矩阵乘法；Tensor Core 的 FP8 算力涨了约 {_FP8_GAIN:.1f} 倍，SFU 几乎没涨，"
                  f"B200 上 FP8、d_head = {_D} 的 t_exp / t_mma 约 {_B200_RATIO:.0%}：Amdahl 定律。"),
        Criterion(1, "硬件做了什么",
                  f"Blackwell Ultra 把 SFU 的 exp 吞吐翻倍（{B300.exp_per_s / 1e12:g} T/s），比值回到 100% 以下；"
                  "Rubin 每个 SM 每个时钟的 ex2 次数再翻倍。"),
        Criterion(1, "软件能做什么（引用 q16、q17）",
                  f"把约 {_KEY['q16_software_exp_share']:.0f}% 的 exp 挪到 FMA 单元上的多项式（FlashAttention-4 的做法），"
                  f"让 exp 和矩阵乘法流水重叠；反向传播每次 exp 配的矩阵乘法是前向的 {_BACKWARD_FACTOR:g} 倍，比值约 "
                  f"{_KEY['q17_backward_ratio']:.0f}%，本来就不太受 exp 限制；模型上用更大的 head 或 MLA 式形状。"),
        Criterion(1, "模型和实测差在哪里（引用 q18、q19）",
                  f"模型说 B300 比 B200 快约 {_KEY['q18_model_speedup']:.2f} 倍，实测端到端约 {MEASURED_FP8_FORWARD_GAIN:g} 倍："
                  "模型假设 Tensor Core 达到峰值、exp 与矩阵乘法完全重叠、softmax 的其他运算（求最大值、减法、缩放、求和）"
                  f"不占时间；矩阵乘法只要达到峰值的约 {_KEY['q19_mma_efficiency']:.0f}% 就能解释差距。"),
    ),
}

EXPLANATIONS = {
    "q01_compute_headline": """
        `trend_row(B300, "nvfp4")["compute"]` = B300 的 NVFP4 稠密算力 ÷ H100 公布的最低精度（FP8）稠密算力。
        这是厂商口径："每一代都用自己最低的精度"来比，所以这个倍数里混着两件事：芯片本身变快了，以及数值格式从 8 位降到了 4 位。
        """,
    "q02_format_gain": """
        q01 ÷（同为 FP8 的算力之比 `trend_row(B300, "nvfp4")["fp8"]`）：厂商口径的倍数里，有这么多倍来自"换了更低精度的格式"，
        而不是同精度下算得更快。读任何代际对比之前，先问一句：两边比的是不是同一种精度？
        """,
    "q03_least_grown": """
        把 `trend_row(B300, "nvfp4")` 里算力、带宽、容量、NVLink 四个倍数放在一起取最小值。
        算力涨得最快、数据搬运涨得最慢——越来越多的程序会被数据搬运而不是算力限制。
        """,
    "q04_ridge_same_precision": """
        `ridge_point(B300, "fp8") / ridge_point(H100, "fp8")`：同一种精度下，屋脊点只涨了几个百分点——
        同样的 FP8 运算，B300 的算力和带宽涨得差不多。
        """,
    "q05_ridge_mixed_precision": """
        `ridge_point(B300, "nvfp4") / ridge_point(H100, "fp8")`：各取最低精度时屋脊点涨了三倍多，但其中约 3 倍来自 q02 的
        格式变化（NVFP4 的算力是 FP8 的 3 倍），不是带宽落后于同一种运算。
        """,
    "q06_memory_wall": """
        内存墙说的是：做**同样的运算**，算力比带宽涨得快。只有同精度的比值（q04）衡量这件事；混合精度的比值（q05）
        把 q02 的格式收益算进了屋脊点，会把内存墙夸大约 3 倍——正是 q02 提醒过的陷阱。不过换成 NVFP4 的程序确实需要
        更高的算术强度才能用满算力：q07–q09 看的就是这个。
        """,
    "q07_decode_intensity": """
        batch = 1 的 decode：每个 token 把每个权重从 HBM 读一次（0.5625 字节），只做一次乘加（2 FLOP）。
        算术强度 = 2 / `BYTES_PER_ELEM["nvfp4"]` FLOP/B，远低于屋脊点：完全受带宽限制。
        """,
    "q08_decode_tokens_per_s": """
        带宽受限时每秒的 token 数 = 带宽 ÷ 每个 token 要读的字节数 = `B300.mem_bw / (3000 亿 × 0.5625)`。
        这是只读权重的上限：KV cache 的读取会让它更低。
        """,
    "q09_decode_batch": """
        batch 个序列一起 decode 时，每读一次权重做 batch 倍的运算，算术强度乘以 batch。
        到达屋脊点需要 batch = `ridge_point(B300, "nvfp4")` ÷ q07：几百个并发序列——这就是推理服务要做大 batch 的原因。
        """,
    "q10_size_sensitive": """
        比较每种方案在 2^18 和 2^12 个数上的误差之差，取增加最多的那个。只有整张量的缩放因子依赖"全体数据的最大值"：
        数据越多，重尾分布里出现的最大值越大，缩放因子越大，小数越容易被舍入成 0；块缩放方案只看 16 或 32 个数，几乎不受数据量影响。
        """,
    "q11_scale_format_gain": """
        块大小都是 16：`quantize(x, "mxfp4", block_size=16)` 的误差减去 `quantize(x, "nvfp4")` 的误差，写成百分点。
        2 的幂缩放因子向下取整，块内最大值缩放后落在 [4, 8)，超过 6 的被截断，其余的数用到的网格也更粗；
        E4M3 块因子几乎把块内最大值正好放到 6。
        """,
    "q12_block_size_gain": """
        缩放格式都是 E4M3：`quantize(x, "nvfp4", block_size=32)` 的误差减去 `quantize(x, "nvfp4")` 的误差。
        和 q11 比一比：NVFP4 比 MXFP4 准，主要靠缩放因子的格式，块大小只占小头。
        """,
    "q13_bottleneck": """
        演示 3 的模型只比较 exp 和矩阵乘法：长序列的 prefill / 训练里，FlashAttention 把分块留在片上，HBM 和 NVLink
        不在这个比较里。`exp_ratio(B200, "fp8", 128, 128)` 大于 1：做完一个分数的 exp 比做完它配套的矩阵乘法还慢，
        所以限制速度的是 SFU 的 exp。（decode 的注意力则受 HBM 带宽限制，那是另一个问题。）
        """,
    "q14_mla_effect": """
        比较 `exp_ratio(B300, "fp8", 192, 128)` 和 `exp_ratio(B300, "fp8", 128, 128)`。MLA 式形状的 d_qk 更大，
        每次 exp 配更多矩阵乘法，t_mma 变长而 t_exp 不变，比值变小：模型结构的选择也能缓解 exp 瓶颈。
        """,
    "q15_h100_tensor_basis": f"""
        表里 H100 的 {H100.exp_per_s / 1e12:g} T exp/s 按完整的 GH100 算（{_GH100}），而 {H100.peak_flops("bf16") / 1e12:g} TFLOPS
        是 H100 SXM5 的 {_SXM5.split(" ×")[0]} 个 SM、{hw_specs.H100_SXM5_BOOST_HZ / 1e9:g} GHz。同一口径下 exp 吞吐 = {_SXM5}
        ≈ {_sci(h100_exp_on_tensor_basis())} exp/s（FlashAttention-3 用的 3.9 T），比值 ≈ {_KEY["q15_h100_tensor_basis"]:.0f}%
        （FP8 则翻倍）：讲义按 {H100.exp_per_s / 1e12:g} T 算出的 {exp_ratio(H100, "bf16", _D, _D):.0%} 偏乐观。
        比较两个数之前，先确认口径一致。
        """,
    "q16_software_exp_share": """
        SFU 只做 (1 − f) 的 exp 时，t_exp 变成原来的 (1 − f) 倍；令 (1 − f) × `exp_ratio(B200, "fp8", 128, 128)` = 1，
        f = 1 − 1 / 比值。这假设 FMA 单元还有空闲——它们同时要做 softmax 的其他运算，所以实际能挪的更少。
        """,
    "q17_backward_ratio": f"""
        反向传播每个分数仍只有一次 exp（重算 P），却有 5 次矩阵乘法：重算 S = QKᵀ、dV = Pᵀ·dO、dP = dO·Vᵀ、dQ = dS·K、
        dK = dSᵀ·Q，合计 6·d_qk + 4·d_v FLOP。d_head = {_D} 时是前向的 {_BACKWARD_FACTOR:g} 倍，比值降到 100% 以下：反向不太在乎 exp。
        """,
    "q18_model_speedup": f"""
        模型里一个分数的时间 = max(t_exp, t_mma)（exp 和矩阵乘法完全重叠）。B200 受 exp 限制（1 / {_sci(B200.exp_per_s)} 秒），
        B300 的 exp 够快，变成受矩阵乘法限制（{_FPE} / {_sci(B300.peak_flops("fp8"))} 秒）：两者之比约
        {_KEY["q18_model_speedup"]:.2f} 倍。
        """,
    "q19_mma_efficiency": f"""
        实测端到端约快 {MEASURED_FP8_FORWARD_GAIN - 1:.0%}。若 B200 仍受 exp 限制、B300 受矩阵乘法限制，而矩阵乘法只达到峰值的 a：
        {_FPE} / (a × {_sci(B300.peak_flops("fp8"))}) = (1 / {_sci(B200.exp_per_s)}) / {MEASURED_FP8_FORWARD_GAIN:g}，
        解得 a ≈ {_KEY["q19_mma_efficiency"]:.0f}%。模型还漏掉了 softmax 的其他运算（在 FMA 单元上）和不完美的重叠；
        这些都会让实测的提升小于模型。
        """,
}


def rubric_markdown(item: str, *, with_expectations: bool) -> str:
    """The criteria of a text question with their points; with what a full answer says, for the solutions."""
    lines = [f"评分标准（共 {sum(c.points for c in RUBRICS[item])} 分）："]
    for c in RUBRICS[item]:
        lines.append(f"- （{c.points} 分）{c.asks}" + (f"：{c.expects}" if with_expectations else ""))
    return "\n".join(lines)


EXPLANATIONS.update({item: rubric_markdown(item, with_expectations=True) for item in RUBRICS})
