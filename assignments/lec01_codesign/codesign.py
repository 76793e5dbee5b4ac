"""
CS349E · 第 1 讲 · 练习：用 roofline 读懂 Blackwell Ultra 的设计取舍

本文件里的 7 个函数是本次作业的评分对象（讲义脚本 05_codesign_blackwell_ultra.py 的三个演示都建立在它们之上）：

    演示 2（NVFP4）：round_e4m3、to_e2m1、quantize
    演示 3（softmax 的 exp 瓶颈）：flops_per_exp、exp_ratio
    演示 1（代际趋势）：ridge_point、trend_row

【和讲义的区别】讲义里的 round_e4m3 只对非负数正确（负数不报错，结果不对），to_e2m1 用 argmin 找最近点、平局时偏向较小的值
    （0.75 → 0.5）；硬件的舍入规则是"平局取偶数"（ties to even，0.75 → 1.0）。本作业要求和硬件完全一致。
【约定】数组函数接受任意形状、任意符号的输入（list、标量或 numpy 数组均可），返回 float64 的 numpy 数组；
    芯片参数来自同目录的 hw_specs.py，单位一律是 SI（FLOP/s、B/s、B、W、exp/s）。
"""

import numpy as np

from hw_specs import H100, PRECISIONS

# 四种量化方案 → 块大小（None 表示整个张量共用一个缩放因子）
SCHEMES = {"fp8_tensor": None, "fp4_tensor": None, "mxfp4": 32, "nvfp4": 16}
# 块缩放方案 → 块缩放因子的格式："e8m0" 是 2 的幂（OCP MX），"e4m3" 是 FP8 E4M3 + 张量级 g（NVFP4）
SCALE_FORMATS = {"mxfp4": "e8m0", "nvfp4": "e4m3"}

E4M3_MAX = 448.0  # FP8 E4M3 能表示的最大有限值
E2M1_MAX = 6.0  # FP4 E2M1 能表示的最大值


def round_e4m3(x):
    """
    把数组 x 舍入到 FP8 E4M3 能表示的最近的数（NVFP4 的块缩放因子用这个格式存）。

    【E4M3 是什么】1 位符号 + 4 位指数 + 3 位尾数（OCP 规范里的 E4M3，ml_dtypes 叫 float8_e4m3fn）。
        正规数是 ±(1 + m/8) × 2^e：e ∈ [-6, 7] 时 m ∈ {0..7}；e = 8 时只有 m ∈ {0..6}
        （S.1111.111 这个编码是 NaN，所以没有 1.875 × 2^8 = 480），最大 448 = 1.75 × 2^8；
        比 2^-6 更小的是次正规数 ±k × 2^-9（k = 0..7）。
        换句话说：在每个区间 [2^e, 2^(e+1)) 里有 8 个等间隔的值，间隔 2^(e-3)；e < -6 时按 -6 算（间隔 2^-9）。
    【做法】求出 |x| 所在区间的指数 e（至少 -6），间隔 step = 2^(e-3)，把 |x| / step 舍入到整数再乘回 step，
        最后恢复符号。除以 2 的幂是精确的，所以只要舍入规则对，结果就和硬件逐位一致。
    【舍入规则】就近舍入，恰好在两个可表示值正中间时取"偶数"那个（尾数最低位为 0，round-to-nearest-even）：
        例如 17 → 16（16 和 18 之间，16 = 1.000×2^4 是偶数），19 → 20，0.5 × 2^-9 → 0，1.5 × 2^-9 → 2 × 2^-9。
    【边界】|x| > 448 饱和到 ±448（PTX cvt.rn.satfinite.e4m3x2.f32 的行为）。不带 satfinite 的转换
        （例如 ml_dtypes 的 astype）会把 |x| > 464 变成 NaN（464 是 448 和"下一个值"480 的中点，平局取偶数
        还是 448；再大就舍入到 480 的编码，而那是 NaN）；本作业总是饱和。
        负数按绝对值舍入后加回符号（-17 → -16）；符号总是保留，负数舍入成 0 时得到 −0.0（硬件也是这样），
        输入 0 返回 0。输入含 NaN 或 ±inf 时抛出 ValueError。
    【返回】与 x 同形状的 float64 数组。
    【Python 小知识】np.frexp(a) 把 a 拆成 m × 2^k（m ∈ [0.5, 1)），所以 floor(log2 a) = k − 1，而且是精确的；
        np.rint 的平局规则就是"取偶数"；np.ldexp(v, k) 精确地计算 v × 2^k。
    """
    raise NotImplementedError("round_e4m3 还没有实现：删掉这一行，按上面 docstring 的要求写出你的代码")


def to_e2m1(y):
    """
    把数组 y（已经除过缩放因子）舍入到最近的 FP4 E2M1 值，保留符号。

    【E2M1 是什么】1 位符号 + 2 位指数 + 1 位尾数，非负的可表示值只有 8 个：0, 0.5, 1, 1.5, 2, 3, 4, 6。
        它们的间隔是分段的：[0, 2) 里间隔 0.5，[2, 4) 里间隔 1，[4, 6] 里间隔 2。
    【做法】按 |y| 所在的区间取间隔 step，把 |y| / step 舍入到整数再乘回 step，超过 6 的截到 6，最后恢复符号。
    【舍入规则】就近舍入，平局取偶数（尾数最低位为 0 的那个）——这正是讲义的 argmin 写错的地方：
        0.25 → 0，0.75 → 1，1.25 → 1，1.75 → 2，2.5 → 2，3.5 → 4，5 → 4（负数对称：-0.75 → -1）。
    【边界】|y| > 6 饱和到 ±6（PTX cvt.rn.satfinite.e2m1x2.f32）；符号总是保留，负数舍入成 0 时得到 −0.0
        （-0.25 → -0.0，硬件也是这样；np.copysign 能做到）；输入含 NaN 或 ±inf 时抛出 ValueError。
    【返回】与 y 同形状的 float64 数组。
    """
    raise NotImplementedError("to_e2m1 还没有实现：删掉这一行，按上面 docstring 的要求写出你的代码")


def quantize(x, scheme, block_size=None, scale_format=None):
    """
    用四种方案之一把一维数组 x 量化再反量化，返回近似值（float64，和 x 同形状）。

    【方案】设 amax = max|x|：
        "fp8_tensor"：整个张量一个缩放因子 s = amax / 448，结果 = round_e4m3(x / s) × s（对照组）
        "fp4_tensor"：整个张量一个缩放因子 s = amax / 6，结果 = to_e2m1(x / s) × s（"标准 FP4"）
        "mxfp4"     ：每 32 个相邻元素一块（OCP MX v1.0）。块缩放因子是 2 的幂（E8M0）：
                      s = 2^(floor(log2(块内 max|x|)) − 2)，结果 = to_e2m1(x / s) × s
                      （指数向下取整；除以 s 后超过 6 的数按规范饱和到 ±6，to_e2m1 已经这样做；
                      指数按 E8M0 的范围限制在 [-127, 127]）
        "nvfp4"     ：每 16 个相邻元素一块，两级缩放。先算张量级缩放 g = amax / (6 × 448)
                      （硬件用 FP32 存 g；本作业全程用 float64 计算，不要转成 float32），
                      块缩放因子 s_b = round_e4m3(块内 max|x| / 6 / g)（用 FP8 E4M3 存），
                      结果 = to_e2m1(x / (s_b × g)) × (s_b × g)
    【推广：块大小和缩放格式】两个块缩放方案的差别有两处——块大小（32 / 16）和块缩放因子的格式（2 的幂 / E4M3）。
        为了分别看两者的作用，"mxfp4" 和 "nvfp4" 还接受两个可选参数（默认 None 表示用方案自己的值）：
            block_size  ：每块几个元素（正整数），mxfp4 默认 32，nvfp4 默认 16；
            scale_format："e8m0"（块因子是 2 的幂，即上面 mxfp4 的算法）或 "e4m3"（两级缩放，即上面 nvfp4 的算法，
                          g 照样按整个张量的 amax 算），mxfp4 默认 "e8m0"，nvfp4 默认 "e4m3"。
        例如 quantize(x, "mxfp4", block_size=16) 是"每 16 个数一个 2 的幂缩放"，
        quantize(x, "mxfp4", scale_format="e4m3") 和 quantize(x, "nvfp4", block_size=32) 相同。
        逐张量方案（fp8_tensor、fp4_tensor）不接受这两个参数：给了（不是 None）就抛出 ValueError。
    【缩放的写法】先算出缩放因子 s，再用 x / s（或 x × (1/s)）缩放。缩放因子恰好是 2 的幂时这一步是精确的，
        平局就是真正的平局，评分时逐元素严格比较（平局取偶数）；其他情况下不同的浮点写法可能差最后一两位，评分已考虑。
    【边界】
        - 全零的张量返回全零；全零的块（mxfp4）或 s_b 被舍入成 0 的块（nvfp4）整块输出 0，不能产生 NaN 或警告。
        - 空数组原样返回（空的 float64 数组）。
        - 以下情况抛出 ValueError，消息要说清楚哪里不对：未知的 scheme；x 不是一维；
          mxfp4 / nvfp4 时长度不是块大小（32 / 16，或给定的 block_size）的整数倍；x 含 NaN 或 ±inf；
          block_size 不是正整数；scale_format 不是 "e8m0" 或 "e4m3"；逐张量方案给了 block_size 或 scale_format。
    【Python 小知识】x.reshape(-1, 16) 把一维数组切成每行 16 个元素的块；
        np.abs(blocks).max(axis=1, keepdims=True) 得到每块的最大值，形状 (块数, 1)，可以直接和 blocks 广播。
        floor(log2(·)) 要用 np.frexp 求（和 round_e4m3 一样，精确）：np.log2 在 2 的幂下面 1 ulp 处会向上舍入，
        例如 np.log2(8 × (1 − 2^-53)) 得到 3.0，块指数就错了（quantize([8 × (1 − 2^-53), 1, 0, …], "mxfp4")[0]
        应是 6.0，用 np.log2 会得到 8.0）。
    """
    raise NotImplementedError("quantize 还没有实现：删掉这一行，按上面 docstring 的要求写出你的代码")


def _block_layout(scheme, block_size, scale_format):
    """(block size, scale format) of a scheme with its optional overrides; (None, None) per tensor."""
    if SCHEMES[scheme] is None:
        if block_size is not None or scale_format is not None:
            raise ValueError(f"quantize: {scheme} is per tensor; block_size and scale_format apply to "
                             f"mxfp4 / nvfp4 only, got block_size={block_size!r}, scale_format={scale_format!r}")
        return None, None
    if block_size is None:
        block_size = SCHEMES[scheme]
    elif isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size <= 0:
        raise ValueError(f"quantize: block_size must be a positive integer, got {block_size!r}")
    if scale_format is None:
        scale_format = SCALE_FORMATS[scheme]
    elif scale_format not in ("e8m0", "e4m3"):
        raise ValueError(f"quantize: scale_format must be 'e8m0' or 'e4m3', got {scale_format!r}")
    return int(block_size), scale_format


def flops_per_exp(d_qk, d_v):
    """
    注意力里每算一个分数（也就是每做一次 exp），Tensor Core 要做多少 FLOP。

    【做法】QKᵀ：每个分数是一次长度 d_qk 的点积，2·d_qk 次运算（乘和加各算一次）；
        PV：每个概率要乘到长度 d_v 的 V 行上再累加，2·d_v 次运算。合计 2·d_qk + 2·d_v。
        普通注意力 d_qk = d_v = d_head，就是 4·d_head；MLA 式（d_qk = 192, d_v = 128）是 640。
    【边界】d_qk、d_v 必须是正整数（Python int 或 numpy 整数），否则抛出 ValueError。
    【返回】int，单位 FLOP / exp。
    """
    raise NotImplementedError("flops_per_exp 还没有实现：删掉这一行，按上面 docstring 的要求写出你的代码")


def exp_ratio(chip, precision, d_qk, d_v):
    """
    softmax 的 exp 需要的时间和注意力矩阵乘法时间之比 t_exp / t_mma（小数：1.0 表示两者一样长）。

    【做法】每个分数：t_mma = flops_per_exp(d_qk, d_v) / chip.peak_flops(precision)（秒），
        t_exp = 1 / chip.exp_per_s（秒）。比值 = t_exp / t_mma。
        等价地：让 Tensor Core 满速需要的 exp 吞吐 = peak / flops_per_exp，再除以 SFU 的实际吞吐。
    【边界】precision 是 hw_specs 里的精度名（"bf16"、"fp8"、"nvfp4" 等）；芯片没有公布的数字（例如 Rubin 的 FP8
        算力或 exp 吞吐）会由 hw_specs 抛出 MissingFigureError，不要吞掉它；d_qk、d_v 的检查同 flops_per_exp。
    【返回】float，无量纲。例：H100、"bf16"、d_qk = d_v = 128 时约 0.43。
    """
    raise NotImplementedError("exp_ratio 还没有实现：删掉这一行，按上面 docstring 的要求写出你的代码")


def ridge_point(chip, precision):
    """
    芯片在某个精度下的屋脊点（ridge point）：算术强度超过它，程序才可能受算力而不是带宽限制。

    【做法】ridge = chip.peak_flops(precision) / chip.mem_bw，单位 FLOP/B（每从 HBM 读 1 字节要做多少次运算）。
    【边界】芯片没有该精度的数字时，hw_specs 抛出的 MissingFigureError 原样传出。
    【返回】float，单位 FLOP/B。例：H100 的 BF16 约 295。
    """
    raise NotImplementedError("ridge_point 还没有实现：删掉这一行，按上面 docstring 的要求写出你的代码")


def trend_row(chip, low_precision, base=H100):
    """
    演示 1 的一行：chip 的关键规格相对 base（默认 H100）的倍数。

    【返回】dict，恰好这 7 个键（值为 float，或 None）：
        "compute"  ：chip 在 low_precision 下的稠密算力 ÷ base 在"它自己公布的最低精度"下的稠密算力
                     （厂商的宣传口径；最低精度按 hw_specs.PRECISIONS 的顺序找 base 第一个有数字的精度，
                     H100 是 FP8）
        "fp8"      ：chip 的 FP8 算力 ÷ base 的 FP8 算力（同口径对比）；chip 没有 FP8 数字时为 None
        "bandwidth"：HBM 带宽之比（mem_bw）
        "capacity" ：HBM 容量之比（mem_cap）
        "nvlink"   ：每 GPU 的 NVLink 带宽之比（link_bw）
        "power"    ：功耗之比（power_w）；chip 或 base 没有功耗数字时为 None
        "ridge"    ：chip 在 low_precision 下的屋脊点本身（不是倍数），单位 FLOP/B，即 ridge_point(chip, low_precision)
    【例】trend_row(B200, "nvfp4") 的 compute 约 5.1、capacity 约 2.4、ridge 约 1250。
    【Python 小知识】chip.has("fp8")、chip.has("power_w") 告诉你某个数字是否公布过。
    """
    raise NotImplementedError("trend_row 还没有实现：删掉这一行，按上面 docstring 的要求写出你的代码")
