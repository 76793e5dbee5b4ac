"""Source of assignments/lec01_codesign/handout.ipynb (`python -m autograder build lec01_codesign`).

`CELLS` lists the notebook top to bottom. Question prompts say what is asked; the build adds the
title, points, answer format and tolerance from grading.toml. Each question's `answer` is the
reference answer: it appears only in the answered notebook (`write_reference_submission`).
Answers are computed with the student's own functions, the way a student would.
"""

from __future__ import annotations

import inspect
import textwrap

from authoring.cells import Code, FunctionCheck, Markdown, Question
from solutions.lec01_codesign import handout_data
from solutions.lec01_codesign.handout_data import (
    DEMO2_N,
    DEMO2_SEED,
    MODEL_PARAMS,
    Q04_OPTIONS,
    Q08_OPTIONS,
    Q11_OPTIONS,
    Q14_OPTIONS,
    SIZE_SWEEP,
)


def _with_options(prompt: str, options: dict[str, tuple[str, str]]) -> str:
    """A choice question's prompt followed by its options as a list."""
    listed = "\n".join(f"- **{letter}**：{label}" for letter, (_, label) in options.items())
    return f"{textwrap.dedent(prompt).strip()}\n\n{listed}"


def _letters(options: dict[str, tuple[str, str]]) -> str:
    """The letter -> name mapping as a Python literal, for the reference answers."""
    return repr({letter: name for letter, (name, _) in options.items()})


_DEMO2_DATA = (
    f"DEMO2_SEED = {DEMO2_SEED}\n"
    f"DEMO2_N = {DEMO2_N}  # 讲义量化 2^20 个数；这里用 2^{DEMO2_N.bit_length() - 1} 个，让 notebook 跑得快\n"
    f"SIZE_SWEEP = {SIZE_SWEEP!r}  # 2^12 … 2^18\n\n\n"
    + "\n\n".join(inspect.getsource(f) for f in (handout_data.demo_weights, handout_data.relative_error,
                                                   handout_data.zero_fraction))
)

CELLS = (
    Markdown("""
        # CS349E · 第 1 讲 · 练习：用 roofline 读懂 Blackwell Ultra 的设计取舍

        这份 notebook 跟着讲义 `05_codesign_blackwell_ultra.py` 的三个演示走一遍，但用的是**你自己**在
        `codesign.py` 里实现的函数：

        - 演示 1：代际趋势——`ridge_point`、`trend_row`
        - 演示 2：NVFP4 的两级缩放——`round_e4m3`、`to_e2m1`、`quantize`
        - 演示 3：softmax 的 exp 瓶颈——`flops_per_exp`、`exp_ratio`

        【怎么做】
        1. 在 `codesign.py` 里实现 7 个函数（docstring 写明了全部要求），在本文件夹里运行 `pytest` 跑公开测试。
        2. 从上到下运行这份 notebook。每个评分项下面的 `check(...)` 格做公开检查：函数跑公开用例；
           报告题只检查**格式**（有没有作答、类型、单位是否合理），**不会**告诉你答案对不对。
        3. 回答报告题：每道题写明了变量名、类型、单位和容差，把答案赋给那个变量；文字题直接写在 Markdown 格里。

        【注意】
        - 改了 `codesign.py` 之后，重新运行下面第一个代码格（它会重新加载你的代码），不必重启 kernel。
        - 评分时会在干净的环境里从头到尾运行整个 notebook：答案要由格子里的代码或数字给出，
          不能依赖你手动运行格子的顺序。
        - 带锁的格子（题目、评分格）不要删除、复制或修改；变量名不要改。
        - 图里的坐标轴用英文标注（matplotlib 的默认字体没有中文字形）。
        """),
    Code("""
        from selfcheck import check

        import importlib

        import matplotlib.pyplot as plt
        import numpy as np

        import codesign
        from console import fmt_num, print_table
        from hw_specs import B200, B300, BYTES_PER_ELEM, H100, RUBIN

        importlib.reload(codesign)  # 改了 codesign.py 以后重新运行本格即可
        from codesign import exp_ratio, flops_per_exp, quantize, ridge_point, round_e4m3, to_e2m1, trend_row
        """, locked=True),

    # ------------------------------------------------------------------ demo 1
    Markdown("""
        ## 演示 1：代际趋势

        【问题】Hopper → Blackwell → Blackwell Ultra → Rubin（公告），算力、带宽、容量、互连各涨了多少？谁掉了队？

        【口径】每一代取它公布的"最低精度"的稠密算力（H100 是 FP8，之后是 NVFP4）——这是厂商宣传"代际提升"时的口径；
        同时列出 FP8 做同口径对比。所有倍数都相对 H100。屋脊点 = 峰值算力 / HBM 带宽，单位 FLOP/B。

        【边界】Rubin 的 50 PFLOPS 是 "up to"，没有公布 FP8 和功耗（表里记作 "-"）。
        """),
    FunctionCheck("ridge_point"),
    FunctionCheck("trend_row"),
    Code("""
        TREND_CHIPS = [(H100, "fp8"), (B200, "nvfp4"), (B300, "nvfp4"), (RUBIN, "nvfp4")]
        trend = {chip.name: trend_row(chip, low) for chip, low in TREND_CHIPS}


        def times(ratio):
            return "-" if ratio is None else f"{ratio:.2f}×"


        print_table(
            ["芯片", "最低精度稠密算力", "算力倍数", "FP8 倍数", "带宽倍数", "容量倍数", "NVLink 倍数", "功耗倍数",
             "屋脊点 FLOP/B"],
            [[chip.name, f"{fmt_num(chip.peak_flops(low))}FLOP/s ({low})"]
             + [times(trend[chip.name][key]) for key in ("compute", "fp8", "bandwidth", "capacity", "nvlink", "power")]
             + [f"{trend[chip.name]['ridge']:,.0f}"]
             for chip, low in TREND_CHIPS],
        )
        """),
    Markdown("""
        【图：四代芯片的 roofline】横轴是算术强度（每从 HBM 读 1 字节做多少次运算），纵轴是能达到的算力：
        强度低于屋脊点时受带宽限制（斜线），高于屋脊点时受算力限制（水平线）。圆点标出每块芯片的屋脊点。
        """),
    Code("""
        intensity = np.logspace(0, 4.5, 200)  # FLOP/B
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for chip, low in TREND_CHIPS:
            peak = chip.peak_flops(low)
            (line,) = ax.loglog(intensity, np.minimum(peak, intensity * chip.mem_bw), label=f"{chip.name} ({low})")
            ridge = ridge_point(chip, low)
            ax.plot([ridge], [peak], "o", color=line.get_color())
            ax.annotate(f"{ridge:,.0f}", (ridge, peak), textcoords="offset points", xytext=(5, -13), fontsize=8)
        ax.set_xlabel("arithmetic intensity (FLOP/B)")
        ax.set_ylabel("attainable FLOP/s")
        ax.set_title("Roofline at each chip's lowest precision (dots: ridge points)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        plt.show()
        """),
    Question("q01_compute_headline", """
        按厂商口径，B300（Blackwell Ultra）的算力是 H100 的多少倍？即 B300 的 NVFP4 稠密算力 ÷ H100 的 FP8 稠密算力
        （`trend_row` 的 `"compute"`）。
        """, """
        q01_compute_headline = trend["B300"]["compute"]
        """),
    Question("q02_fp8_same_precision", """
        同为 FP8，B300 的稠密算力是 H100 的多少倍？
        """, """
        q02_fp8_same_precision = trend["B300"]["fp8"]
        """),
    Question("q03_format_gain", """
        q01 的倍数里，有多少来自"换了更低的数值格式"（FP8 → NVFP4）？用 q01 的倍数除以 q02 的倍数。
        读厂商数字时，先确认比较的是不是同一种精度。
        """, """
        q03_format_gain = trend["B300"]["compute"] / trend["B300"]["fp8"]
        """),
    Question("q04_least_grown", _with_options("""
        从 H100 到 B300，下面四项里哪一项涨得**最少**（按 `trend_row(B300, "nvfp4")` 的倍数）？
        """, Q04_OPTIONS), f"""
        growth = {{letter: trend["B300"][key] for letter, key in {_letters(Q04_OPTIONS)}.items()}}
        q04_least_grown = min(growth, key=growth.get)
        """),
    Question("q05_ridge_growth", """
        B300 在 NVFP4 下的屋脊点是 H100 在 FP8 下的屋脊点的多少倍？（屋脊点变大意味着什么？想想"内存墙"。）
        """, """
        q05_ridge_growth = trend["B300"]["ridge"] / trend["H100"]["ridge"]
        """),

    # ------------------------------------------------------------------ demo 2
    Markdown("""
        ## 演示 2：NVFP4 的两级缩放

        【问题】同样是 4 位，"整个张量一个缩放因子"的 FP4 和"每 16 个数一个 FP8 缩放因子 + 张量级 FP32 缩放"的 NVFP4，
        误差差多少？用你的 `quantize` 真的量化一组权重看看。

        先实现两个舍入函数。它们和讲义的版本有一处关键不同：**平局取偶数**（ties to even），和硬件一致。
        """),
    FunctionCheck("round_e4m3"),
    FunctionCheck("to_e2m1"),
    Markdown("""
        【平局】下面这些数都正好落在两个 E2M1 可表示值的正中间。讲义用 `argmin` 找最近点，平局时偏向较小的值；
        硬件（PTX `cvt.rn.satfinite.e2m1x2.f32`）取尾数为偶数的那个。对比一下你的 `to_e2m1`：
        """),
    Code("""
        E2M1_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
        ties = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0])
        lecture_argmin = E2M1_GRID[np.abs(ties[:, None] - E2M1_GRID).argmin(axis=-1)]
        print_table(["y", "讲义的 argmin", "你的 to_e2m1(y)"],
                    [[f"{y:g}", f"{a:g}", f"{b:g}"] for y, a, b in zip(ties, lecture_argmin, to_e2m1(ties))])
        """),
    FunctionCheck("quantize"),
    Markdown("""
        【数据】自由度为 5 的 Student-t 分布 × 0.02：大部分数集中在 0 附近，但比高斯分布有更多的"大值"（重尾）——
        真实模型的权重和激活都有这种离群值（outlier）。下面的格子给出数据和两个误差指标的定义（评分用的是同样的定义）。
        """),
    Code(_DEMO2_DATA, locked=True),
    Code("""
        # 每个数平均几比特：MXFP4 = 4 + 8/32，NVFP4 = 4 + 8/16（张量级 FP32 因子可忽略）
        BITS_PER_VALUE = {"fp8_tensor": 8 * BYTES_PER_ELEM["fp8"], "fp4_tensor": 4.0,
                          "mxfp4": 8 * BYTES_PER_ELEM["mxfp4"], "nvfp4": 8 * BYTES_PER_ELEM["nvfp4"]}

        x = demo_weights(DEMO2_N)
        errors, zeros = {}, {}
        for scheme in BITS_PER_VALUE:
            q = quantize(x, scheme)
            errors[scheme], zeros[scheme] = relative_error(q, x), zero_fraction(q, x)

        print_table(["方案", "比特/数", "相对误差", "SQNR (dB)", "被量化成 0 的比例"],
                    [[scheme, f"{bits:g}", f"{errors[scheme] * 100:.2f}%", f"{20 * np.log10(1 / errors[scheme]):.1f}",
                      f"{zeros[scheme] * 100:.1f}%"] for scheme, bits in BITS_PER_VALUE.items()])
        """),
    Code("""
        fig, ax = plt.subplots(figsize=(6, 3.8))
        for scheme, bits in BITS_PER_VALUE.items():
            ax.plot([bits], [errors[scheme] * 100], "o")
            ax.annotate(scheme, (bits, errors[scheme] * 100), textcoords="offset points", xytext=(6, 4))
        ax.set_ylim(bottom=0)
        ax.set_xlabel("bits per value")
        ax.set_ylabel("relative error (%)")
        ax.set_title(f"Quantization error vs storage ({DEMO2_N} Student-t values)")
        ax.grid(True, which="both", alpha=0.3)
        plt.show()
        """),
    Markdown("""
        【数据量的影响】讲义量化了 2^20 个数，这里只用 2^16 个——结果一样吗？下面把数据量从 2^12 变到 2^18，
        看四种方案的误差怎么变。
        """),
    Code("""
        sweep = {scheme: [] for scheme in BITS_PER_VALUE}
        for n in SIZE_SWEEP:
            xn = demo_weights(n)
            for scheme in BITS_PER_VALUE:
                sweep[scheme].append(relative_error(quantize(xn, scheme), xn))

        fig, ax = plt.subplots(figsize=(6, 3.8))
        for scheme, errs in sweep.items():
            ax.plot(SIZE_SWEEP, np.array(errs) * 100, "o-", label=scheme)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("number of values n")
        ax.set_ylabel("relative error (%)")
        ax.set_title("Error vs data size")
        ax.grid(True, alpha=0.3)
        ax.legend()
        plt.show()
        """),
    Question("q06_fp4_zero_fraction", """
        在上面 `DEMO2_N` 个数的数据上，整张量 FP4（`"fp4_tensor"`）把百分之多少的数变成了 0？
        按 `zero_fraction` 的定义（原本不是 0、量化后变成 0 的元素占全部元素的比例），写成百分数（12.5 表示 12.5%）。
        """, """
        q06_fp4_zero_fraction = zeros["fp4_tensor"] * 100
        """),
    Question("q07_nvfp4_error", """
        同一组数据上，NVFP4 的相对误差（`relative_error`）是百分之多少？写成百分数。
        """, """
        q07_nvfp4_error = errors["nvfp4"] * 100
        """),
    Question("q08_size_sensitive", _with_options("""
        数据量从 2^12 增加到 2^18 时，哪种方案的相对误差**增加得最多**？
        """, Q08_OPTIONS), f"""
        growth = {{letter: sweep[scheme][-1] - sweep[scheme][0] for letter, scheme in {_letters(Q08_OPTIONS)}.items()}}
        q08_size_sensitive = max(growth, key=growth.get)
        """),
    Markdown(f"""
        【存储账】NVFP4 每个数平均 4.5 bit，即 `BYTES_PER_ELEM["nvfp4"]` = 0.5625 字节；B300 的 HBM 容量是 `B300.mem_cap`。
        下面两题的单位都用十进制：1 GB = 10^9 字节，1 B（billion）= 10^9 个参数。模型大小取 {MODEL_PARAMS / 1e9:.0f}B
        （{MODEL_PARAMS / 1e8:.0f} 亿）参数。
        """),
    Question("q09_max_params", """
        只存 NVFP4 权重、不给 KV cache 留任何空间，B300 一块 GPU 最多能放多少参数？单位：十亿参数（B）。
        """, """
        q09_max_params = B300.mem_cap / BYTES_PER_ELEM["nvfp4"] / 1e9
        """),
    Question("q10_kv_left", f"""
        一个 {MODEL_PARAMS / 1e9:.0f}B 参数的模型用 NVFP4 放在 B300 上，HBM 还剩多少留给 KV cache 和激活？单位：GB。
        """, f"""
        q10_kv_left = (B300.mem_cap - {MODEL_PARAMS / 1e9:g}e9 * BYTES_PER_ELEM["nvfp4"]) / 1e9
        """),

    # ------------------------------------------------------------------ demo 3
    Markdown("""
        ## 演示 3：softmax 的 exp 瓶颈

        【问题】注意力里每个分数 s = q·k 都要做一次 exp（softmax），同时伴随 QKᵀ 和 PV 两次点积。
        Tensor Core 越来越快，SFU（特殊函数单元）做 exp 跟得上吗？

        【判断】每个分数：t_mma = flops_per_exp(d_qk, d_v) / 峰值算力，t_exp = 1 / exp 吞吐。
        t_exp / t_mma > 100% 说明 exp 单元跟不上 Tensor Core（除非把 exp 挪到别的单元去做）。

        【边界】只看"exp 吞吐 vs 矩阵乘法吞吐"这一对；softmax 的求最大值、减法、乘法不计，所以结论偏乐观。
        """),
    FunctionCheck("flops_per_exp"),
    FunctionCheck("exp_ratio"),
    Code("""
        HEAD_SHAPES = {"d_head = 64": (64, 64), "d_head = 128": (128, 128), "MLA (d_qk=192, d_v=128)": (192, 128)}
        ATTENTION = [(chip, precision) for chip in (H100, B200, B300) for precision in ("bf16", "fp8")]
        ratios = {(chip.name, precision): [exp_ratio(chip, precision, d_qk, d_v) for d_qk, d_v in HEAD_SHAPES.values()]
                  for chip, precision in ATTENTION}

        print_table(["芯片", "矩阵乘法精度", "SFU exp 吞吐"] + list(HEAD_SHAPES),
                    [[chip.name, precision, f"{chip.exp_per_s / 1e12:.1f} T/s"]
                     + [f"{r * 100:.0f}%" for r in ratios[chip.name, precision]] for chip, precision in ATTENTION])
        """),
    Code("""
        fig, ax = plt.subplots(figsize=(8, 3.8))
        width = 0.8 / len(HEAD_SHAPES)
        positions = np.arange(len(ATTENTION))
        for i, shape in enumerate(HEAD_SHAPES):
            ax.bar(positions + (i - 1) * width, [ratios[chip.name, p][i] * 100 for chip, p in ATTENTION], width, label=shape)
        ax.axhline(100, color="black", linestyle="--", linewidth=1)
        ax.set_xticks(positions, [f"{chip.name}\\n{p}" for chip, p in ATTENTION])
        ax.set_ylabel("t_exp / t_mma (%)")
        ax.set_title("Softmax exp time vs attention matmul time (above 100%: exp-bound)")
        ax.legend()
        plt.show()
        """),
    Question("q11_b200_bottleneck", _with_options("""
        在 B200 上、d_head = 128、FP8 注意力时，哪个单元限制了注意力的速度？
        """, Q11_OPTIONS), """
        q11_b200_bottleneck = "B" if exp_ratio(B200, "fp8", 128, 128) > 1 else "A"
        """),
    Question("q12_b200_d64_ratio", """
        B200 上 FP8 注意力、d_head = 64 时，t_exp / t_mma 是百分之多少？写成百分数（150 表示 150%）。
        """, """
        q12_b200_d64_ratio = exp_ratio(B200, "fp8", 64, 64) * 100
        """),
    Question("q13_b300_exp_needed", """
        B300 上 FP8 注意力、d_head = 64：SFU 的 exp 吞吐至少要多大，t_exp / t_mma 才能降到 100%？
        单位：T exp/s（10^12 次 exp 每秒）。和 B300 实际的 exp 吞吐比一比。
        """, """
        q13_b300_exp_needed = B300.peak_flops("fp8") / flops_per_exp(64, 64) / 1e12
        """),
    Question("q14_mla_effect", _with_options("""
        在 B300 上做 FP8 注意力，把 d_head = 128 的普通注意力换成 MLA 式形状（d_qk = 192，d_v = 128），
        t_exp / t_mma 会怎样？
        """, Q14_OPTIONS), """
        q14_mla_effect = "A" if exp_ratio(B300, "fp8", 192, 128) > exp_ratio(B300, "fp8", 128, 128) else "B"
        """),

    # ------------------------------------------------------------------ free text
    Markdown("""
        ## 用自己的话说

        下面两题由助教人工评分：讲清楚道理比堆砌数字重要，但要引用你在上面算出的数字作证据。每题 150–300 字即可。
        """),
    Question("q15_explain_scaling", """
        为什么整张量 FP4 会把很多数变成 0，而且数据量越大误差越大？NVFP4 的两级缩放怎样解决这个问题，代价是什么？
        """, """
        整张量 FP4 只有一个缩放因子 s = amax / 6，由全体数据里绝对值最大的那个数决定。Student-t 数据有重尾，
        少数离群值让 s 变得很大，普通的数除以 s 之后小于 0.25（E2M1 最小非零值 0.5 的一半），就被舍入成 0——
        在 2^16 个数上有三成多的数变成了 0。数据越多，样本里的最大值越大，s 越大，误差也越大（2^12 到 2^18
        误差从约 21% 涨到约 45%），而块缩放的方案几乎不变。

        NVFP4 每 16 个数用一个 FP8（E4M3）缩放因子，离群值只"连累"同一块里的 15 个邻居；再用一个 FP32 的张量级因子
        把块因子挪进 E4M3 能表示的范围。误差降到约 9%，代价是每个数多 0.5 bit 的存储（4.5 bit/值），
        以及硬件要多做一级缩放。
        """),
    Question("q16_explain_codesign", """
        Blackwell Ultra 为什么要把 SFU 的 exp 吞吐翻倍？用演示 3 的数字说明：一个看似不起眼的单元为什么会成为瓶颈，
        硬件和软件各能做什么？
        """, """
        每做一次 exp，注意力只配 2·d_qk + 2·d_v 次矩阵乘法运算（d_head = 128 时 512 FLOP）。从 Hopper 到 Blackwell，
        Tensor Core 的 FP8 算力涨了约 2.5 倍，SFU 的 exp 吞吐却只从 4.5 涨到 5 T/s：B200 上 FP8、d_head = 128 时
        t_exp / t_mma 约 195%，d_head = 64 时约 390%，注意力被 exp 卡住，再快的 Tensor Core 也没用（Amdahl 定律）。

        硬件：Blackwell Ultra 把 exp 吞吐翻倍到 10.7 T/s，d_head = 128 的比值回到 100% 以下；Rubin 继续提高。
        软件：FlashAttention-4 把一部分 exp 用 FMA 单元上的多项式近似，并让 exp 和矩阵乘法流水重叠；模型设计上，
        更大的 head 维度或 MLA 式形状让每次 exp 配更多矩阵乘法。瓶颈会随另一个单元变快而转移，软硬件要一起设计。
        """),
    Markdown("""
        ## 提交之前

        1. 在本文件夹里运行 `pytest`：公开测试应当全部通过。
        2. 运行 `python selfcheck.py`：它检查 `codesign.py` 的公开用例，以及这份 notebook 是否完好、哪些题还没作答。
        3. 保存 notebook（Kernel → Restart & Run All 之后再保存最稳妥），只提交 `codesign.py` 和 `handout.ipynb`。
        """),
)
