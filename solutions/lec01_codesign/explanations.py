"""The explanation shown after each answer in the released solutions (`python -m autograder
release-solutions lec01_codesign`). Student-facing, so in Chinese. No numbers are typed here: the
answered notebook computes them; an explanation says how and why.
"""

EXPLANATIONS = {
    "q01_compute_headline": """
        `trend_row(B300, "nvfp4")["compute"]` = B300 的 NVFP4 稠密算力 ÷ H100 公布的最低精度（FP8）稠密算力。
        这是厂商口径："每一代都用自己最低的精度"来比，所以这个倍数里混着两件事：芯片本身变快了，以及数值格式从 8 位降到了 4 位。
        """,
    "q02_fp8_same_precision": """
        同口径比较：两块芯片都取 FP8 的稠密算力相除（`trend_row` 的 `"fp8"`）。这才是"同样的运算，新芯片快多少"。
        """,
    "q03_format_gain": """
        q01 ÷ q02：厂商口径的倍数里，有这么多倍来自"换了更低精度的格式"，而不是同精度下算得更快。
        读任何代际对比之前，先问一句：两边比的是不是同一种精度？
        """,
    "q04_least_grown": """
        把 `trend_row(B300, "nvfp4")` 里算力、带宽、容量、NVLink 四个倍数放在一起取最小值。
        算力涨得最快、数据搬运涨得最慢——这就是"内存墙"：越来越多的程序会被带宽而不是算力限制。
        """,
    "q05_ridge_growth": """
        屋脊点 = 峰值算力 / HBM 带宽（FLOP/B）。算力涨得比带宽快，屋脊点就右移：一个 kernel 每读 1 字节要做更多运算，
        才能把新芯片的算力用满。屋脊点左边（带宽受限）的程序，换新芯片只能拿到带宽的提升。
        """,
    "q06_fp4_zero_fraction": """
        整张量 FP4 只有一个缩放因子 amax / 6，由最大的离群值决定。普通的数除以它之后小于 E2M1 最小非零值 0.5 的一半，
        舍入到 0。用 `zero_fraction(quantize(x, "fp4_tensor"), x)` 数出来，再乘 100 写成百分数。
        """,
    "q07_nvfp4_error": """
        `relative_error(quantize(x, "nvfp4"), x)` × 100。每 16 个数一个 E4M3 块缩放，离群值只影响同一块里的邻居，
        所以误差比整张量 FP4 小得多，也比每 32 个数一个 2 的幂次缩放的 MXFP4 小。
        """,
    "q08_size_sensitive": """
        比较每种方案在 2^18 和 2^12 个数上的误差之差，取增加最多的那个。只有整张量的缩放因子依赖"全体数据的最大值"：
        数据越多，重尾分布里出现的最大值越大，缩放因子越大，小数越容易被舍入成 0；块缩放方案只看 16 或 32 个数，几乎不受数据量影响。
        """,
    "q09_max_params": """
        容量 ÷ 每个参数的字节数：`B300.mem_cap / BYTES_PER_ELEM["nvfp4"]`，再除以 10^9 换成"十亿参数"。
        注意单位都用十进制（1 GB = 10^9 字节）。
        """,
    "q10_kv_left": """
        容量 − 参数个数 × 每个参数的字节数，再除以 10^9 换成 GB。4.5 bit 的 NVFP4 让同样的 HBM 留出更多空间给 KV cache，
        而长上下文推理恰恰最缺 KV cache 的空间。
        """,
    "q11_b200_bottleneck": """
        `exp_ratio(B200, "fp8", 128, 128)` 大于 1（100%）：做完一个分数的 exp 比做完它配套的矩阵乘法还慢，
        所以限制速度的是 SFU 的 exp，而不是 Tensor Core。
        """,
    "q12_b200_d64_ratio": """
        `exp_ratio(B200, "fp8", 64, 64)` × 100。d_head 减半，每次 exp 配的矩阵乘法（2·d_qk + 2·d_v FLOP）也减半，
        比值翻倍：小 head 的注意力更容易被 exp 卡住。
        """,
    "q13_b300_exp_needed": """
        令 t_exp = t_mma：exp 吞吐 = 峰值算力 / flops_per_exp(64, 64)，即 `B300.peak_flops("fp8") / flops_per_exp(64, 64)`，
        除以 10^12 换成 T exp/s。和 B300 实际的 `B300.exp_per_s` 比一比，就知道翻倍之后还差多少。
        """,
    "q14_mla_effect": """
        比较 `exp_ratio(B300, "fp8", 192, 128)` 和 `exp_ratio(B300, "fp8", 128, 128)`。MLA 式形状的 d_qk 更大，
        每次 exp 配更多矩阵乘法，t_mma 变长而 t_exp 不变，比值变小：模型结构的选择也能缓解 exp 瓶颈。
        """,
    "q15_explain_scaling": """
        评分要点：(1) 整张量只有一个缩放因子，由离群值决定，普通的数被舍入成 0，并引用你算出的"变成 0 的比例"；
        (2) 数据越多，样本最大值越大，误差随数据量增大；(3) NVFP4 用每 16 个数一个 E4M3 块因子 + 一个 FP32 张量因子，
        把离群值的影响限制在块内；(4) 代价：每个数多 0.5 bit 存储、硬件多一级缩放。
        """,
    "q16_explain_codesign": """
        评分要点：(1) 每次 exp 只配 2·d_qk + 2·d_v 次矩阵乘法运算，Tensor Core 变快而 SFU 没跟上，比值超过 100%；
        (2) 引用演示 3 的数字（B200 与 B300 的比值、d_head = 64 的情况）；(3) 硬件：Blackwell Ultra 把 exp 吞吐翻倍；
        (4) 软件：用 FMA 上的多项式近似分担 exp、让 exp 与矩阵乘法重叠、更大的 head 或 MLA 式形状；
        (5) 结论：瓶颈会转移，软硬件要一起设计。
        """,
}
