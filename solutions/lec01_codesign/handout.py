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
from autograder.sandbox.limits import Limits
from cpu_timing import AGREEMENT_FACTOR, STREAM_BYTES, TRIAD_N
from hw_specs import B300, BYTES_PER_ELEM, H100, EX2_PER_SM_PER_CLK, FP32_FMA_PER_SM_PER_CLK, LABELLED_FIGURES
from solutions.lec01_codesign.variants import USABLE_HBM
from solutions.lec01_codesign import encoder as end_to_end
from solutions.lec01_codesign import handout_data
from solutions.lec01_codesign.explanations import rubric_markdown
from solutions.lec01_codesign import real_tensors as extract
from solutions.lec01_codesign.handout_data import (
    BACKWARD_FLOPS_PER_EXP,
    BOTTLENECK_OPTIONS,
    DEMO2_N,
    FLOP_PER_PARAM_PER_TOKEN,
    LEAST_GROWN_OPTIONS,
    MEASURED_D_QK,
    MEASURED_D_V,
    MEASURED_DOCUMENT,
    MEASURED_FP8_FORWARD_GAIN,
    MEASURED_MODEL,
    MLA_OPTIONS,
    MODEL_PARAMS,
    POSITION_OPTIONS,
    REAL_TENSORS_FILE,
    ROTATION_OPTIONS,
    ROTATION_SIZE,
    BIT_BUDGET,
    BUDGET_OPTIONS,
    BUDGET_SCALES,
    SIZE_OPTIONS,
    SIZE_SWEEP,
    WALL_KERNELS,
    WALL_OPTIONS,
    DECODE_DESIGN_OPTIONS,
)


def _with_options(prompt: str, options: dict[str, tuple[str, str]]) -> str:
    """A choice question's prompt followed by its options as a list."""
    listed = "\n".join(f"- **{letter}**：{label}" for letter, (_, label) in options.items())
    return f"{textwrap.dedent(prompt).strip()}\n\n{listed}"


def _letter_of(options: dict[str, tuple[str, str]], name: str) -> str:
    """The letter of the option called `name` (a prediction's reference answer, written before any data)."""
    return next(letter for letter, (option, _) in options.items() if option == name)


def _letters(options: dict[str, tuple[str, str]]) -> str:
    """The letter -> name mapping as a Python literal, for the reference answers."""
    return repr({letter: name for letter, (name, _) in options.items()})


_DEMO2_DATA = (
    "# 你的数据（VARIANT）：种子、Student-t 的自由度、缩放和个数（讲义量化 2^20 个数；这里更少，notebook 跑得快）\n"
    'DEMO2_SEED, DEMO2_DF, DEMO2_SCALE = VARIANT["demo2_seed"], VARIANT["demo2_df"], VARIANT["demo2_scale"]\n'
    'DEMO2_N = VARIANT["demo2_n"]\n'
    f"SIZE_SWEEP = {SIZE_SWEEP!r}  # 2^12 … 2^18\n"
    'print(f"Student-t：自由度 {DEMO2_DF:g}，× {DEMO2_SCALE:g}，种子 {DEMO2_SEED}，{DEMO2_N} 个数")\n\n\n'
    + "\n\n".join(inspect.getsource(f) for f in (handout_data.demo_weights, handout_data.relative_error,
                                                   handout_data.zero_fraction))
)

_RUN_CHIPS = (
    inspect.getsource(handout_data.sustained_chip) + "\n\n"
    "# 你们机房实测的持续值：规格表的峰值 × 实测比例（VARIANT）\n"
    'H100_RUN = sustained_chip(H100, {"fp8": VARIANT["h100_fp8_share"]}, VARIANT["h100_bw_share"])\n'
    'B300_RUN = sustained_chip(B300, {"nvfp4": VARIANT["b300_nvfp4_share"], "fp8": VARIANT["b300_fp8_share"]},\n'
    '                          VARIANT["b300_bw_share"])\n'
    "# 推理组在线上服务的 B300 上用 decode 的内核另测了一遍（q07–q09b）\n"
    'B300_SERVE = sustained_chip(B300, {"nvfp4": VARIANT["serve_nvfp4_share"], "fp8": VARIANT["serve_fp8_share"]},\n'
    '                            VARIANT["serve_bw_share"])\n'
    "print_table([\"芯片\", \"NVFP4 持续算力\", \"FP8 持续算力\", \"HBM 持续带宽\"],\n"
    "            [[chip.name, f\"{fmt_num(chip.peak_flops('nvfp4'))}FLOP/s\" if chip.has(\"nvfp4\") else \"-\",\n"
    "              f\"{fmt_num(chip.peak_flops('fp8'))}FLOP/s\", f\"{fmt_num(chip.mem_bw)}B/s\"]\n"
    "             for chip in (H100_RUN, B300_RUN, B300_SERVE)])\n"
)

_REAL_TENSORS_HELPERS = (
    f"REAL_TENSORS_FILE = {REAL_TENSORS_FILE!r}\n"
    'ROTATION_SIZE = VARIANT["rotation_size"]  # 你的旋转块大小\n'
    'REAL_TOKENS, REAL_OUTPUTS = VARIANT["real_tokens"], VARIANT["real_outputs"]  # 你的那一块：[起点, 个数]\n'
    f"BIT_BUDGET = {BIT_BUDGET:g}  # 每个数最多几比特\n"
    "# 比特预算实验的九种配置：字母 -> (块大小, 块缩放因子)\n"
    f"BUDGET_CONFIGS = {dict((letter, config) for letter, (config, _) in BUDGET_OPTIONS.items())!r}\n\n\n"
    + "\n\n".join(inspect.getsource(f) for f in (handout_data.format_bits, handout_data.load_real_tensors,
                                                   handout_data.real_slice, handout_data.quantize_matrix,
                                                   handout_data.matmul_error, handout_data.block_hadamard))
)

_ENCODER_HELPERS = (
    f"ENCODER_FILE = {end_to_end.ENCODER_FILE!r}\n"
    f"HEADS, ROTATION_BLOCK = {end_to_end.HEADS}, {end_to_end.ROTATION_BLOCK}\n"
    f"LINEAR_LAYERS = {end_to_end.LINEAR_LAYERS!r}\n"
    "# 端到端的几种格式：名字 -> (quantize 的 scheme，None 是 FP32；量化之前要不要先旋转)\n"
    f"END_FORMATS = {end_to_end.END_FORMATS!r}\n\n\n"
    + "\n\n".join(inspect.getsource(f) for f in (end_to_end.load_encoder, end_to_end.rotate16, end_to_end.linear_weights,
                                                   end_to_end.layer_norm, end_to_end.gelu, end_to_end.encode,
                                                   end_to_end.end_deficit, end_to_end.pair_similarities,
                                                   end_to_end.rank_agreement))
)

_RUBIN_FP8_RACK = LABELLED_FIGURES["Rubin"]["fp8 training, per NVL144 rack"].value


def _peak_over_rms(a) -> float:
    """How much one maximum dominates a tensor: max|a| / rms(a)."""
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    return float(np.abs(a).max() / np.sqrt(np.mean(np.square(a))))


def _reference_facts() -> dict[str, float]:
    """The figures the reference's written answers quote, computed (never typed in)."""
    from solutions.lec01_codesign.answers import REAL_TENSORS, answer_key, budget_choice, real_tensor_errors
    from solutions.lec01_codesign.handout_data import load_real_tensors
    from solutions.lec01_codesign.codesign import exp_ratio, quantize
    from solutions.lec01_codesign.handout_data import demo_weights, relative_error, zero_fraction
    from hw_specs import B200

    key, real = answer_key(), real_tensor_errors()
    x, small, large = demo_weights(DEMO2_N), demo_weights(SIZE_SWEEP[0]), demo_weights(SIZE_SWEEP[-1])
    return {
        "fp4_zeros": zero_fraction(quantize(x, "fp4_tensor"), x),
        "fp4_small": relative_error(quantize(small, "fp4_tensor"), small),
        "fp4_large": relative_error(quantize(large, "fp4_tensor"), large),
        "nvfp4": relative_error(quantize(x, "nvfp4"), x),
        "scale_gain": key["q11_scale_format_gain"], "block_gain": key["q12_block_size_gain"],
        "b200_ratio": exp_ratio(B200, "fp8", 128, 128), "h100_basis": key["q15_h100_tensor_basis"],
        "h100_basis_fp8": key["q15_h100_tensor_basis"] * H100.peak_flops("fp8") / H100.peak_flops("bf16"),
        "software": key["q16_software_exp_share"], "backward": key["q17_backward_ratio"],
        "speedup": key["q18_model_speedup"], "serial": key["q18b_serial_speedup"], "mma": key["q19_mma_efficiency"],
        "real_fp4": key["q22_real_fp4_tensor_error"], "real_nvfp4": key["q23_real_nvfp4_error"],
        "rotated_fp4": key["q24_rotated_fp4_tensor_error"], "rotated_nvfp4": 100 * real["nvfp4 rotated"],
        "budget_best": 100 * real[budget_choice()],
        "peak_real": _peak_over_rms(load_real_tensors(REAL_TENSORS)[0]), "peak_student_t": _peak_over_rms(x),
        "budget_32": 100 * real[next(k for k, ((b, sc), _) in BUDGET_OPTIONS.items() if (b, sc) == (32, "e4m3"))],
    }


_FACTS = _reference_facts()


def _end_facts() -> dict[str, float]:
    """The end-to-end lab's figures the reference's written answer quotes (the lecture's tile)."""
    from solutions.lec01_codesign.answers import END_UNIT, answer_key, end_exact_prediction, end_prediction, end_to_end
    from solutions.lec01_codesign.explanations import fp4_weight_zeros

    end, key = end_to_end(), answer_key()
    zeros, all_zero = fp4_weight_zeros()
    return {"gap": key["q34b_nvfp4_end_deficit"] / key["q34p_nvfp4_end_prediction"], "fp4": end["fp4_tensor"]["deficit"], "rank": key["q35_fp4_rank_agreement"],
            "nvfp4": END_UNIT * end["nvfp4"]["deficit"], "h16": END_UNIT * end["nvfp4 + H16"]["deficit"],
            "fp4_predicted": end_prediction(None, "fp4_tensor"), "fp4_exact": end_exact_prediction(None, "fp4_tensor"),
            "fp4_zeros": zeros, "fp4_all_zero": all_zero}


_END = _end_facts()


def _text_question_prompt(item: str, prompt: str) -> str:
    """A text question's prompt followed by its rubric (criteria and points, from explanations.RUBRICS)."""
    return f"{textwrap.dedent(prompt).strip()}\n\n{rubric_markdown(item, with_expectations=False)}"


CELLS = (
    Markdown("""
        # CS349E · 第 1 讲 · 练习：用 roofline 读懂 Blackwell Ultra 的设计取舍

        这份 notebook 跟着讲义 `05_codesign_blackwell_ultra.py` 的三个演示走一遍，但用的是**你自己**在
        `codesign.py` 里实现的函数：

        - 演示 1：代际趋势——`ridge_point`、`trend_row`
        - 演示 2：NVFP4 的两级缩放——`round_e4m3`、`to_e2m1`、`quantize`
        - 演示 3：softmax 的 exp 瓶颈——`flops_per_exp`、`exp_ratio`
        - 真实张量：一层预训练模型的权重和激活，在比特预算内设计 4 位格式——`quantize`、`to_e2m1`
        - 测一测：在你自己的电脑上给 exp 和矩阵乘法计时——`flops_per_exp`

        【怎么做】
        1. 在 `codesign.py` 里实现 7 个函数（docstring 写明了全部要求），在本文件夹里运行 `pytest` 跑公开测试。
        2. 从上到下运行这份 notebook。每个评分项下面的 `check(...)` 格做公开检查：函数跑公开用例；
           报告题只检查**格式**（有没有作答、类型、单位是否合理），**不会**告诉你答案对不对。
        3. 回答报告题：每道题写明了变量名、类型、单位和容差，把答案赋给那个变量；文字题直接写在 Markdown 格里。

        【你的参数】每位同学的题目数字不同（芯片的实测比例、模型大小、数据、head 形状、真实张量的哪一块……），
        由学号决定。在下面第一个代码格子的 `STUDENT_ID` 里填上你的学号（和提交时用的一致）、`VARIANT_TOKEN` 里填上
        助教单独发给你的个人口令，运行后 `VARIANT` 就是你的参数（参数表里全班的参数都按"学号 + 口令"存放：
        只知道同学的学号，算不出他的参数）；题目里写 `VARIANT["…"]` 的地方都用你自己的数，格子会把它们打印出来。评分按提交者本人的学号取参数：
        照抄别人的数字，对不上你自己的题。

        【注意】
        - 改了 `codesign.py` 之后，重新运行下面第一个代码格（它会重新加载你的代码），不必重启 kernel。
        - 评分时会在干净的环境里从头到尾运行整个 notebook：答案要由格子里的代码或数字给出，
          不能依赖你手动运行格子的顺序。
        - 带锁的格子（题目、评分格）不要删除、复制或修改；变量名不要改。
        - 图里的文字：电脑上装了中文字体（Windows、macOS 和多数 Linux 桌面都有）就用中文，没有就用英文。
        """),
    Code("""
        from selfcheck import check, skip_if_unfinished

        import importlib

        import matplotlib.pyplot as plt
        import numpy as np

        import codesign
        from console import fmt_num, print_table
        import hw_specs
        from hw_specs import B200, B300, BYTES_PER_ELEM, CHIPS, H100, RUBIN
        from plot_fonts import chinese_labels

        importlib.reload(codesign)  # 改了 codesign.py 以后重新运行本格即可
        skip_if_unfinished.forget()
        from codesign import exp_ratio, flops_per_exp, quantize, ridge_point, round_e4m3, to_e2m1, trend_row

        CJK, label = chinese_labels()  # 图里的文字：装了中文字体就用中文，没有就用英文
        """, locked=True),

    # ------------------------------------------------------------------ demo 1
    Markdown(f"""
        ## 演示 1：代际趋势

        【问题】Hopper → Blackwell → Blackwell Ultra → Rubin（公告），算力、带宽、容量、互连各涨了多少？谁掉了队？

        【口径】每一代取它公布的"最低精度"的稠密算力（H100 是 FP8，之后是 NVFP4）——这是厂商宣传"代际提升"时的口径；
        同时列出 FP8 做同口径对比。所有倍数都相对 H100。屋脊点 = 峰值算力 / HBM 带宽，单位 FLOP/B。

        【边界】Rubin 取 35 PFLOPS（NVFP4 稠密、训练口径）；宣传中的 50 PFLOPS 是 Transformer Engine 推理口径（含自适应压缩），
        不能和稠密算力相除。Rubin 没有公布每块 GPU 的稠密 FP8 和功耗（表里记作 "-"）：FP8 只有整机柜的训练算力
        （每个 NVL144 机柜 {_RUBIN_FP8_RACK / 1e18:g} EFLOPS，72 块 GPU，没说稠密还是稀疏），口径不同，不放进表里。
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
        fig, ax = plt.subplots(figsize=(7, 4))
        for chip, low in TREND_CHIPS:
            peak = chip.peak_flops(low)
            (line,) = ax.loglog(intensity, np.minimum(peak, intensity * chip.mem_bw), label=f"{chip.name} ({low})")
            ridge = ridge_point(chip, low)
            ax.plot([ridge], [peak], "o", color=line.get_color())
            ax.annotate(f"{ridge:,.0f}", (ridge, peak), textcoords="offset points", xytext=(5, -13), fontsize=8)
        ax.set_xlabel(label("算术强度（FLOP/B）", "arithmetic intensity (FLOP/B)"))
        ax.set_ylabel(label("能达到的算力（FLOP/s）", "attainable FLOP/s"))
        ax.set_title(label("各芯片最低精度下的 roofline（圆点：屋脊点）",
                           "Roofline at each chip's lowest precision (dots: ridge points)"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        plt.show()
        """),
    Markdown("""
        【你们机房的实测】规格表上的是峰值。你的团队在机房的 H100 和 B300 上跑了矩阵乘法（GEMM）和带宽基准：
        每种精度的矩阵乘法只持续达到规格峰值的一部分，HBM 也只达到标称带宽的一部分（比例是你的参数，
        `VARIANT["h100_fp8_share"]`、`VARIANT["b300_nvfp4_share"]` 等）。同一个团队、同一套内核：两块卡上 FP8 的矩阵乘法和 HBM
        达到的比例都相差在一成以内；B300 上 NVFP4 达到的比例不高于 FP8 的。下面的格子把规格表上的芯片换成"实测芯片"
        `H100_RUN`、`B300_RUN`：它们和 hw_specs 的芯片是同一种对象，`trend_row`、`ridge_point` 照样能用。
        q01–q02、q04–q06c 用这两块实测芯片（H100_RUN 只有 FP8 的数字，它就是 H100 的"最低精度"）。
        推理组在线上服务的 B300 上用 decode 自己的内核又测了一遍（比例是 `VARIANT["serve_nvfp4_share"]` 等）：
        decode 的问题（q07–q09l，和演示 3 的 q17b）用这块 `B300_SERVE`。
        """),
    Code(_RUN_CHIPS, locked=True),
    Question("q01_compute_headline", """
        按厂商的口径（各取最低精度）比较实测芯片：B300_RUN 的算力是 H100_RUN 的多少倍？
        即 `trend_row(B300_RUN, "nvfp4", base=H100_RUN)` 的 `"compute"`（B300 的 NVFP4 持续算力 ÷ H100 的 FP8 持续算力）。
        """, """
        run = trend_row(B300_RUN, "nvfp4", base=H100_RUN)
        q01_compute_headline = run["compute"]
        """),
    Question("q02_format_gain", """
        q01 的倍数里，有多少来自"换了更低的数值格式"（FP8 → NVFP4）？先算出同为 FP8 时 B300_RUN 是 H100_RUN 的几倍
        （同一行的 `"fp8"`），再用 q01 的倍数除以它。读厂商数字时，先确认比较的是不是同一种精度。
        """, """
        q02_format_gain = run["compute"] / run["fp8"]
        """),
    Code("""
        GROWTH_PAIR = VARIANT["growth_pair"]  # q03：你的一次换代 [从, 到]
        print(f"q03：{GROWTH_PAIR[0]} → {GROWTH_PAIR[1]}")
        """, locked=True),
    Question("q03_least_grown", _with_options("""
        按规格表，从 `GROWTH_PAIR[0]` 到 `GROWTH_PAIR[1]`（你的一次换代，`VARIANT["growth_pair"]`；后者按 NVFP4），
        下面四项里哪一项涨得**最少**？（上面的表都相对 H100；不从 H100 出发时，用 `trend_row` 的 `base` 自己算。）
        """, LEAST_GROWN_OPTIONS), f"""
        step = trend_row(CHIPS[GROWTH_PAIR[1]], "nvfp4", base=CHIPS[GROWTH_PAIR[0]])
        growth = {{letter: step[key] for letter, key in {_letters(LEAST_GROWN_OPTIONS)}.items()}}
        q03_least_grown = min(growth, key=growth.get)
        """),
    Markdown("""
        【屋脊点和内存墙】屋脊点 = 峰值算力 / HBM 带宽。一个内核自己的算术强度（FLOP/B）低于它所用精度的屋脊点，就受带宽限制。
        下面两个比值都能从表里算出来；q06 问：对一个具体的内核，哪一个才是它碰到的墙。
        """),
    Question("q04_ridge_same_precision", """
        同一种精度：B300_RUN 的 FP8 屋脊点是 H100_RUN 的 FP8 屋脊点的多少倍？（用 `ridge_point`。）
        """, """
        q04_ridge_same_precision = ridge_point(B300_RUN, "fp8") / ridge_point(H100_RUN, "fp8")
        """),
    Question("q05_ridge_mixed_precision", """
        各取最低精度：B300_RUN 的 NVFP4 屋脊点是 H100_RUN 的 FP8 屋脊点的多少倍？
        """, """
        q05_ridge_mixed_precision = ridge_point(B300_RUN, "nvfp4") / ridge_point(H100_RUN, "fp8")
        """),
    Code(f"""
        WALL_KERNEL = VARIANT["wall_kernel"]  # 你的内核
        print({WALL_KERNELS!r}[WALL_KERNEL])
        """, locked=True),
    Question("q06_memory_wall", _with_options("""
        你的团队有一个受带宽限制的内核，从 H100_RUN 搬到 B300_RUN；它怎样用精度，上面的格子打印了（`WALL_KERNEL`）。
        它要到达的屋脊点和它自己的算术强度各变了没有？它碰到的墙（还差几倍的强度才到屋脊点）涨了多少倍，由哪个比值给出？
        """, WALL_OPTIONS), """
        # 墙 = 要到达的屋脊点 ÷ 内核自己的 FLOP/B。两种内核从 HBM 搬的都是 FP8 的字节：强度不变；
        # 按 FP8 计算的要到达 FP8 的屋脊点（q04），在片上换成 NVFP4 计算的要到达 NVFP4 的屋脊点（q05）
        q06_memory_wall = {"fp8": "A", "nvfp4_on_chip": "B"}[WALL_KERNEL]
        """),
    Question("q06b_wall_for_nvfp4_kernel", """
        另一个受带宽限制的内核在 H100_RUN 上用 FP8，搬到 B300_RUN 上时把它的数据也换成 NVFP4（权重和激活都换，读写和计算都是 NVFP4；
        每个数的大小连同它分摊的块缩放因子一起算）。按 q06 的说法，它碰到的墙涨了多少倍？
        """, """
        # 屋脊点涨 q05 倍；内核每个数的字节从 FP8 的变成 NVFP4 的，FLOP/B 涨 bytes(fp8) / bytes(nvfp4) 倍
        q06b_wall_for_nvfp4_kernel = q05_ridge_mixed_precision * BYTES_PER_ELEM["nvfp4"] / BYTES_PER_ELEM["fp8"]
        """),
    Question("q06c_decode_generation_speedup", """
        **换代给生成 token 带来了多少？** 你的团队把一个模型（一块 H100 装得下）的 decode（一次生成一个 token）从 H100_RUN 搬到 B300_RUN：
        在 H100 上权重用 FP8 存，在 B300 上换成 NVFP4（每个数的大小连同它分摊的块缩放因子一起算），batch = 1，别的都不变。
        每秒生成的 token 数涨到原来的多少倍？KV cache 和激活的读写先忽略。哪个屋顶管着它、每生成一个 token 要搬什么、
        要算什么，自己想；想好了，和 q01 的厂商口径比一比。（直接用 H100_RUN、B300_RUN 的数算，中途不要取整。）
        """, """
        # batch = 1：每个权重读一次、做一次乘加，强度约 2 FLOP/B（FP8）或 2 / 0.5625 FLOP/B（NVFP4），两块芯片上都远低于屋脊点。
        # 一个 token 的时间 = 权重的字节 ÷ 带宽：倍数 = 带宽之比 × 每个权重的字节之比，算力不进来
        q06c_decode_generation_speedup = (B300_RUN.mem_bw / H100_RUN.mem_bw) * (BYTES_PER_ELEM["fp8"] / BYTES_PER_ELEM["nvfp4"])
        """),
    Markdown(f"""
        ## roofline 的用法：decode

        一个 `MODEL_PARAMS` 个参数（你的参数 `VARIANT["model_params_b"]`，单位十亿）、权重用 NVFP4 存的模型，在你们机房的
        B300（`B300_SERVE`）上生成 token（decode）。每生成一个 token，每个权重从 HBM 读一次（`BYTES_PER_ELEM["nvfp4"]` 字节），
        对每个序列做 {FLOP_PER_PARAM_PER_TOKEN} 次运算（一次乘加）。先只算权重：KV cache 和激活的读写忽略不计（q09c–q09d 再把 KV cache 加进来）。
        单位一律十进制（1 GB = 10^9 字节）。

        【精度】矩阵乘法按**两个操作数里精度较高的那个**的速率跑：权重 NVFP4、激活也是 NVFP4（W4A4）时按 NVFP4 的算力；
        权重 NVFP4、激活 FP8（W4A8）时按 FP8 的算力。两种情况下权重都按 NVFP4 从 HBM 读。
        """),
    Code("""
        # 你的模型和 decode（VARIANT）
        MODEL_PARAMS = VARIANT["model_params_b"] * 1e9  # 参数个数
        DECODE_BATCH = VARIANT["decode_batch"]  # q07：一起 decode 的序列数
        KV_LAYERS, KV_HEADS, KV_HEAD_DIM = VARIANT["kv_layers"], VARIANT["kv_heads"], VARIANT["kv_head_dim"]  # q09c
        QUERY_HEADS = VARIANT["query_heads"]  # q17c：每层的 query 头数（每个头也是 KV_HEAD_DIM 维）
        KV_BATCH = VARIANT["kv_batch"]  # q09d：一起 decode 的序列数
        SERVICE_CONTEXT = VARIANT["service_context"]  # q09e–q09i：服务要给每个序列留的上下文（token）
        SERVICE_RATE = VARIANT["service_rate"]  # q09h：服务向每个序列承诺的生成速度（token/s）
        DRAFT_PARAMS = VARIANT["draft_params_b"] * 1e9  # q09i：草稿模型的参数个数
        DRAFT_ACCEPT, SPEC_BATCH = VARIANT["draft_accept"], VARIANT["spec_batch"]  # q09i：每个猜测被接受的概率；一起 decode 的序列数
        print(f"模型 {MODEL_PARAMS / 1e9:g}B 参数；q07 的 batch = {DECODE_BATCH}；KV cache：{KV_LAYERS} 层 × {KV_HEADS} 个 KV 头 "
              f"× {KV_HEAD_DIM} 维；q09d 的 batch = {KV_BATCH}；服务的上下文 {SERVICE_CONTEXT} 个 token，"
              f"每个序列至少 {SERVICE_RATE} token/s")
        print(f"每层 {QUERY_HEADS} 个 query 头（q17c），每 {QUERY_HEADS // KV_HEADS} 个共用一个 KV 头")
        print(f"q09i：草稿模型 {DRAFT_PARAMS / 1e9:g}B 参数，每个猜测被接受的概率 {DRAFT_ACCEPT:g}，batch = {SPEC_BATCH}")
        print(f"NVFP4 的权重占 {MODEL_PARAMS * BYTES_PER_ELEM['nvfp4'] / 1e9:g} GB，B300 有 {B300.mem_cap / 1e9:g} GB HBM")
        """, locked=True),
    Question("q07_decode_intensity", """
        `DECODE_BATCH` 个序列一起 decode（每一步读一次权重，给每个序列各做一次乘加）：算术强度是多少 FLOP/B（只算权重）？
        和 B300_SERVE 的 NVFP4 屋脊点比一比。
        """, f"""
        q07_decode_intensity = DECODE_BATCH * {FLOP_PER_PARAM_PER_TOKEN} / BYTES_PER_ELEM["nvfp4"]
        """),
    Question("q08_decode_tokens_per_s", """
        batch = 1、受带宽限制时，B300_SERVE 每秒最多生成多少个 token（只读权重，按实测的持续带宽）？单位：token/s。
        """, """
        q08_decode_tokens_per_s = B300_SERVE.mem_bw / (MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"])
        """),
    Question("q09_decode_batch", """
        把 batch 个序列放在一起 decode，读一次权重就能给每个序列各做一次乘加。W4A4（权重和激活都是 NVFP4）：
        batch 至少要多大，算术强度才能到达 B300_SERVE 的屋脊点？（写出算出来的数，不必取整。）
        """, f"""
        q09_decode_batch = ridge_point(B300_SERVE, "nvfp4") / ({FLOP_PER_PARAM_PER_TOKEN} / BYTES_PER_ELEM["nvfp4"])
        """),
    Question("q09b_decode_batch_w4a8", """
        W4A8（权重 NVFP4、激活 FP8）：batch 至少要多大，才能到达 B300_SERVE 上这种矩阵乘法的屋脊点？
        """, f"""
        q09b_decode_batch_w4a8 = ridge_point(B300_SERVE, "fp8") / ({FLOP_PER_PARAM_PER_TOKEN} / BYTES_PER_ELEM["nvfp4"])
        """),
    Markdown("""
        【KV cache】这个模型用 GQA（KV 头只有 1 个时就是 MQA）：`KV_LAYERS` 层，每层 `KV_HEADS` 个 KV 头，每个头 `KV_HEAD_DIM` 维（上面的格子打印了你的数）；
        KV cache 用 FP8 存（`BYTES_PER_ELEM["fp8"]` 字节/数）。每生成一个 token，每个序列都要把自己上下文里全部 L 个 token
        的 K 和 V 读一遍；权重则每一步只读一次，batch 里的序列共用。
        """),
    Question("q09c_kv_bytes_per_token", """
        上下文里的一个 token，在一个序列的 KV cache 里占多少字节（所有层的 K 和 V 加起来）？单位：字节。
        """, """
        q09c_kv_bytes_per_token = 2 * KV_LAYERS * KV_HEADS * KV_HEAD_DIM * BYTES_PER_ELEM["fp8"]
        """),
    Question("q09d_kv_equal_weights_context", f"""
        `KV_BATCH` 个序列一起 decode，每个序列的上下文长 L 个 token。L 多长时，一步 decode 读的 KV cache 字节数等于读的权重字节数？
        单位：token（不必取整）。（那时 HBM 里的 KV cache 和权重一样大：你的模型的 NVFP4 权重不到 B300 容量的 {USABLE_HBM / 2:.0%}，两者都装得下。）
        """, """
        weight_bytes = MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"]
        q09d_kv_equal_weights_context = weight_bytes / (KV_BATCH * q09c_kv_bytes_per_token)
        """),

    Markdown(f"""
        【设计题：两个限制一起看】q09 的 batch 只算了权重。真实的服务里，每个序列都带着 `SERVICE_CONTEXT` 个 token 的上下文，
        每一步 decode 都要把它的 KV cache 读一遍；而且权重和**整个 batch** 的 KV cache 都得放进 HBM：最多
        `USABLE_HBM` = {USABLE_HBM:.0%} × {B300.mem_cap / 1e9:g} GB（其余留给运行时和激活）。运算仍只算权重的（注意力本身的运算忽略），
        KV cache 用 FP8 存（q09c）。batch 也不能无限大：服务框架一次最多排 `MAX_BATCH` 个序列（vLLM 的 `max_num_seqs`、
        TensorRT-LLM 的 `max_batch_size` 就是这个上限）。下面几题没有现成的公式：先写出一步 decode 的 FLOP 和字节，再把几个限制放在一起。
        """),
    Code(f"""
        USABLE_HBM = {USABLE_HBM} * B300.mem_cap  # 字节：权重 + 整个 batch 的 KV cache 最多占这么多
        MAX_BATCH = VARIANT["max_batch"]  # 服务框架一次最多排这么多个序列
        print(f"服务框架一次最多排 {{MAX_BATCH}} 个序列")
        """, locked=True),
    Question("q09e_ridge_share_with_kv", """
        q09 是只看权重的预测。现在验证它：每个序列的上下文是 `SERVICE_CONTEXT` 个 token，权重和整个 batch 的 KV cache
        要一起装进 `USABLE_HBM`。batch 可以取 q09 的值或任何更小的值（q09 按只看权重的模型已经到了屋脊点，不再加大；不必取整）。
        算上 KV cache 的读取，W4A4 的 decode 的算术强度最多能到 B300_SERVE 的 NVFP4 屋脊点的百分之多少？这个差距说明了什么？
        """, f"""
        weight_bytes = MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"]
        kv_per_sequence = SERVICE_CONTEXT * q09c_kv_bytes_per_token
        service_batch = min(q09_decode_batch, (USABLE_HBM - weight_bytes) / kv_per_sequence)  # 装得下的 batch
        intensity = service_batch * {FLOP_PER_PARAM_PER_TOKEN} * MODEL_PARAMS / (weight_bytes + service_batch * kv_per_sequence)
        q09e_ridge_share_with_kv = intensity / ridge_point(B300_SERVE, "nvfp4") * 100
        """),
    Question("q09j_chunked_prefill_tokens", """
        **分块预填充（chunked prefill）。** q09e 的那一步没有到达屋脊点：这一步的长短由什么决定，Tensor Core 这时在做什么？
        服务器把排队的请求的提示词（prefill）切成块，和 decode 的 batch 放进同一步，一起用这一步的权重。batch 和上下文同 q09e
        （W4A4，B300_SERVE），这一步不许变长：一步最多能顺带处理多少个提示词 token？
        （只算线性层的矩阵乘法，每个 token 和 decode 的一样；忽略这些 token 自己的注意力和它们写入的 KV cache。单位：token，不必取整。）
        """, f"""
        # q09e 的那一步受带宽限制：长短 = 读的字节 ÷ 带宽。这段时间里 Tensor Core 能做 NVFP4 算力 × 时间 的 FLOP，
        # decode 用掉 2P·B，剩下的每个提示词 token 要 2P（权重已经读进来了，不用再读）
        nvfp4_flops = B300_SERVE.peak_flops("nvfp4")
        step_time = (weight_bytes + service_batch * kv_per_sequence) / B300_SERVE.mem_bw
        spare_flop = nvfp4_flops * step_time - {FLOP_PER_PARAM_PER_TOKEN} * MODEL_PARAMS * service_batch
        q09j_chunked_prefill_tokens = spare_flop / ({FLOP_PER_PARAM_PER_TOKEN} * MODEL_PARAMS)
        """),
    Question("q09f_w4a4_context_limit", """
        W4A4 的 decode 要**同时**满足三件事：算术强度到达 B300_SERVE 的 NVFP4 屋脊点，权重和整个 batch 的 KV cache 装进 `USABLE_HBM`，
        batch 不超过 `MAX_BATCH`。batch 在这个范围里可以随便选。每个序列的上下文最长是多少个 token，这几件事还能同时做到？
        单位：token（不必取整）。这条边界上的 batch 是多少，卡住它的是哪个限制？
        """, f"""
        # 一步：FLOP = 2P·B，字节 = W + B·L·k。到达屋脊点 R：B ≥ R·W / (2P − R·L·k)；装得下：W + B·L·k ≤ C；排得下：B ≤ MAX_BATCH。
        # batch 取到达屋脊点的最小值，代入内存的限制：W·2P / (2P − R·L·k) ≤ C，即 L ≤ 2P·(1 − W/C) / (R·k)；
        # 代入 batch 的上限：R·W / (2P − R·L·k) ≤ MAX_BATCH，即 L ≤ (2P − R·W / MAX_BATCH) / (R·k)。两个都要满足：取短的
        flop_per_token = {FLOP_PER_PARAM_PER_TOKEN} * MODEL_PARAMS
        weight_bytes = MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"]


        def context_limit(precision):
            ridge = ridge_point(B300_SERVE, precision)
            fits = flop_per_token * (1 - weight_bytes / USABLE_HBM) / (ridge * q09c_kv_bytes_per_token)  # 装得下
            runs = (flop_per_token - ridge * weight_bytes / MAX_BATCH) / (ridge * q09c_kv_bytes_per_token)  # 排得下
            return min(fits, runs)


        q09f_w4a4_context_limit = context_limit("nvfp4")
        """),
    Question("q09g_decode_precision", _with_options("""
        你的服务要给每个序列留 `SERVICE_CONTEXT` 个 token 的上下文。权重都是 NVFP4，激活选 NVFP4（W4A4）还是 FP8（W4A8）：
        在这个上下文下，哪一种能让 decode 到达它自己的屋脊点、同时装得进 HBM、batch 不超过 `MAX_BATCH`？
        """, DECODE_DESIGN_OPTIONS), """
        # 两条边界都按 q09f 的 context_limit 算（三个限制）。上下文比 W4A4 的边界短：W4A4；在两条边界之间：只有 W4A8；比 W4A8 的边界还长：两种都不行
        limits = {"A": q09f_w4a4_context_limit, "B": context_limit("fp8"), "C": float("inf")}
        q09g_decode_precision = next(letter for letter, limit in limits.items() if SERVICE_CONTEXT <= limit)
        """),
    Question("q09h_service_batch", """
        服务还向每个用户承诺了速度：每个序列每秒至少生成 `SERVICE_RATE` 个 token。仍是 W4A4、每个序列 `SERVICE_CONTEXT` 个 token
        的上下文，权重和整个 batch 的 KV cache 仍要装进 `USABLE_HBM`；一步 decode 既要把运算做完，也要把这一步该读的字节读完
        （B300_SERVE 的实测算力和带宽；和 roofline 一样，运算和读取同时进行）。守住这些条件时，这块 B300 最多能同时服务多少个序列（最大的 batch）？
        单位：个序列（不必取整）。先想清楚：batch 变大时，一步的时间怎么变、每个序列的速度怎么变？什么先卡住 batch？
        """, f"""
        weight_bytes = MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"]
        kv_per_sequence = SERVICE_CONTEXT * q09c_kv_bytes_per_token
        # 一步 decode：算完（{FLOP_PER_PARAM_PER_TOKEN}·P·B / F）和读完（(W + B·L·k) / BW），取慢的那个；速度的承诺是一步不超过 1 / 速度，
        # 两个屋顶各给 batch 一个上限，容量再给一个：取最小的
        batch_limits = [(USABLE_HBM - weight_bytes) / kv_per_sequence,  # 装得下
                        B300_SERVE.peak_flops("nvfp4") / ({FLOP_PER_PARAM_PER_TOKEN} * MODEL_PARAMS * SERVICE_RATE),  # 算一步不超过 1 / 速度
                        (B300_SERVE.mem_bw / SERVICE_RATE - weight_bytes) / kv_per_sequence]  # 读一步不超过 1 / 速度
        q09h_service_batch = min(batch_limits)
        """),
    Question("q09i_speculative_speedup", """
        【投机解码】decode 受带宽限制时，Tensor Core 多半闲着。投机解码让一个小的草稿模型（`DRAFT_PARAMS` 个参数，权重也按 NVFP4 存，
        它的 KV cache 忽略不计）先一步一步猜出 γ 个 token（γ 步 decode），大模型再用**一步**同时检查这 γ 个 token 并多生成一个（这一步要算多少、
        读多少，你自己按 decode 一步的算法想清楚）。每个猜测被接受的概率是 α = `DRAFT_ACCEPT`，一轮（草稿 γ 步 + 检查一步）
        平均给每个序列产出 (1 − α^(γ+1)) / (1 − α) 个 token。W4A4、`SPEC_BATCH` 个序列、每个序列 `SERVICE_CONTEXT` 个 token 的上下文，
        在 B300_SERVE 上（草稿模型和大模型都按 NVFP4 的算力和实测带宽；和 roofline 一样，一步里运算和读取同时进行）：γ 在 0–8 里取最好的那个，一共的 token/s 是不投机（γ = 0）时的
        多少倍？最好的 γ 是几，为什么不是越长越好？什么情况下投机解码不划算？
        """, f"""
        def step_seconds(flop, read):  # 一步：算完和读完，取慢的那个
            return max(flop / B300_SERVE.peak_flops("nvfp4"), read / B300_SERVE.mem_bw)


        weight_bytes = MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"]
        kv_read = SPEC_BATCH * SERVICE_CONTEXT * q09c_kv_bytes_per_token
        t_draft = step_seconds({FLOP_PER_PARAM_PER_TOKEN} * DRAFT_PARAMS * SPEC_BATCH, DRAFT_PARAMS * BYTES_PER_ELEM["nvfp4"])
        tokens_per_s = []
        for gamma in range(9):
            t_check = step_seconds({FLOP_PER_PARAM_PER_TOKEN} * MODEL_PARAMS * SPEC_BATCH * (gamma + 1), weight_bytes + kv_read)
            tokens = (1 - DRAFT_ACCEPT ** (gamma + 1)) / (1 - DRAFT_ACCEPT)
            tokens_per_s.append(SPEC_BATCH * tokens / (gamma * t_draft + t_check))
        q09i_speculative_speedup = max(tokens_per_s) / tokens_per_s[0]
        """),
    Markdown("""
        【两种放大规模的办法】上面的模型是稠密的，一块 B300 装得下。服务更大的模型有两条路：混合专家（MoE）让每个 token 只用
        一部分参数；张量并行（tensor parallelism）把一个模型切到几块 GPU 上。两道题都只算权重（NVFP4）和题里说的数据搬运，
        KV cache 忽略；没有现成的公式：一步 decode 要搬什么、搬多少，自己列出来。
        """),
    Code("""
        # q09k：MoE 模型（VARIANT["moe_model"]）和一起 decode 的序列数
        MOE_NAME, MOE_TOTAL_B, MOE_ACTIVE_B, MOE_EXPERTS, MOE_TOP_K = VARIANT["moe_model"]
        MOE_BATCH = VARIANT["moe_batch"]
        MOE_ACTIVE_NOTE = {"Grok-1": "（约 86B，按结构推算，官方未公布）"}.get(MOE_NAME, "")
        print(f"{MOE_NAME}：共 {MOE_TOTAL_B:g}B 参数，每个 token 激活 {MOE_ACTIVE_B:g}B{MOE_ACTIVE_NOTE}；每个 MoE 层 {MOE_EXPERTS} 个路由专家，"
              f"每个 token 选 {MOE_TOP_K} 个；batch = {MOE_BATCH}")
        # q09l：张量并行的 GPU 数；模型（MODEL_PARAMS、KV_LAYERS）同 q07–q09i，hidden size = QUERY_HEADS × KV_HEAD_DIM
        TP_GPUS = VARIANT["tp_gpus"]
        D_MODEL = QUERY_HEADS * KV_HEAD_DIM
        print(f"q09l：{TP_GPUS} 块 B300_SERVE，{KV_LAYERS} 层，hidden size {D_MODEL}；"
              f"每块 GPU 的 NVLink（规格表，双向合计）{B300_SERVE.link_bw / 1e12:g} TB/s")
        """, locked=True),
    Question("q09k_moe_tokens_per_s", """
        **MoE 模型的 decode。** 你的团队在 B300_SERVE 上服务 MoE 模型 `MOE_NAME`：一共 `MOE_TOTAL_B` × 10^9 个参数，每个 token
        只用其中 `MOE_ACTIVE_B` × 10^9 个（"激活参数"）。每个 MoE 层有 `MOE_EXPERTS` 个路由专家（routed expert），每个 token 在每个
        MoE 层从中选 `MOE_TOP_K` 个**不同的**专家（同一个 token 不会两次选同一个专家）；所有路由专家一样大，专家以外的部分
        （注意力、嵌入和输出层、共享专家、稠密层）每一步都要整个读（嵌入其实只取 batch 里的几行，按全读近似）。
        权重全部按 NVFP4 存。
        `MOE_BATCH` 个序列一起 decode：一步里，一个专家只要被 batch 里任何一个 token 选中，它的权重就要从 HBM 读一次（被几个 token
        选中也只读一次）。假设每个 token 在每个 MoE 层从 `MOE_EXPERTS` 个专家里均匀随机地选 `MOE_TOP_K` 个不同的（每种组合的机会
        相同；各 token、各层之间互不相关）。按一步**平均**要读的权重字节（按这个假设的期望值）算一步的时间：每个序列每秒生成多少个 token？（只算权重的读取，KV cache、激活和路由本身忽略；按 B300_SERVE 的实测带宽。
        单位：token/s，写四位有效数字。）和激活参数一样多的稠密模型比一比：差在哪里，batch 变大时差距怎么变？
        """, """
        # 每个路由专家的大小：总参数和激活参数之差全是没被选中的 E − k 个专家；专家以外的部分 = 激活参数 − k 个专家
        expert = (MOE_TOTAL_B - MOE_ACTIVE_B) * 1e9 / (MOE_EXPERTS - MOE_TOP_K)
        always = MOE_ACTIVE_B * 1e9 - MOE_TOP_K * expert
        # 一个 token 选的 k 个专家互不相同，不选某个专家的概率是 1 − k/E；B 个 token 都不选它：(1 − k/E)^B。一层平均读到的专家数：
        experts_read = MOE_EXPERTS * (1 - (1 - MOE_TOP_K / MOE_EXPERTS) ** MOE_BATCH)
        step_bytes = (always + experts_read * expert) * BYTES_PER_ELEM["nvfp4"]
        # 一步的 FLOP 只有 2 × 激活参数 × B，强度远低于屋脊点：受带宽限制，每个序列一步一个 token
        q09k_moe_tokens_per_s = B300_SERVE.mem_bw / step_bytes
        """),
    Question("q09l_tp_allreduce_batch", """
        **张量并行的 decode。** 为了让每一步更短，把 q07–q09i 的模型（`MODEL_PARAMS` 个参数，NVFP4，`KV_LAYERS` 层，
        hidden size `D_MODEL`）按 Megatron 的做法切到 `TP_GPUS` 块 B300_SERVE 上：注意力按头切（`QUERY_HEADS` 个查询头，每块 GPU
        分到同样多个），MLP 按列、按行切开，每块 GPU 存、读 1 / `TP_GPUS` 的权重（KV 头比 GPU 少时，K、V 的投影要在几块 GPU 上复制，多出的这点权重忽略）；矩阵乘按 W4A4（权重和激活都是 NVFP4）在张量核上算。每层在注意力之后、
        MLP 之后各做一次 all-reduce，把 batch 里每个 token 的 `D_MODEL` 维激活（BF16）在所有 GPU 间求和。all-reduce 用环形算法：
        每块 GPU 把数据切成 `TP_GPUS` 份，先 reduce-scatter、再 all-gather，每一轮都同时向下一块发、从上一块收。规格表的 NVLink 带宽
        是两个方向加起来的。只算传输的数据量（每次 all-reduce 的启动延迟、加法本身忽略）：batch 多大时，一步 decode 里 all-reduce
        在 NVLink 上花的时间等于每块 GPU 从 HBM 读自己那份权重的时间？（按 B300_SERVE 的实测带宽；单位：个序列，不必取整。）
        batch 再大，什么先成为瓶颈？GPU 数加倍，这个 batch 怎么变？
        """, """
        # 每块 GPU 读 W / N 字节的权重，按实测带宽
        shard_seconds = MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"] / TP_GPUS / B300_SERVE.mem_bw
        # 环形 all-reduce：reduce-scatter 和 all-gather 各 N − 1 轮，每轮发 1/N 的数据：每块 GPU 发 2(N − 1)/N 倍的数据量，
        # 按一个方向的 NVLink 带宽（规格表的一半）。每个序列每层两次，每次 D_MODEL 个 BF16
        one_direction = B300_SERVE.link_bw / 2
        allreduce_per_sequence = 2 * KV_LAYERS * 2 * (TP_GPUS - 1) / TP_GPUS * D_MODEL * BYTES_PER_ELEM["bf16"] / one_direction
        q09l_tp_allreduce_batch = shard_seconds / allreduce_per_sequence
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
        ties = np.array([1, 3, 5, 7, 10, 14, 20]) / 4  # 0.25, 0.75, …, 5：正好落在两个可表示值中间
        lecture_argmin = E2M1_GRID[np.abs(ties[:, None] - E2M1_GRID).argmin(axis=-1)]
        print_table(["y", "讲义的 argmin", "你的 to_e2m1(y)"],
                    [[f"{y:g}", f"{a:g}", f"{b:g}"] for y, a, b in zip(ties, lecture_argmin, to_e2m1(ties))])
        """),
    FunctionCheck("quantize"),
    Markdown("""
        【数据】Student-t 分布乘以一个缩放（讲义用自由度 5、× 0.02；你的自由度、缩放、种子和个数见下面的格子）：
        大部分数集中在 0 附近，但比高斯分布有更多的"大值"（重尾）——真实模型的权重和激活都有这种离群值（outlier）。
        下面的格子给出数据和两个误差指标的定义（评分用的是同样的定义）。
        """),
    Code(_DEMO2_DATA, locked=True),
    Question("q10a_fp4_zero_share", """
        **先预测，再运行下面的表。** 整张量 FP4 只有一个缩放因子，由 `x` 里绝对值最大的数决定。不调用 `quantize`：
        从 E2M1 的网格和这个缩放因子出发，写出哪些数会被量化成 0，算出你的数据 `x = demo_weights(DEMO2_N)` 里
        原本不是 0、会变成 0 的数占全部数的百分之多少（写出算出来的数，不要取整：这是数出来的比例，评分只容许浮点舍入）。
        下面的表（"被量化成 0 的比例"一列，一位小数）会用你的 `quantize` 验证你的模型。
        """, """
        mine = demo_weights(DEMO2_N)
        # 缩放因子 s = amax / 6；E2M1 最小的非零值 0.5，|x| / s ≤ 0.25 舍入成 0（恰好 0.25 平局取偶，也是 0）
        flushed = np.abs(mine) <= np.abs(mine).max() / 24
        q10a_fp4_zero_share = np.mean(flushed & (mine != 0)) * 100
        """),
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
        ax.set_xlabel(label("每个数的比特数", "bits per value"))
        ax.set_ylabel(label("相对误差（%）", "relative error (%)"))
        ax.set_title(label(f"量化误差与存储（{DEMO2_N} 个 Student-t 数）",
                           f"Quantization error vs storage ({DEMO2_N} Student-t values)"))
        ax.grid(True, which="both", alpha=0.3)
        plt.show()
        """),
    Markdown("""
        【数据量的影响】讲义量化了 2^20 个数，这里只用 `DEMO2_N` 个——结果一样吗？
        """),
    Question("q10_size_sensitive", _with_options("""
        **先预测，再运行下面的扫描。** 数据量从 2^12 增加到 2^18（同一个分布）时，哪种方案的相对误差**增加的百分点最多**？
        从每种方案的缩放因子由什么决定出发想一想，写下你的预测；下面的格子把四种方案在 2^12 到 2^18 上各算一遍，画出来验证。
        """, SIZE_OPTIONS), f"""
        # 缩放因子由谁决定：整张量的由全体数据的 amax 决定，块缩放的只由自己那一块决定。重尾分布的 amax 随 n 变大，
        # 整张量的因子跟着变大，小数被压到更少的格点上；FP4 的网格最粗，受的影响最大
        q10_size_sensitive = {_letter_of(SIZE_OPTIONS, "fp4_tensor")!r}
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
        ax.set_xlabel(label("数据量 n", "number of values n"))
        ax.set_ylabel(label("相对误差（%）", "relative error (%)"))
        ax.set_title(label("误差随数据量的变化", "Error vs data size"))
        ax.grid(True, alpha=0.3)
        ax.legend()
        plt.show()
        """),
    Markdown("""
        【NVFP4 为什么比 MXFP4 准：2 × 2 消融】两种块缩放方案有两处不同：块大小（32 / 16）和块缩放因子的格式
        （2 的幂 E8M0 / E4M3 加张量级因子）。`quantize` 的 `block_size` 和 `scale_format` 参数（见 docstring）让你把两者分开：
        下面的表在你的两个块大小 `BIG`、`SMALL`（`VARIANT["ablation_blocks"]`；讲义是 MXFP4 的 32 和 NVFP4 的 16）上
        把四种组合都算一遍（`"mxfp4"` 默认 32 + E8M0，`"nvfp4"` 默认 16 + E4M3）。
        """),
    Code("""
        BIG, SMALL = VARIANT["ablation_blocks"]  # 你的两个块大小
        ablation = {(block, scale): relative_error(quantize(x, "mxfp4", block_size=block, scale_format=scale), x)
                    for block in (BIG, SMALL) for scale in ("e8m0", "e4m3")}
        print_table(["块大小", "E8M0（2 的幂）", "E4M3 + 张量级 g"],
                    [[str(block)] + [f"{ablation[block, scale] * 100:.2f}%" for scale in ("e8m0", "e4m3")]
                     for block in (BIG, SMALL)])
        """, locked=True),
    Question("q11_scale_format_gain", """
        块大小都取 `SMALL`：把块缩放因子从 2 的幂（E8M0）换成 E4M3，相对误差降低了多少个**百分点**？
        （例：从 20% 降到 15% 写 5。）
        """, """
        q11_scale_format_gain = (ablation[SMALL, "e8m0"] - ablation[SMALL, "e4m3"]) * 100
        """),
    Question("q12_block_size_gain", """
        缩放格式都取 E4M3：把块大小从 `BIG` 减到 `SMALL`，相对误差降低了多少个百分点？q11 + q12 等于（`BIG`，E8M0）和
        （`SMALL`，E4M3）两个角之间的差距吗？（从表里算一算；想想两个因素会不会相互影响。）
        """, """
        q12_block_size_gain = (ablation[BIG, "e4m3"] - ablation[SMALL, "e4m3"]) * 100
        """),
    Markdown("""
        【E8M0 的取法】MXFP4 的块缩放因子是 2 的幂，按 FLOOR 取：s = 2^(floor(log2 amax) − 2)。块里的数除以 s 再舍入到
        E2M1 的网格（最大是 6）。
        """),
    Question("q12p_e8m0_clip_prediction", """
        **先预测，再数。** 不看数据：假设各块的最大值 amax 在对数刻度上均匀分布（任何一个倍频程 [2^k, 2^(k+1)) 里，
        落在其中每一段的机会和这一段在对数刻度上的长度成正比）。按上面的取法，有百分之多少的块，它自己的最大值除以 s 后超过 6、
        被截断到 6？（讲义说"可能略超 6"：超多少、多常见，由你算。）
        """, """
        # amax / s 落在 [4, 8)，正好一个倍频程；(6, 8) 在对数刻度上占 log2(8 / 6) 个倍频程
        q12p_e8m0_clip_prediction = np.log2(8 / 6) * 100
        """),
    Question("q12b_e8m0_clipped_blocks", """
        现在数：在上面的数据 `x` 上，按 `SMALL` 个数一块、E8M0（FLOOR）因子：最大值被截断的块占非零块的百分之多少？
        和你的预测（q12p）差多少？（提示：`np.frexp` 把 amax 写成 m·2^e，m ∈ [0.5, 1)。）
        """, """
        amax = np.abs(x.reshape(-1, SMALL)).max(axis=1)
        amax = amax[amax > 0]
        mantissa, _ = np.frexp(amax)  # amax / s = m·2^e / 2^(e − 1 − 2) = 8m
        q12b_e8m0_clipped_blocks = np.mean(8 * mantissa > 6) * 100
        """),
    Markdown(f"""
        【存储账】NVFP4 每个数平均 {8 * BYTES_PER_ELEM["nvfp4"]:g} bit，即 `BYTES_PER_ELEM["nvfp4"]` = {BYTES_PER_ELEM["nvfp4"]:g} 字节：
        decode 那一节的模型，权重占 `MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"]` 字节（那里的格子打印了 GB 数），B300 的
        {B300.mem_cap / 1e9:g} GB HBM 剩下的留给 KV cache 和激活。
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
        ax.set_title(label("softmax 的 exp 时间与注意力矩阵乘法时间之比（超过 100%：受 exp 限制）",
                           "Softmax exp time vs attention matmul time (above 100%: exp-bound)"))
        ax.legend()
        plt.show()
        """),
    Code("""
        BOTTLENECK_CASE = VARIANT["bottleneck_case"]  # q13：[芯片, 精度, d_qk, d_v]
        MLA_SHAPE = VARIANT["mla_shape"]  # q14：[d_qk, d_v]
        print(f"q13：{BOTTLENECK_CASE}；q14：{MLA_SHAPE}")
        """, locked=True),
    Question("q13_bottleneck", _with_options("""
        长序列的 prefill 或训练（FlashAttention 式分块，分数留在片上）：在芯片 `BOTTLENECK_CASE[0]` 上、用
        `BOTTLENECK_CASE[1]` 做注意力、形状 d_qk = `BOTTLENECK_CASE[2]`、d_v = `BOTTLENECK_CASE[3]` 时，
        按演示 3 的模型——只比较 exp 和矩阵乘法——哪个资源限制了注意力的速度？
        """, BOTTLENECK_OPTIONS), """
        chip_name, precision, d_qk, d_v = BOTTLENECK_CASE
        q13_bottleneck = "B" if exp_ratio(CHIPS[chip_name], precision, d_qk, d_v) > 1 else "A"
        """),
    Question("q14_mla_effect", _with_options("""
        在 B300 上做 FP8 注意力，把 d_head = 128 的普通注意力换成形状 `MLA_SHAPE`（d_qk, d_v），
        t_exp / t_mma 会怎样？
        """, MLA_OPTIONS), """
        q14_mla_effect = "A" if exp_ratio(B300, "fp8", *MLA_SHAPE) > exp_ratio(B300, "fp8", 128, 128) else "B"
        """),
    Markdown("""
        【口径】表里 H100 的 exp 吞吐与完整的 GH100 芯片相符（这是本课程的推算，NVIDIA 没有给出口径，也没有哪款 H100 产品
        开了这么多 SM）：`hw_specs.GH100_FULL_SMS` 个 SM × 每个 SM 每个时钟 `hw_specs.EX2_PER_SM_PER_CLK["Hopper"]` 次 ex2
        × `hw_specs.GH100_FULL_CLOCK_HZ`。可它要对比的 989.4 TFLOPS 是 H100 SXM5 这个产品的：`hw_specs.H100_SXM5_SMS` 个 SM、
        `hw_specs.H100_SXM5_BOOST_HZ`。B200 / B300 的 exp 吞吐同样只是 NVIDIA 图表上的数，没有公布它按哪个时钟算：
        B300 的 `B300.exp_per_s` 除以 `hw_specs.B300_SMS` 个 SM × 每个 SM 每个时钟 `hw_specs.EX2_PER_SM_PER_CLK["Blackwell Ultra FP32"]`
        次 ex2，得到它隐含的时钟；它的 FP8 峰值对应的时钟若比这个低，同一口径下 SFU 就更慢，演示 3 里 B300 的比值会更高。
        本练习按表里的数算（和 H100 一样，口径没有统一），比较两代芯片时记住这一点。
        （`python hw_specs.py` 打印每个数字的口径和出处。）
        """),
    Code("""
        # 你的 head 形状（VARIANT）：[d_qk, d_v]
        BASIS_SHAPE, SOFTWARE_SHAPE, BACKWARD_SHAPE = VARIANT["basis_shape"], VARIANT["software_shape"], VARIANT["backward_shape"]
        SPEEDUP_SHAPE, (OLD_CHIP, NEW_CHIP) = VARIANT["speedup_shape"], (CHIPS[name] for name in VARIANT["speedup_chips"])
        SFU_SHARE = VARIANT["sfu_share"]  # q19：SFU 达到 exp 峰值的比例
        DECODE_ATTENTION = VARIANT["decode_attention"]  # q17b：[每个 KV 头配几个 query 头, 头维, KV cache 的格式]
        EXP_POLY_OPS, SOFTMAX_FMA_OPS = VARIANT["exp_emulation"]  # q16b：软件 exp、softmax 其他运算各占 FMA 管线几条指令
        print_table(["题", "芯片", "d_qk", "d_v"],
                    [["q15", "H100", *BASIS_SHAPE], ["q16", "B200", *SOFTWARE_SHAPE], ["q17", "B200", *BACKWARD_SHAPE],
                     ["q18、q18b", f"{OLD_CHIP.name} → {NEW_CHIP.name}", *SPEEDUP_SHAPE]])
        print(f"q19：SFU 达到 exp 峰值的 {SFU_SHARE:.1%}")
        print(f"q17b：每个 KV 头配 {DECODE_ATTENTION[0]} 个 query 头，头维 {DECODE_ATTENTION[1]}，KV cache 按 {DECODE_ATTENTION[2]} 存")
        print(f"q16b：软件算一次 exp 要 FMA 管线 {EXP_POLY_OPS} 条指令，softmax 的其他运算平均每个分数 {SOFTMAX_FMA_OPS} 条")
        """, locked=True),
    Question("q15_h100_tensor_basis", """
        把 H100 的 exp 吞吐换成和 989.4 TFLOPS 同一口径（H100 SXM5 的 SM 数和时钟），BF16 注意力、形状 `BASIS_SHAPE`
        （d_qk, d_v）时 t_exp / t_mma 是百分之多少？和表里按 4.5 T exp/s 算的比一比。
        """, """
        h100_exp_same_basis = hw_specs.H100_SXM5_SMS * hw_specs.EX2_PER_SM_PER_CLK["Hopper"] * hw_specs.H100_SXM5_BOOST_HZ
        q15_h100_tensor_basis = H100.peak_flops("bf16") / flops_per_exp(*BASIS_SHAPE) / h100_exp_same_basis * 100
        """),
    Question("q16_software_exp_share", """
        软件的办法：把一部分 exp 从 SFU 挪到 FMA 单元上用多项式算（FlashAttention-4 的做法）。B200、FP8、形状 `SOFTWARE_SHAPE`：
        至少要挪走百分之多少的 exp，SFU 的时间才不超过矩阵乘法的时间？（假设 FMA 单元有空闲；如果本来就不超过，写 0。）
        """, """
        q16_software_exp_share = max(0.0, 1 - 1 / exp_ratio(B200, "fp8", *SOFTWARE_SHAPE)) * 100
        """),
    Question("q16b_emulated_exp_time", f"""
        **FMA 单元其实不空闲。** B200 每个 SM 每个时钟：FMA 管线出 {FP32_FMA_PER_SM_PER_CLK["Blackwell"]} 个 FP32
        加、乘或乘加的结果（`hw_specs.FP32_FMA_PER_SM_PER_CLK`），SFU 算 {EX2_PER_SM_PER_CLK["Blackwell"]} 个 exp2
        （`hw_specs.EX2_PER_SM_PER_CLK`）。用多项式算一次 exp 要在 FMA 管线上执行
        `EXP_POLY_OPS` 条指令（范围约简加多项式）；softmax 的其他运算（减去最大值并缩放、累加行和，最大值变了才重新缩放输出）
        平均每个分数本来就占 FMA 管线 `SOFTMAX_FMA_OPS` 条。Tensor Core、SFU、FMA 管线同时工作（简化：只算三个单元各自的吞吐，
        不算它们共用的指令发射）。B200、FP8、形状 `SOFTWARE_SHAPE`：挪走多少 exp 由你定，
        注意力每个分数的时间最短能缩到全部 exp 都在 SFU 上时的百分之多少？这时卡住它的是什么？
        """, """
        # 以"全部 exp 都在 SFU 上"每个分数的时间为 1：矩阵乘法 1 / exp_ratio。挪走比例 s：SFU 1 − s，FMA 管线 (a + s·c) / f
        # （f：每个时钟 FMA 管线的结果数 ÷ SFU 的）。exp 的部分在两者相等时最快：(a + c) / (f + c)
        pipes = hw_specs.FP32_FMA_PER_SM_PER_CLK["Blackwell"] / hw_specs.EX2_PER_SM_PER_CLK["Blackwell"]
        balanced = (SOFTMAX_FMA_OPS + EXP_POLY_OPS) / (pipes + EXP_POLY_OPS)
        q16b_emulated_exp_time = max(1 / exp_ratio(B200, "fp8", *SOFTWARE_SHAPE), balanced) * 100
        """),
    Question("q17_backward_ratio", f"""
        反向传播每个分数仍然只有一次 exp（重算 P），但有 5 次矩阵乘法：重算 S = QKᵀ、dV = Pᵀ·dO、dP = dO·Vᵀ、
        dQ = dS·K、dK = dSᵀ·Q。先自己数一数：每个分数，这 5 次乘法各有几次乘加、沿着 d_qk 还是 d_v 那一维？
        B200、FP8（假设反向的矩阵乘法也用 FP8）、形状 `BACKWARD_SHAPE` 的反向传播，t_exp / t_mma 是百分之多少？反向为什么不太在乎 exp？
        """, f"""
        d_qk, d_v = BACKWARD_SHAPE
        backward_flops = {BACKWARD_FLOPS_PER_EXP["d_qk"]} * d_qk + {BACKWARD_FLOPS_PER_EXP["d_v"]} * d_v
        q17_backward_ratio = B200.peak_flops("fp8") / backward_flops / B200.exp_per_s * 100
        """),
    Question("q17b_decode_exp_vs_kv", """
        上面的比值都是 prefill 和训练的：分数留在片上，exp 和矩阵乘法比。decode 不一样：每生成一个 token，每个序列都要把上下文里
        全部 token 的 K 和 V 从 HBM 读一遍。推理组在 B300_SERVE 上评估一种注意力设计 `DECODE_ATTENTION`：GQA 每个 KV 头配
        `DECODE_ATTENTION[0]` 个 query 头，K 和 V 都是 `DECODE_ATTENTION[1]` 维，KV cache 按 `DECODE_ATTENTION[2]` 存（字节数按
        `BYTES_PER_ELEM`）。（这个设计和上面你自己那个模型的分组无关。）
        decode 的注意力要为每个分数做一次 exp：SFU 做完这些 exp 的时间是从 HBM 读 KV cache 的时间的百分之多少（exp 吞吐用表里的 `B300.exp_per_s`，带宽用 B300_SERVE 的实测值）？
        它和上下文长度、层数、KV 头数有没有关系？什么样的设计会让 exp 在 decode 里也成为瓶颈？
        """, """
        group, head_dim, kv_format = DECODE_ATTENTION
        # 每个上下文 token、每个 KV 头：读 K 和 V 各 head_dim 个数；组里每个 query 头各有一个分数，各做一次 exp
        t_read = 2 * head_dim * BYTES_PER_ELEM[kv_format] / B300_SERVE.mem_bw
        t_exps = group / B300.exp_per_s
        q17b_decode_exp_vs_kv = t_exps / t_read * 100
        """),
    Question("q17c_prefill_attention_ratio", f"""
        演示 3 的比值只看注意力内部。它在整个模型里占多少？回到 decode 那一节你的模型：`KV_LAYERS` 层，每层 `QUERY_HEADS` 个 query 头，
        每个头 d_qk = d_v = `KV_HEAD_DIM`。一个新请求的 prompt 有 `SERVICE_CONTEXT` 个 token，一次 prefill 算完；注意力是因果的
        （每个 token 只和它自己以及它前面的 token 算分数）。权重的矩阵乘法每个 token 做 {FLOP_PER_PARAM_PER_TOKEN} × `MODEL_PARAMS` 次运算，
        注意力里的 QKᵀ 和 PV 另算。这次 prefill 里，QKᵀ 和 PV 的运算是权重的矩阵乘法的百分之多少？prompt 变长时这个比值怎么变？
        演示 3 的 exp 瓶颈什么时候才会拖慢整个模型？
        """, f"""
        n = SERVICE_CONTEXT
        scores = KV_LAYERS * QUERY_HEADS * n * (n + 1) / 2  # 因果：第 i 个 token 有 i 个分数，每层每个 query 头各一份
        attention_flops = scores * flops_per_exp(KV_HEAD_DIM, KV_HEAD_DIM)
        weight_flops = {FLOP_PER_PARAM_PER_TOKEN} * MODEL_PARAMS * n
        q17c_prefill_attention_ratio = attention_flops / weight_flops * 100
        """),
    Markdown(f"""
        【模型和实测】一个分数的时间有两个极端：exp 和矩阵乘法**完全重叠**（两个单元同时忙，演示 3 的表判断谁是瓶颈用的就是它），
        或者**完全串行**（一个做完另一个才开始）。每块芯片上真实的时间介于两者之间。两个模型的式子由你自己写出来。q18–q18b 先在你的形状 `SPEEDUP_SHAPE`、
        你的一次换代 `OLD_CHIP` → `NEW_CHIP` 上、按 FP8 算这两个模型。

        实测只有一个：{MEASURED_DOCUMENT} 报告，GB300（Blackwell Ultra）上 FP8 前向（端到端）比 GB200（Blackwell）快约
        {(MEASURED_FP8_FORWARD_GAIN - 1) * 100:.0f}%，测的是 {MEASURED_MODEL}。本课程把它读作注意力的测量，形状取 {MEASURED_MODEL} 的 MLA
        在 prefill 时的 d_qk = {MEASURED_D_QK}、d_v = {MEASURED_D_V}（这两点是本课程的推断，博客没有写）。
        q18c–q19 和它比，所以要换回**实测的形状**和 B200 → B300。
        """),
    Question("q18_model_speedup", """
        完全重叠的模型：形状 `SPEEDUP_SHAPE`、FP8，从 `OLD_CHIP` 换到 `NEW_CHIP` 快多少倍（旧芯片上一个分数的时间 ÷ 新芯片上的）？
        t_exp 用表里的 `chip.exp_per_s`（两块芯片都按表里的数，不换成 q15 的口径：q15 说明了 H100 的表值偏乐观）。
        """, """
        def attention_time(chip, overlap, d_qk, d_v):
            t_exp = 1 / chip.exp_per_s
            t_mma = flops_per_exp(d_qk, d_v) / chip.peak_flops("fp8")
            return max(t_exp, t_mma) if overlap else t_exp + t_mma


        q18_model_speedup = attention_time(OLD_CHIP, True, *SPEEDUP_SHAPE) / attention_time(NEW_CHIP, True, *SPEEDUP_SHAPE)
        """),
    Question("q18b_serial_speedup", """
        完全串行的模型：同样的形状和芯片，快多少倍？
        """, """
        q18b_serial_speedup = attention_time(OLD_CHIP, False, *SPEEDUP_SHAPE) / attention_time(NEW_CHIP, False, *SPEEDUP_SHAPE)
        """),
    Question("q18c_measured_position", _with_options(f"""
        换回实测的形状（d_qk = {MEASURED_D_QK}、d_v = {MEASURED_D_V}）和 B200 → B300，重新算两个模型的加速：
        实测的 {MEASURED_FP8_FORWARD_GAIN:g} 倍落在哪里？
        """, POSITION_OPTIONS), f"""
        measured_shape = ({MEASURED_D_QK}, {MEASURED_D_V})
        bounds = [attention_time(B200, overlap, *measured_shape) / attention_time(B300, overlap, *measured_shape)
                  for overlap in (True, False)]
        low, high = sorted(bounds)
        q18c_measured_position = "A" if {MEASURED_FP8_FORWARD_GAIN:g} > high else ("C" if {MEASURED_FP8_FORWARD_GAIN:g} < low else "B")
        """),
    Question("q19_mma_efficiency", f"""
        在实测的形状上、完全重叠的模型里，假设两代芯片的 SFU 都只达到 exp 峰值的 `SFU_SHARE`，矩阵乘法都只达到峰值的 a：
        a 是百分之多少时，模型的加速正好等于实测的 {MEASURED_FP8_FORWARD_GAIN:g} 倍？把全部差距都归到 a 上合理吗？
        """, f"""
        t_b300 = (1 / (SFU_SHARE * B200.exp_per_s)) / {MEASURED_FP8_FORWARD_GAIN:g}
        q19_mma_efficiency = flops_per_exp({MEASURED_D_QK}, {MEASURED_D_V}) / (B300.peak_flops("fp8") * t_b300) * 100
        """),

    # ------------------------------------------------------------------ real tensors
    Markdown(f"""
        ## 真实张量：一层 MiniLM 的权重和激活

        【问题】演示 2 的数据是独立同分布的 Student-t 随机数。真实模型的激活不一样：少数几个**通道**（列）一直很大。
        这种有结构的离群值对量化意味着什么？

        【数据】`{REAL_TENSORS_FILE}` 来自预训练模型 {extract.MODEL}（PyPI 包 `{extract.PACKAGE}` 里的权重）：
        W 是第 {extract.LAYER} 层注意力的 query 投影权重（384 × 384），X 是同一段英文输入进入这一层时的隐藏状态
        （token 数 × 384）。模型本身算的就是 Y = X·Wᵀ（加偏置）。出处（包的版本、层、输入文本）存在文件里，下面的格子会打印出来；
        提取它的脚本随参考答案一起发布。

        【做法】两个操作数**都**量化，再按 FP32 相乘（FP32 累加），看 Y 的相对误差。分块沿着求和的那一维 K（X 和 W 每一行里连续的数），
        `quantize_matrix` 替你把矩阵展平再量化（384 是 32 的倍数，块不会跨行）。

        【你的那一块】每位同学算 Y 的一块（tile）：X 的 `REAL_TOKENS` = [起点, 个数] 这几个 token，W 的 `REAL_OUTPUTS` =
        [起点, 个数] 这几个输出通道，K 维（384 个输入通道）全部保留：`X_TILE, W_TILE = real_slice(X, W, REAL_TOKENS, REAL_OUTPUTS)`，
        两块各自当作一个张量来量化。下面各题说的 X、W 都是你的这一块。
        """),
    Code(_REAL_TENSORS_HELPERS, locked=True),
    Code("""
        X, W, provenance = load_real_tensors()
        for key, value in provenance.items():
            print(f"{key}: {value}")
        X_TILE, W_TILE = real_slice(X, W, REAL_TOKENS, REAL_OUTPUTS)
        print(f"你的那一块：X 的 token {REAL_TOKENS[0]}–{sum(REAL_TOKENS) - 1}（{X_TILE.shape}），"
              f"W 的输出通道 {REAL_OUTPUTS[0]}–{sum(REAL_OUTPUTS) - 1}（{W_TILE.shape}）；旋转块大小 {ROTATION_SIZE}")

        fig, ax = plt.subplots(figsize=(7, 3.4))
        ax.plot(np.abs(X).max(axis=0), label=label("X：每个通道的 max|x|", "X: max |x| per channel"))
        ax.plot(np.abs(W).max(axis=0), label=label("W：每个输入通道的 max|w|", "W: max |w| per input channel"))
        ax.set_xlabel(label("通道（K 维）", "channel (K dimension)"))
        ax.set_title(label("真实激活的离群值集中在少数几个通道", "Real activations: outliers sit in a few channels"))
        ax.legend()
        plt.show()
        """),
    Question("q22_real_fp4_tensor_error", """
        X 和 W 都用整张量 FP4（`"fp4_tensor"`）量化：Y 的相对误差是百分之多少？和演示 2 的 Student-t 数据比一比。
        """, """
        q22_real_fp4_tensor_error = matmul_error(quantize_matrix(X_TILE, "fp4_tensor"), quantize_matrix(W_TILE, "fp4_tensor"),
                                                 X_TILE, W_TILE) * 100
        """),
    Question("q23_real_nvfp4_error", """
        X 和 W 都用 NVFP4 量化：Y 的相对误差是百分之多少？
        """, """
        q23_real_nvfp4_error = matmul_error(quantize_matrix(X_TILE, "nvfp4"), quantize_matrix(W_TILE, "nvfp4"), X_TILE, W_TILE) * 100
        """),
    Markdown("""
        【旋转】H 是正交矩阵（HHᵀ = I）时，(XH)(WH)ᵀ = XWᵀ：先把两个操作数都乘以 H 再量化，结果不变，
        但一个离群通道被摊到了很多通道上。`block_hadamard(384, ROTATION_SIZE)` 是对角线上放 384 / `ROTATION_SIZE` 个
        `ROTATION_SIZE` 阶 Hadamard 矩阵的旋转（QuaRot 在推理里这样旋转前向的矩阵乘法；NVIDIA 的 NVFP4 训练方案只在
        权重梯度那个矩阵乘法上旋转，用带随机符号的 16 阶 Hadamard 变换；这里的旋转固定、没有随机符号。你的块大小见上面的格子）。
        """),
    Question("q24_rotated_fp4_tensor_error", """
        两个操作数都先乘以 `block_hadamard(384, ROTATION_SIZE)` 再用整张量 FP4 量化：Y 的相对误差是百分之多少？
        """, """
        H = block_hadamard(X_TILE.shape[1], ROTATION_SIZE)
        q24_rotated_fp4_tensor_error = matmul_error(quantize_matrix(X_TILE @ H, "fp4_tensor"),
                                                    quantize_matrix(W_TILE @ H, "fp4_tensor"), X_TILE, W_TILE) * 100
        """),
    Question("q25_rotation_nvfp4", _with_options("""
        同样的旋转对 NVFP4 有什么影响？
        """, ROTATION_OPTIONS), """
        rotated = matmul_error(quantize_matrix(X_TILE @ H, "nvfp4"), quantize_matrix(W_TILE @ H, "nvfp4"), X_TILE, W_TILE) * 100
        q25_rotation_nvfp4 = "A" if rotated < q23_real_nvfp4_error else "B"
        """),
    Markdown("""
        【在线旋转的代价】推理时权重 W 可以离线旋转好、直接存成 NVFP4；激活 X 每次前向都是新的，只能在线旋转：
        X 的每一行按 16 个数一段（和 NVFP4 的块对齐），每段乘以 16 阶 Hadamard 矩阵，再量化成 NVFP4，送进 Tensor Core。
        这里假设旋转用快速 Walsh–Hadamard 变换在 CUDA core 的 FMA 管线上做（像 FFT 那样分级的蝶形：每一级把
        一段里的数两两配对，每对算一次加、一次减，下一级换一种配对，直到每个输出都含了这一段的全部输入）；
        另一种做法——在 Tensor Core 上当作 16 × 16 矩阵乘法做——见解释。
        """),
    Code("""
        # q25w 的参数（VARIANT）：[旋转最多占矩阵乘法时间的百分之几, 矩阵乘法达到 NVFP4 峰值的比例]
        ROTATION_BUDGET, ROTATION_GEMM_SHARE = VARIANT["online_rotation"]
        print(f"q25w：旋转最多占矩阵乘法时间的 {ROTATION_BUDGET:g}%，B200 的 NVFP4 矩阵乘法达到峰值的 {ROTATION_GEMM_SHARE:.1%}")
        """, locked=True),
    Question("q25w_online_rotation_width", """
        B200 上的一层 Y = X·Wᵀ（X 是 M × K 的激活，W 是 N × K，N 是这一层的输出宽度），两个操作数都是 NVFP4，
        矩阵乘法达到 NVFP4 峰值的 `ROTATION_GEMM_SHARE`。X 先按上面的办法在线旋转（W 已离线旋转好）；归一化的 1/4 并进
        NVFP4 的缩放因子，不另算。口径：一次 FP32 加或减是 FMA 管线的一个结果（`hw_specs.FP32_FMA_PER_SM_PER_CLK` 数的就是结果，
        FMA 管线跑满）；B200 的 SM 数和时钟取表里 exp 吞吐的口径（`B200.exp_per_s` 按每个 SM 每个时钟
        `hw_specs.EX2_PER_SM_PER_CLK["Blackwell"]` 次 ex2 算）。旋转和矩阵乘法先后执行、不重叠。
        输出宽度 N 至少是多少，旋转的时间才不超过矩阵乘法时间的 `ROTATION_BUDGET`%？（写边界值，不必取整。）
        """, """
        # 每 16 个数：log2(16) = 4 级，每级 8 对、每对一加一减：16 · 4 = 64 个 FMA 管线的结果，每个数 4 个
        # 矩阵乘法：X 的每个数参与 N 次乘加，2N FLOP。M、K 两边都有，约掉
        fma_pipe = B200.exp_per_s / hw_specs.EX2_PER_SM_PER_CLK["Blackwell"] * hw_specs.FP32_FMA_PER_SM_PER_CLK["Blackwell"]
        gemm = B200.peak_flops("nvfp4") * ROTATION_GEMM_SHARE
        # 4 / fma_pipe <= ROTATION_BUDGET / 100 × 2N / gemm
        q25w_online_rotation_width = 4 * gemm / (2 * fma_pipe * ROTATION_BUDGET / 100)
        """),
    Code("""
        # q25x 的参数（VARIANT）：训练里一个线性层的 [输入宽度 K, 输出宽度 N]
        WGRAD_K, WGRAD_N = VARIANT["wgrad_layer"]
        print(f"q25x：线性层 Y = X·Wᵀ，K = {WGRAD_K}，N = {WGRAD_N}")
        """, locked=True),
    Question("q25x_wgrad_rotation_share", """
        **训练里的旋转。** NVIDIA 的 NVFP4 训练方案只在计算权重梯度的矩阵乘法 dW = dYᵀ·X 上旋转（上面【旋转】说过），
        旋转后再量化成 NVFP4。这一层前向是 Y = X·Wᵀ，X 是 M × `WGRAD_K`（M 个 token），输出宽度 `WGRAD_N`；
        dW 的这次矩阵乘法沿 token 那一维求和，旋转也就沿着这一维，每 16 个数一段，结果不变。哪些要在线旋转、各有多少个数，由你判断。
        旋转的做法、计数的口径和 q25w 一样（随机符号只改符号位，不另算）；矩阵乘法同样在 B200 上达到 NVFP4 峰值的
        `ROTATION_GEMM_SHARE`，两步先后执行。旋转的时间是这次矩阵乘法时间的百分之多少？
        """, """
        # 两个输入都是这一步刚算出来的（没有哪个是存好的权重）：dY 有 M·N 个数，X 有 M·K 个，每个数 4 个 FMA 管线的结果
        # 矩阵乘法 2·M·N·K FLOP；M 约掉
        rotation = 4 * (WGRAD_N + WGRAD_K) / fma_pipe
        q25x_wgrad_rotation_share = rotation / (2 * WGRAD_N * WGRAD_K / gemm) * 100
        """),
    Markdown(f"""
        【在比特预算内设计格式】元素都是 4 bit 的 E2M1，每块一个 8 bit 的缩放因子：每个数平均 `format_bits(块大小)` = 4 + 8 / 块大小 bit
        （E4M3 方案的张量级 FP32 因子摊到每个数上可以忽略）。块缩放因子有三种：
        {"；".join(BUDGET_SCALES.values())}。RCEIL 让块内最大值缩放后不超过 6（不截断），代价是网格更粗。
        `quantize` 能做 FLOOR 和 E4M3 两种（`block_size`、`scale_format`）；RCEIL 在下面的格子里（ceil(log2(·)) 用 `np.frexp` 精确地求）。
        格子在你的那一块 X、W 上把 `BUDGET_CONFIGS` 的九种配置都量一遍；画出"误差—比特数"的图，看哪些配置在前沿上（q27 要用）。
        """),
    Code("""
        # 比特预算的实验（不计分，q27 要用）：RCEIL 和九种配置；改一改、画一画"误差—比特数"的图

        def rceil_quantize(a, block):
            blocks = np.asarray(a, dtype=np.float64).reshape(-1, block)
            amax = np.abs(blocks).max(axis=1, keepdims=True)
            m, e = np.frexp(amax / 6)  # amax / 6 = m·2^e，m ∈ [0.5, 1)：ceil(log2) = e，m = 0.5 时是 e − 1
            scale = np.where(amax > 0, np.ldexp(1.0, np.where(m == 0.5, e - 1, e)), 1.0)
            return (to_e2m1((blocks / scale).ravel()).reshape(blocks.shape) * scale).reshape(np.shape(a))


        def configured(a, block, scale):
            if scale == "rceil":
                return rceil_quantize(a, block)
            return quantize_matrix(a, "mxfp4", block_size=block, scale_format={"floor": "e8m0", "e4m3": "e4m3"}[scale])


        budget_errors = {letter: matmul_error(configured(X_TILE, block, scale), configured(W_TILE, block, scale), X_TILE, W_TILE)
                         for letter, (block, scale) in BUDGET_CONFIGS.items()}
        within = [letter for letter, (block, _) in BUDGET_CONFIGS.items() if format_bits(block) <= BIT_BUDGET]
        best = min(within, key=budget_errors.get)
        print_table(["配置", "块大小", "缩放因子", "比特/数", "Y 的相对误差"],
                    [[letter, str(block), scale, f"{format_bits(block):g}", f"{budget_errors[letter] * 100:.2f}%"]
                     for letter, (block, scale) in BUDGET_CONFIGS.items()])
        print(f"预算 {BIT_BUDGET:g} bit 内误差最小：{best}")
        """),

    # ------------------------------------------------------------------ end to end: the whole encoder
    Markdown(f"""
        ## 端到端：把整个 MiniLM 量化

        【问题】上面的误差都是一个张量、一块 Y = X·Wᵀ 的误差。可模型要的是最后的结果：六层编码器里的**每一个**线性层都量化之后，
        句向量还剩多少？你在一块上量出的张量误差，能预测整个模型的效果吗？

        【数据】`{end_to_end.ENCODER_FILE}`：同一个模型 {extract.MODEL} 的全部六层，每层六个线性层
        （{"、".join(end_to_end.LINEAR_LAYERS)}，一共 36 个）。线性层的权重按 float16 存储（文件约 22 MB），读进来是 float32；
        词表只留下下面这些句子用到的那几行，句子已经用模型自己的分词器切好。这份权重的 FP32 前向就是下面的"FP32"：
        它和原模型（PyTorch）算出的句向量的余弦与 1 相差不到 10^-3，提取脚本检查过。

        【做法】`encode(model, weights, scheme, rotate)` 是整个前向（代码在下面的格子里，读一读）：每个线性层的两个操作数——
        权重 W 和输入 x——都用**你的** `quantize`（经过 `quantize_matrix`）量化，再按 FP32 相乘；权重每种格式只量化一次
        （`linear_weights`），输入在前向里逐层量化（所有句子的 token 合成一个张量）。句向量：每句的 token 取平均再归一化。
        这一节要把 1060 万个权重按四种格式各量化一遍，`quantize` 得用 numpy 整段运算写：整段运算几秒钟，逐个元素的 Python
        循环要一分钟以上。四种格式的权重在下面第一个格子里一起量化，评分时一个格子最多运行 {Limits().cell_timeout:g} 秒，
        超时的话这一节的答案都算不出来。
        `"nvfp4 + H16"` 先做 16 阶 Hadamard 旋转（`rotate16`：只在一个 NVFP4 块的 16 个数之内混合，(xH)(WH)ᵀ = xWᵀ）再 NVFP4。

        端到端的效果用两个数衡量：
        - `end_deficit`：每句的句向量和 FP32 句向量的余弦 cos，1 − cos 的平均（0 表示完全一样）；本节以 10⁻⁴ 为单位；
        - `rank_agreement`：句子对按相似度排序，和 FP32 排出的先后一致的比例（检索、去重这类用途只在乎排序）。
        """),
    Code(_ENCODER_HELPERS, locked=True),
    Code("""
        encoder, sentences, pairs, encoder_provenance = load_encoder()
        end_embeddings = {"fp32": encode(encoder, linear_weights(encoder))}
        fp32_similarity = pair_similarities(end_embeddings["fp32"], pairs)
        print_table(["句子对", "FP32 的余弦相似度"],
                    [[f"{sentences[a]} / {sentences[b]}", f"{s:.3f}"] for (a, b), s in zip(pairs, fp32_similarity)])

        # 你那一块（X_TILE、W_TILE）在每种格式下的张量误差：上面 q22–q24 的算法
        def tile_error(scheme, rotate):
            x, w = (rotate16(X_TILE), rotate16(W_TILE)) if rotate else (X_TILE, W_TILE)
            return matmul_error(quantize_matrix(x, scheme), quantize_matrix(w, scheme), X_TILE, W_TILE)


        tile_errors = {name: tile_error(scheme, rotate) for name, (scheme, rotate) in END_FORMATS.items() if scheme}
        print_table(["格式", "你那一块 Y 的相对误差"], [[name, f"{error:.2%}"] for name, error in tile_errors.items()])

        # 每种格式的权重先都量化好（这一节最花时间的一步）；前向先只跑一种：FP8（整张量）量化全部 36 个线性层
        end_weights = {name: linear_weights(encoder, scheme, rotate) for name, (scheme, rotate) in END_FORMATS.items() if scheme}
        end_embeddings["fp8_tensor"] = encode(encoder, end_weights["fp8_tensor"], "fp8_tensor")
        """),
    Question("q34a_fp8_end_deficit", """
        FP8（整张量）量化全部 36 个线性层之后，句向量和 FP32 的 1 − cos 平均是多少（以 10⁻⁴ 为单位）？
        """, """
        q34a_fp8_end_deficit = end_deficit(end_embeddings["fp8_tensor"], end_embeddings["fp32"]) * 1e4
        """),
    Question("q34p_nvfp4_end_prediction", """
        **先预测，再测量。** 在运行下面的测量之前写下你的预测。假设端到端的效果完全由张量误差决定：每种格式让句向量偏离 FP32 的
        那个误差向量，长度和这种格式在你那一块上的张量误差（上表）成正比，比例系数对所有格式都一样，方向是随机的
        （和句向量几乎垂直）。用你量出的 FP8（q34a）定出这个比例，NVFP4 的 1 − cos 应该是多少（以 10⁻⁴ 为单位）？
        """, """
        q34p_nvfp4_end_prediction = q34a_fp8_end_deficit * (tile_errors["nvfp4"] / tile_errors["fp8_tensor"]) ** 2
        """),
    Question("q35p_fp4_end_prediction", """
        **先预测，再测量。** 按 q34p 的同一个模型，整张量 FP4 的 1 − cos 应该是 FP8 的多少倍？
        它在你那一块上的张量误差（q22）比 NVFP4 的（q23）大，本身就有十几个百分点以上：想一想这个模型在误差很大时还靠不靠得住。
        """, """
        q35p_fp4_end_prediction = (tile_errors["fp4_tensor"] / tile_errors["fp8_tensor"]) ** 2
        """),
    Question("q34r_h16_end_prediction", """
        **先预测，再测量。** 按同一个模型，先做 16 阶旋转再 NVFP4（`"nvfp4 + H16"`）的 1 − cos 应该是 FP8 的多少倍？
        你那一块上旋转让张量误差变大了还是变小了？整个模型会跟着这样变吗？
        """, """
        q34r_h16_end_prediction = (tile_errors["nvfp4 + H16"] / tile_errors["fp8_tensor"]) ** 2
        """),
    Code("""
        # 现在量：其余几种格式各跑一遍整个前向（权重上面已经量化好）
        for name, (scheme, rotate) in END_FORMATS.items():
            if name not in end_embeddings:
                end_embeddings[name] = encode(encoder, end_weights[name], scheme, rotate)
        end_deficits = {name: end_deficit(e, end_embeddings["fp32"]) for name, e in end_embeddings.items()}
        agreements = {name: rank_agreement(pair_similarities(e, pairs), fp32_similarity) for name, e in end_embeddings.items()}
        print_table(["格式", "你那一块的张量误差", "1 − cos（10⁻⁴）", "句子对排序一致率"],
                    [[name, f"{tile_errors[name]:.2%}" if name in tile_errors else "-", f"{end_deficits[name] * 1e4:.2f}",
                      f"{agreements[name]:.0%}"] for name in END_FORMATS])

        fig, ax = plt.subplots(figsize=(6, 4))
        for name in tile_errors:
            ax.scatter(tile_errors[name], end_deficits[name] * 1e4)
            ax.annotate(name, (tile_errors[name], end_deficits[name] * 1e4), textcoords="offset points", xytext=(4, 4))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(label("你那一块的张量误差", "tensor error on your tile"))
        ax.set_ylabel(label("端到端 1 − cos（×1e-4）", "end to end 1 − cos (1e-4)"))
        ax.set_title(label("张量误差和端到端效果", "Tensor error and end effect"))
        plt.show()
        """),
    Question("q34b_nvfp4_end_deficit", """
        NVFP4 量化全部 36 个线性层之后，1 − cos 测出来是多少（以 10⁻⁴ 为单位）？它是你预测的（q34p）多少倍？
        （这个差距说明了什么，在最后的文字题里回答。）
        """, """
        q34b_nvfp4_end_deficit = end_deficits["nvfp4"] * 1e4
        print(f"测量是预测的 {q34b_nvfp4_end_deficit / q34p_nvfp4_end_prediction:.2f} 倍")
        """),
    Question("q35g_fp4_end_over_fp8", """
        整张量 FP4 的 1 − cos 测出来是 FP8 的多少倍？它是你预测的（q35p）多少倍？
        """, """
        q35g_fp4_end_over_fp8 = end_deficits["fp4_tensor"] / end_deficits["fp8_tensor"]
        print(f"测量是预测的 {q35g_fp4_end_over_fp8 / q35p_fp4_end_prediction:.2f} 倍")
        """),
    Question("q34h_h16_end_over_fp8", """
        先旋转再 NVFP4 的 1 − cos 测出来是 FP8 的多少倍，是你预测的（q34r）多少倍？（这两个倍数说明了什么，在最后的文字题里回答。）
        """, """
        q34h_h16_end_over_fp8 = end_deficits["nvfp4 + H16"] / end_deficits["fp8_tensor"]
        print(f"测量是预测的 {q34h_h16_end_over_fp8 / q34r_h16_end_prediction:.2f} 倍")
        """),
    Question("q35_fp4_rank_agreement", """
        整张量 FP4 的句向量离 FP32 最远。它的句子对排序和 FP32 的一致率是百分之多少？
        """, """
        q35_fp4_rank_agreement = agreements["fp4_tensor"] * 100
        """),
    Question("q35m_nvfp4_weight_mb", """
        量化省下的是存储和带宽。这 36 个线性层的权重按 NVFP4 存（4 bit 的 E2M1 元素，每 16 个数一个 8 bit 的 E4M3 块因子；
        每个张量一个的 FP32 因子忽略不计）一共是多少 MB（10^6 字节）？每层的形状在 `encoder` 里。
        """, """
        # 每层：query、key、value、注意力输出各 384 × 384，FFN 的两层各 384 × 1536（encoder["layer0.ffn_in.w"].shape 等）
        q35m_nvfp4_weight_mb = 6 * (4 * 384 * 384 + 2 * 384 * 1536) * (4 + 8 / 16) / 8 / 1e6
        """),

    # ------------------------------------------------------------------ a measured CPU roofline
    Markdown(f"""
        ## 测一测：你的 CPU 的 roofline

        【问题】演示 3 的比值来自规格表。换成你自己的 CPU：它的"屋顶"——内存带宽和矩阵乘法的算力——各是多少？
        矩阵乘法要多大才够得着算力屋顶？`np.exp` 和你的 `quantize` 离带宽屋顶多远？一次 exp 相当于多少次 FMA？

        【做法】计时要可靠。`cpu_timing.py` 里的 `triad_seconds`、`gemm_seconds`、`exp_seconds` 各返回一种运算一次的耗时（秒），
        评分机用的是同一份代码（打开读一读）：
        - **线程数固定为 1**：BLAS 默认用上所有核心，线程数一变 GFLOP/s 能差好几倍；导入 `cpu_timing` 时就固定了；
        - **预先分配**输入和输出（`out=`）：计时里不包含分配内存的开销；
        - 数组**大过最后一级缓存**（每个 {STREAM_BYTES // 1024**2} MiB）：测的是内存，不是缓存。numpy 的 triad 用到三个数组，
          exp 用到两个：最后一级缓存有 {STREAM_BYTES // 1024**2} MiB 以上的处理器（带 3D V-Cache 的、许多服务器 CPU），量到的可能有一部分
          甚至全部是缓存的带宽；
        - 先**热身**一次，再重复几次取**中位数**（`median_seconds`）；
        - 计的是这个线程用掉的 **CPU 时间**，不是墙上时间：别的程序抢走 CPU 的那段时间不算进来（Windows 上线程的 CPU 时间
          太粗，`cpu_timing` 改计墙上时间，见它的 `CLOCK`；评分机的沙箱里总是 CPU 时间）。

        要你做的是把耗时换算成屋顶：每种运算搬了多少字节、做了多少 FLOP。

        【评分】评分时整个 notebook 在评分机的沙箱里重新运行；评分机在同样的沙箱里、用同样的 `cpu_timing`，
        在评分开始前把同样的运算量一遍（一批作业量一次）。你的测量值和它的参照值相差不超过 {AGREEMENT_FACTOR:g} 倍就算对——两者都只计
        线程自己的 CPU 时间，别的程序抢走 CPU 的时间不算进来（但它们分走内存带宽时，triad 和 exp 仍会变慢）；手抄的数字只有碰巧和评分机一致才能通过。由测量值推出来的数，必须和**同一次运行**的测量值对得上。
        所以答案要由代码算出来，不要手抄数字。比 GPU 大还是小，哪个方向都可能是对的：按你量出的数说。
        """),
    Code("""
        from cpu_timing import (AGREEMENT_FACTOR, EXP_N, GEMM_SIZES, PINNED_BY, TRIAD_N, exp_seconds, gemm_seconds,
                                median_seconds, show_measured, shows_measured, triad_seconds)

        # show_measured 打印测量结果；评分时不打印（每次量出的数都不同，评分结果只能由你的文件决定）

        print(f"BLAS 线程数已固定为 1（{PINNED_BY}）")
        """),
    Question("q28a_triad_gb_per_s", f"""
        **屋顶之一：带宽。** `triad_seconds()` 是 STREAM 的 triad `a = b + 3·c` 在 `TRIAD_N` = {TRIAD_N:,} 个 float64 上跑一次的时间。
        按 STREAM 的约定（每个元素读 b、读 c、写 a 各一次），你的内存带宽是多少 GB/s（10^9 字节每秒）？
        （numpy 分两步算：先 `np.multiply(c, 3, out=a)`，再 `np.add(a, b, out=a)`，实际搬的字节比约定的多：按约定算出的数比 numpy 实际用到的带宽小。）
        """, """
        q28a_triad_gb_per_s = 3 * 8 * TRIAD_N / triad_seconds() / 1e9
        """),
    Question("q29_matmul_gflops", """
        **屋顶之二：算力。** `gemm_seconds(m)` 是 m × m 的 float32 矩阵乘法 `np.matmul(a, b, out=c)` 跑一次的时间。对 `GEMM_SIZES`
        里的每个 m 算出 GFLOP/s，你的 CPU 单线程的算力屋顶取其中最大的一个。
        """, """
        gemm_sweep = {edge: 2 * edge**3 / gemm_seconds(edge) / 1e9 for edge in GEMM_SIZES}
        show_measured(["m", "GFLOP/s"], [[edge, f"{rate:.1f}"] for edge, rate in gemm_sweep.items()])
        q29_matmul_gflops = max(gemm_sweep.values())
        """),
    Question("q29b_cpu_ridge", """
        你的 CPU 的 ridge point 是多少 FLOP/B（算力用 q29，带宽用 q28a；演示 1 里 H100 是 591）？
        """, """
        q29b_cpu_ridge = q29_matmul_gflops / q28a_triad_gb_per_s
        """),
    Question("q29c_gemm_edge_at_ridge", """
        **矩阵乘法在屋顶下的哪里？** 按你的 roofline（q28a 的带宽、q29 的算力），m × m 的 float32 矩阵乘法 `np.matmul(a, b, out=c)`
        的 m 至少要多大，它才可能够得着算力屋顶？搬运的字节按它最少必须搬的算（每个数在内存和处理器之间最少走几趟，自己想；
        写之前把缓存行读进来的那一次不算）。
        单位：m（不必取整）。
        """, """
        # 最少的搬运：A、B 各读一次，C 只写一次，共 3m² 个 float32；FLOP 是 2m³。强度 2m³ / (3 · 4 · m²) = m / 6 FLOP/B，
        # 到达 ridge point q29b 时 m = 6 · q29b
        q29c_gemm_edge_at_ridge = 6 * q29b_cpu_ridge
        """),
    Question("q28p_exp_if_memory_bound", """
        **先预测，再测量。** 在运行下一题的测量之前写下你的预测：`np.exp(x, out=y)` 对 float32 数组逐个算 exp，
        结果写进已有的数组 `y`。如果 exp 只受内存带宽限制（算 exp 本身不花时间），能用上 numpy 算 triad 时**实际**用到的带宽
        （不是 q28a 按 STREAM 约定算出的那个数：numpy 的两步各读了哪些数组、写了哪些，每个元素一共搬了多少字节，自己数），
        每个数要多少纳秒？（字节只数程序读的和写的，写之前把缓存行读进来的那一次不算。）
        """, """
        # numpy 的 triad：先读 c、写 a，再读 a、读 b、写 a，每个元素 5 × 8 字节，q28a 只记 3 × 8：实际带宽是 q28a 的 5/3 倍；
        # exp 读 4 字节、写 4 字节
        numpy_triad_bytes = 5 * 8
        q28p_exp_if_memory_bound = 2 * 4 / (q28a_triad_gb_per_s * numpy_triad_bytes / (3 * 8))
        """),
    Question("q28_exp_ns_per_value", """
        现在量：`exp_seconds()` 是 `np.exp(x, out=y)` 在 `EXP_N` 个 float32 数上跑一次的时间。每个数平均要多少纳秒？
        """, """
        q28_exp_ns_per_value = exp_seconds() / EXP_N * 1e9
        """),
    Question("q28g_exp_vs_memory", """
        测量值是你预测的多少倍（q28 ÷ q28p）？（它说明了什么，在最后的文字题里回答。）
        """, """
        q28g_exp_vs_memory = q28_exp_ns_per_value / q28p_exp_if_memory_bound
        """),
    Code("""
        # 把你的 quantize 也放到屋顶下：它每个数读一个 float64、写一个 float64（16 字节），能用到多少带宽？
        # 带宽屋顶按 q28a 画（q29b 的 ridge point、q29c 用的也是它）。q28a 按 STREAM 的约定记字节，比 numpy 的 triad 实际搬的少
        # （q28p）：受内存限制的 np.exp 用到的带宽可以超过 q28a，点会画在屋顶上方、"占 q28a"超过 100%
        roof_gb_per_s = q28a_triad_gb_per_s
        quantize_x = np.random.default_rng(2).standard_normal(1 << 18)
        quantize_ns = median_seconds(lambda: quantize(quantize_x, "nvfp4"), repeats=3) / quantize_x.size * 1e9
        show_measured(["运算", "每个数的时间", "用到的带宽", "占 q28a"],
                      [["np.exp (float32)", f"{q28_exp_ns_per_value:.2f} ns", f"{8 / q28_exp_ns_per_value:.1f} GB/s",
                        f"{8 / q28_exp_ns_per_value / roof_gb_per_s:.0%}"],
                       ["你的 quantize (nvfp4, float64)", f"{quantize_ns:.2f} ns", f"{16 / quantize_ns:.1f} GB/s",
                        f"{16 / quantize_ns / roof_gb_per_s:.0%}"]])

        # 你的 roofline：屋顶是 min(带宽 × 运算强度, 算力)。exp 和 quantize 每个数记一次运算（exp 读写一个 float32：8 字节，
        # quantize 读写一个 float64：16 字节）；GEMM 的强度和边长成正比，按你的 q29c：边长 q29c 时正好是 ridge point
        if shows_measured():  # 评分时不画：量出的数每次不同
            edge = max(GEMM_SIZES)  # 扫描里最大的矩阵：q29 的屋顶通常在它上面量到
            kernels = {"GEMM": (edge / q29c_gemm_edge_at_ridge * q29b_cpu_ridge, q29_matmul_gflops),
                       "np.exp": (1 / 8, 1 / q28_exp_ns_per_value), "quantize": (1 / 16, 1 / quantize_ns)}
            intensity = np.logspace(-2, np.log10(max(4 * edge, 10 * q29_matmul_gflops / roof_gb_per_s)), 200)
            fig, ax = plt.subplots(figsize=(6, 4))
            ax.plot(intensity, np.minimum(roof_gb_per_s * intensity, q29_matmul_gflops), color="black")
            for name, (x, y) in kernels.items():
                ax.scatter(x, y)
                ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(label("运算强度（次运算 / 字节）", "intensity (op / byte)"))
            ax.set_ylabel(label("每秒 10^9 次运算", "10^9 op / s"))
            ax.set_title(label("你的 CPU 的 roofline（单线程）", "Your CPU's roofline (one thread)"))
            plt.show()
        """),
    Question("q30_exp_share_64", """
        回到演示 3：在你的 CPU 上（单线程），d_head = 64 的注意力里，算一个分数（它的 exp 和配套的矩阵乘法）的时间有百分之多少花在
        exp 上？演示 3 的模型是为 GPU 写的（exp 在 SFU 上、矩阵乘法在 Tensor Core 上，两个单元各按峰值算）。
        一次 exp 的时间按你量出的 np.exp 算，矩阵乘法按你的 CPU 的算力屋顶算；在你的 CPU 上两样能不能同时进行——演示 3 的两个模型（q18、q18b）哪一个适用，自己判断。
        """, """
        # CPU 没有单独的 exp 单元：exp 和矩阵乘法在同一组向量单元上轮流算，一个分数的时间是两者之和
        t_exp = q28_exp_ns_per_value
        t_mma = flops_per_exp(64, 64) / q29_matmul_gflops  # FLOP ÷ GFLOP/s = 纳秒
        q30_exp_share_64 = t_exp / (t_exp + t_mma) * 100
        """),
    Question("q31_exp_share_128", """
        d_head = 128 时呢（百分之多少）？
        """, """
        t_mma_128 = flops_per_exp(128, 128) / q29_matmul_gflops
        q31_exp_share_128 = q28_exp_ns_per_value / (q28_exp_ns_per_value + t_mma_128) * 100
        """),
    Question("q28f_fmas_per_exp", """
        按你量出的数，一次 exp 的时间够你的 CPU 在矩阵乘法里做多少次 FMA（一次乘加，算 2 次运算）？
        """, """
        q28f_fmas_per_exp = q28_exp_ns_per_value * q29_matmul_gflops / 2
        """),
    Question("q32_vs_b300", """
        在 d_head = 128 上，你的 CPU 的 t_exp / t_mma 是 B300 上 FP8 注意力的（演示 3 的模型，`exp_ratio`）多少倍？
        """, """
        q32_vs_b300 = (q28_exp_ns_per_value / t_mma_128) / exp_ratio(B300, "fp8", 128, 128)
        """),

    # ------------------------------------------------------------------ free text
    Markdown("""
        ## 用自己的话说

        下面五题由助教人工评分：讲清楚道理比堆砌数字重要，但要引用你在上面算出的数字作证据。每题 150–300 字即可。
        """),
    Question("q20_explain_scaling", _text_question_prompt("q20_explain_scaling", """
        为什么整张量 FP4 会把很多数变成 0？四种方案的误差各怎样随数据量变化，为什么？块缩放怎样解决这个问题——
        NVFP4 赢过 MXFP4 主要靠什么，代价是什么？
        """), f"""
        整张量 FP4 只有一个缩放因子 s = amax / 6，由全体数据里绝对值最大的那个数决定。Student-t 数据有重尾，
        少数离群值让 s 变得很大，普通的数除以 s 之后不超过 0.25（E2M1 最小非零值 0.5 的一半；恰好 0.25 时平局取偶数，
        也是 0），就被舍入成 0——在 2^{DEMO2_N.bit_length() - 1} 个数上有 {_FACTS["fp4_zeros"]:.0%} 的数变成了 0。
        数据越多，样本里的最大值越大，s 越大，误差也越大（2^12 到 2^18 误差从约 {_FACTS["fp4_small"]:.0%}
        涨到约 {_FACTS["fp4_large"]:.0%}），而块缩放的方案几乎不变。

        NVFP4 每 16 个数用一个 FP8（E4M3）缩放因子，离群值只"连累"同一块里的 15 个邻居；再用一个 FP32 的张量级因子
        把块因子挪进 E4M3 能表示的范围，误差降到约 {_FACTS["nvfp4"]:.1%}。2 × 2 消融说明它赢过 MXFP4 主要靠缩放格式：
        换成 E4M3 省下 {_FACTS["scale_gain"]:.1f} 个百分点，块从 32 减到 16 只省下 {_FACTS["block_gain"]:.1f} 个百分点
        （两项相加比两者同时改变的差距大：两个因素相互影响。2 的幂因子向下取整，块内最大值缩放后落在 [4, 8)：
        落在 [4, 6] 的块网格更粗，落在 (6, 8) 的块最大值被截断）。代价是每个数多 0.5 bit 的存储
        （4.5 bit/值，MXFP4 是 4.25），以及硬件要多做一级缩放。
        """),
    Question("q21_explain_codesign", _text_question_prompt("q21_explain_codesign", """
        Blackwell Ultra 为什么要把 SFU 的 exp 吞吐翻倍？一个看似不起眼的单元为什么会成为瓶颈，硬件和软件各能做什么，
        这个简单模型又漏掉了什么？
        """), f"""
        每做一次 exp，注意力只配 2·d_qk + 2·d_v 次矩阵乘法运算（d_head = 128 时 512 FLOP）。从 Hopper 到 Blackwell，
        Tensor Core 的 FP8 算力涨了约 2.5 倍，SFU 的 exp 吞吐却只从 4.5 涨到 5 T/s：B200 上 FP8、d_head = 128 时
        t_exp / t_mma 约 {_FACTS["b200_ratio"]:.0%}，注意力被 exp 卡住，再快的 Tensor Core 也没用（瓶颈模型 max(t_exp, t_mma)）。
        （而且 H100 的 4.5 T 和它 BF16 的 989.4 TFLOPS 不是同一口径：同一口径下，d_head = 128 时 H100 的比值 BF16 是
        {_FACTS["h100_basis"]:.0f}%、FP8 是 {_FACTS["h100_basis_fp8"]:.0f}%——H100 的 FP8 注意力已经碰到 exp 的上限。）

        硬件：Blackwell Ultra 把 exp 吞吐翻倍到 10.7 T/s（FP32 和 FP16 都翻倍），d_head = 128 的比值回到 100% 以下；
        Rubin 的 FP32 ex2 与 Blackwell Ultra 相同，只有 FP16 再翻倍。软件：把约 {_FACTS["software"]:.0f}% 的 exp 挪到 FMA 单元上的多项式（FlashAttention-4），让 exp
        和矩阵乘法流水重叠；反向传播每次 exp 配 2.5 倍的矩阵乘法，比值只有约 {_FACTS["backward"]:.0f}%，本来就不太在乎 exp。
        模型上，更大的 head 维度或 MLA 式形状让每次 exp 配更多矩阵乘法。

        在实测的 MLA 形状上，完全重叠的模型说 B300 比 B200 快 {_FACTS["speedup"]:g} 倍，完全串行的说 {_FACTS["serial"]:.2f} 倍，
        实测端到端只有约 {MEASURED_FP8_FORWARD_GAIN:g} 倍，比两者都低：模型假设 Tensor Core 跑满峰值、softmax 的其他运算不占时间；
        若把差距全归到矩阵乘法效率上，只要峰值的约 {_FACTS["mma"]:.0f}%；但两代内核的重叠程度不同、softmax 的其他运算也各占一份
        （两代重叠程度相同时，不完美的重叠只让加速落在两个模型之间）。
        瓶颈会随另一个单元变快而转移，软硬件要一起设计。
        """),
    Question("q27_explain_format", _text_question_prompt("q27_explain_format", f"""
        每个数最多 {BIT_BUDGET:g} bit，你选哪种格式？用你在上面的实验里量出的"误差—比特数"前沿说明理由：缩放因子的三种取法各输在哪里，
        真实张量和演示 2 的随机数有什么不同，旋转对整张量 FP4 和对 NVFP4 各起什么作用（引用你的 q24、q25）？
        （NVIDIA 的 NVFP4 训练方案，arXiv 2509.25149，只在权重梯度（Wgrad）的那次矩阵乘法上做 16 × 16 的随机 Hadamard
        变换，前向和输入梯度的矩阵乘法不做；这里的旋转是固定的 Hadamard 矩阵，没有随机符号。）
        """), f"""
        在 {BIT_BUDGET:g} bit/值 的预算内，我选块大小 16、E4M3 块因子加张量级 FP32 因子（即 NVFP4），Y 的相对误差约
        {_FACTS["budget_best"]:.1f}%；块大小 32 的 E4M3（{_FACTS["budget_32"]:.1f}%，4.25 bit）也在前沿上，更省但误差更大；
        块大小 8（5 bit）超出预算。E8M0 的两种取法都输给 E4M3：FLOOR 会截断块内最大值，RCEIL 不截断但网格更粗，
        而 E4M3 几乎把每块的最大值正好放到 6。

        真实的激活不是独立同分布的：少数几个通道一直很大，X 比 Student-t 数据更受离群值支配（max/rms 约
        {_FACTS["peak_real"]:.1f}，演示 2 的数据约 {_FACTS["peak_student_t"]:.1f}）。整张量 FP4 在真实张量上 Y 的误差约
        {_FACTS["real_fp4"]:.0f}%——它和演示 2 的元素误差不是同一种量（两个操作数都量化、样本大小也不同），不能直接比大小。
        Hadamard 旋转把离群通道摊到 {ROTATION_SIZE} 个通道上，整张量 FP4 的误差降到约 {_FACTS["rotated_fp4"]:.0f}%。
        NVFP4 每 16 个数已经有自己的缩放因子，旋转对它有两种相反的作用：把离群值摊进别的小块，又让每块的分布更均匀；
        我的数据上误差从 {_FACTS["real_nvfp4"]:.1f}% 变成 {_FACTS["rotated_nvfp4"]:.1f}%。16 阶的旋转只在一个 NVFP4 块里混合；
        NVIDIA 的 NVFP4 训练方案也用 16 × 16 的随机 Hadamard 变换，但只用在权重梯度（Wgrad）那个矩阵乘法的输入上，前向不旋转。
        我量的正是前向的 Y = X·Wᵀ：整个编码器先做 16 阶旋转再 NVFP4，1 − cos 反而从 {_END["nvfp4"]:.0f} 变成 {_END["h16"]:.0f}（单位 10⁻⁴）。
        """),
    Question("q36_explain_end_to_end", _text_question_prompt("q36_explain_end_to_end", """
        一块 Y 的张量误差能预测整个模型的端到端效果吗？你的预测（q34p）和测量（q34b）差多少，表里其他格式（整张量 FP4、
        先旋转再 NVFP4：q35g、q34h）又怎样？这个差距说明了什么——评价一种格式时该看什么（引用 q35）？
        """), f"""
        我的预测用的模型是：每种格式让句向量偏离的误差向量方向随机，长度和它在我那一块上的张量误差成正比。方向随机时误差几乎和句向量垂直，
        cos ≈ 1 − r²/2，所以 1 − cos 按张量误差的**平方**增长；用 FP8 定出比例，NVFP4 的测量（q34b）和预测（q34p）之比因那一块而异（也可能小于 1）。讲义的那一块上是
        {_END["gap"]:.2f} 倍：对小的误差，张量误差是一个不错的代理。

        两头不成立。整张量 FP4 测出的 1 − cos 约 {_END["fp4"]:.2f}，平方模型只预测 {_END["fp4_predicted"]:.2f}；这不怪 r²/2 这个近似，
        按 1 − 1/√(1 + r²) 精确地算只有 {_END["fp4_exact"]:.2f}，更小。是模型的前提不成立：误差不是一个方向随机的小扰动，
        整张量 FP4 把权重里 {_END["fp4_zeros"]:.0%} 的数变成 0（{_END["fp4_all_zero"]} 个 FFN 输出层几乎全部），误差有结构，还在各层里叠加；
        先旋转再 NVFP4，一块上的误差只变了一点，端到端却明显更差（{_END["nvfp4"]:.0f} → {_END["h16"]:.0f}，单位 10⁻⁴）：
        一块 Y 只是第 {extract.LAYER} 层 query 投影的一小块，其他 35 个线性层——FFN 的 1536 维输入、别的层的离群通道——
        和它不一样，误差还要经过残差和 LayerNorm 传下去。所以评价一种格式要看端到端的指标，而且要看任务在乎什么：
        整张量 FP4 的余弦只剩约 {1 - _END["fp4"]:.2f}，句子对的排序却仍有约 {_END["rank"]:.0f}% 一致（只有几对句子，这个数很粗）。
        """),
    Question("q33_explain_measurement", _text_question_prompt("q33_explain_measurement", """
        你是怎么计时的，为什么这样计时？你预测的 exp 时间（q28p）和测量值（q28）差多少，这个差距说明 exp 在你的 CPU 上受什么限制？
        一次 exp 相当于多少次 FMA（q28f），你的 `quantize` 离带宽屋顶有多远？和规格表模型里的 GPU 比，结构上差在哪里？
        """), """
        我把 BLAS 固定为一个线程、预先分配输入输出、数组大过最后一级缓存，先热身一次，再重复几次取中位数：线程数和内存分配都会让
        数字差好几倍，第一次运行要载入代码、触碰内存，中位数不受偶尔的系统干扰影响。

        只按内存带宽预测，exp 每个数只要 q28p 纳秒（q28a 按 24 字节算，numpy 的 triad 实际至少搬 40 字节：按的是 q28a 的 40/24 倍）；测量值是它的
        q28g 倍，这个倍数就是判断的依据。真正受内存带宽限制的 exp，q28g 约 1（向量化的 exp 算得和内存送数据一样快；写入前先把
        缓存行读进来的机器上约 1.25）；明显大于它，受计算限制。哪一种取决于 CPU 的向量宽度和内存，我按自己的 q28g 说。
        一次 exp 的时间够矩阵乘法做约 q28f 次 FMA：CPU 没有单独的 exp 单元，exp 是在同一组向量单元上用一串乘加和查表算出来的，
        算 exp 的时间就是少做的矩阵乘法。我的 `quantize` 每个数用的时间远多于搬运 16 字节所需的时间，只用到 q28a 带宽的一小部分（倍数按自己的表说）：
        它是一串 numpy 的小运算，每一步都把整个数组读写一遍。

        我的比值和 B300 的比（q32）是大是小，取决于机器，我按自己量出的数说，不预设方向。结构上的区别才是要点：GPU 上 exp 在 SFU、
        矩阵乘法在 Tensor Core，是两个独立的单元，可以同时工作；Tensor Core 的算力涨得比 SFU 快，才让 exp 成了瓶颈——
        所以 Blackwell Ultra 可以只把 SFU 翻倍。
        """),
    Markdown("""
        ## 提交之前

        1. 在本文件夹里运行 `pytest`：公开测试应当全部通过。
        2. 运行 `python selfcheck.py`：它检查 `codesign.py` 的公开用例，以及这份 notebook 是否完好、哪些题还没作答。
        3. 保存 notebook（Kernel → Restart & Run All 之后再保存最稳妥），只提交 `codesign.py` 和 `handout.ipynb`。
        """),
)
