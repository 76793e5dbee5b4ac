"""What the released solutions say after each answer, and the rubric of the text questions — one
source for both (`python -m autograder release-solutions lec01_codesign` reads EXPLANATIONS; the
handout prints each text question's criteria with their points from RUBRICS, so the TA sees them
in formgrader next to the answer). Student-facing, so in Chinese. Numbers are formatted from the
answer key and hw_specs, never typed in; an explanation says how and why.

Every student has their own parameters (variants.py); the released solutions show the lecture's
(LECTURE). So an explanation states its method in terms of the parameters, quotes numbers as the
lecture's, and claims nothing that a student's variant could contradict (tests/solutions/
test_lecture_variants.py checks the claims that depend on the parameters in a sample of variants).
"""

from __future__ import annotations

from dataclasses import dataclass

import hw_specs
from autograder.lec01_codesign.measurement import NUMPY_TRIAD_BYTES_PER_ELEMENT
from cpu_timing import TRIAD_BYTES_PER_ELEMENT
from hw_specs import B200, B300, BYTES_PER_ELEM, EX2_PER_SM_PER_CLK, FP32_FMA_PER_SM_PER_CLK, H100
import math

import numpy as np

from solutions.lec01_codesign import variants
from solutions.lec01_codesign.answers import (
    _real_tensors,
    ablation_errors,
    budget_choice,
    budget_frontier,
    boundary_batch,
    decode_context_limit,
    emulation_times,
    real_tensor_errors,
    answer_key,
    attention_time_per_score,
    h100_exp_on_tensor_basis,
    kv_bytes_per_token,
    END_UNIT,
    end_to_end,
    service_batch,
    service_bytes,
    service_limits,
    service_step_seconds,
    speculative_throughputs,
)
from solutions.lec01_codesign.codesign import E2M1_MAX, SCHEMES, exp_ratio, flops_per_exp, ridge_point, trend_row
from solutions.lec01_codesign.handout_data import (
    BACKWARD_FLOPS_PER_EXP,
    DEMO2_N,
    HEAD_DIM,
    KV_BATCH,
    KV_HEAD_DIM,
    KV_HEADS,
    KV_LAYERS,
    MEASURED_D_QK,
    MEASURED_D_V,
    MEASURED_DOCUMENT,
    MEASURED_FP8_FORWARD_GAIN,
    MEASURED_MODEL,
    MODEL_PARAMS,
    BIT_BUDGET,
    BUDGET_OPTIONS,
    ROTATION_SIZE,
    demo_weights,
    format_bits,
    quantize_matrix,
    zero_fraction,
)

_KEY = answer_key()
# q09k and q09l on the lecture's parameters (the spec sheet's serving B300)
_MOE_NAME, _, _MOE_ACTIVE_B, _MOE_E, _MOE_K = variants.LECTURE["moe_model"]
_MOE_B = variants.LECTURE["moe_batch"]
_MOE_S, _MOE_X = variants.moe_parts(variants.LECTURE)
_MOE_READ = variants.moe_expected_experts(variants.LECTURE)
_MOE_GB = (_MOE_S + _MOE_READ * _MOE_X) * BYTES_PER_ELEM["nvfp4"] / 1e9
_MOE_DENSE_GB = _MOE_ACTIVE_B * BYTES_PER_ELEM["nvfp4"]
_MOE_TIMES = _MOE_GB / _MOE_DENSE_GB
_MOE_DENSE_RATE = B300.mem_bw / (_MOE_DENSE_GB * 1e9)
_MOE_K_ONLY_TIMES = (_MOE_S + _MOE_READ * _MOE_X) / (_MOE_S + _MOE_K * _MOE_X)  # "only the k experts" over the key
_TP_WIDTH = variants.LECTURE["query_heads"] * variants.LECTURE["kv_head_dim"]
_TP_SHARD_MS = variants.LECTURE["model_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"] / variants.LECTURE["tp_gpus"] / B300.mem_bw * 1e3
_TP_PER_SEQ_US = _TP_SHARD_MS * 1e3 / _KEY["q09l_tp_allreduce_batch"]
# q09: the context each of q09's sequences may hold before weights + KV fill the usable HBM (the lecture's)
_RIDGE_CONTEXT = ((variants.USABLE_HBM * B300.mem_cap - MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"])
                  / (_KEY["q09_decode_batch"] * kv_bytes_per_token()))


# q09e: the lecture's service (q09's batch with the service's context) against the usable HBM
_W_GB = MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"] / 1e9
_C_GB = variants.USABLE_HBM * B300.mem_cap / 1e9
_Q09E_GB = service_bytes() / 1e9
_Q09E_KV_GB = _Q09E_GB - _W_GB
_Q09E_FITS = service_batch() == _KEY["q09_decode_batch"]
_Q09E_VERDICT = "装得下，batch 就是 q09 的" if _Q09E_FITS else f"装不下，batch 只能取 {service_batch():.1f}"


# q09h: the lecture's three batch limits, the one that binds, and the step there
_Q09H_LIMITS = service_limits()
_Q09H_BATCH = min(_Q09H_LIMITS.values())
_Q09H_BINDS = {"hbm": "HBM 的容量", "rate_compute": "承诺的速度（算力屋顶上）",
               "rate_memory": "承诺的速度（带宽屋顶上）"}[min(_Q09H_LIMITS, key=_Q09H_LIMITS.get)]
_Q09H_STEP_MS = 1e3 * service_step_seconds(_Q09H_BATCH)
_COMPUTE_CEILING = B300.peak_flops("nvfp4") / (2 * MODEL_PARAMS)  # tokens/s: the NVFP4 compute roof, 2P FLOP a token
# q09i: the lecture's speculative decoding: the best draft length, and the batch at which the check step turns compute-bound
_SPEC = speculative_throughputs()
_SPEC_BEST = max(_SPEC, key=_SPEC.get)
_SPEC_P = variants.LECTURE
_SPEC_KV_GB = _SPEC_P["spec_batch"] * _SPEC_P["service_context"] * kv_bytes_per_token() / 1e9
_SPEC_STEP_MS = 1e3 * (MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"] / 1e9 + _SPEC_KV_GB) * 1e9 / B300.mem_bw
_SPEC_DRAFT_MS = 1e3 * _SPEC_P["draft_params_b"] * 1e9 * BYTES_PER_ELEM["nvfp4"] / B300.mem_bw
# the first draft length at which the lecture's check step (γ + 1 tokens a sequence) leaves the memory roof
_SPEC_ROOF = next(g for g in range(9)
                  if 2 * MODEL_PARAMS * _SPEC_P["spec_batch"] * (g + 1) / B300.peak_flops("nvfp4") > _SPEC_STEP_MS / 1e3)
# q09f: the lecture's boundary batch where the HBM alone would end W4A4's reach
_Q09F_HBM_BATCH = ridge_point(B300, "nvfp4") * variants.USABLE_HBM * B300.mem_cap / (2 * MODEL_PARAMS)
# q17b: the lecture's design and the group at which exp takes as long as the KV read (FP8 KV, its head dimension)
_Q17B_GROUP, _Q17B_DIM, _Q17B_FORMAT = variants.LECTURE["decode_attention"]
_Q17B_EVEN_GROUP = 2 * _Q17B_DIM * BYTES_PER_ELEM["fp8"] * B300.exp_per_s / B300.mem_bw
_Q17B_MLA = 128 * B300.mem_bw / (2 * 64 * BYTES_PER_ELEM["nvfp4"] * B300.exp_per_s)  # 128 heads, d = 64, NVFP4 KV


# q17c: the lecture's prefill at the service's context, and the context at which attention takes half of it
_Q17C_P = variants.LECTURE
_Q17C_WIDTH = _Q17C_P["query_heads"] * _Q17C_P["kv_head_dim"]
_Q17C_HALF = 2 * MODEL_PARAMS / (_Q17C_P["kv_layers"] * _Q17C_WIDTH * 2)  # 2P·L = layers·H_q·L²/2·4d at L ≈ this


def _sci(value: float) -> str:
    """5e15, 3.865e12: compact and exact enough for a formula in a sentence."""
    mantissa, exponent = f"{value:.4e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


_D = HEAD_DIM
_EMULATION = emulation_times()  # q16b at the lecture's parameters
_PIPES = FP32_FMA_PER_SM_PER_CLK["Blackwell"] / EX2_PER_SM_PER_CLK["Blackwell"]
_FPE = flops_per_exp(_D, _D)
_NV_BITS, _MX_BITS = 8 * BYTES_PER_ELEM["nvfp4"], 8 * BYTES_PER_ELEM["mxfp4"]
_B200_RATIO = exp_ratio(B200, "fp8", _D, _D)
_BACKWARD_FACTOR = (BACKWARD_FLOPS_PER_EXP["d_qk"] + BACKWARD_FLOPS_PER_EXP["d_v"]) * _D / _FPE
_FP8_GAIN = B200.peak_flops("fp8") / H100.peak_flops("fp8")
_SXM5 = f"{hw_specs.H100_SXM5_SMS} × {hw_specs.EX2_PER_SM_PER_CLK['Hopper']} × {hw_specs.H100_SXM5_BOOST_HZ / 1e9:g} GHz"
# q25w at the lecture's parameters: the FMA pipe on the exp table's basis, and the same 16 × 16 rotation as a BF16
# matmul on the tensor cores (32 FLOP a value) over the FMA pipe's 4 results a value
_FMA_PIPE = B200.exp_per_s / EX2_PER_SM_PER_CLK["Blackwell"] * FP32_FMA_PER_SM_PER_CLK["Blackwell"]
_ROT_BUDGET, _ROT_SHARE = variants.LECTURE["online_rotation"]
_ROT_AS_MATMUL = (32 / B200.peak_flops("bf16")) / (4 / _FMA_PIPE)
_LECTURE_BW_GAIN = B300.mem_bw / H100.mem_bw  # q06c: the spec sheet's bandwidths (the lecture's shares are all 1)
_OVERSTATEMENT = BYTES_PER_ELEM["fp8"] / BYTES_PER_ELEM["nvfp4"]  # q05 ÷ q06b: the mixed ratio's exaggeration
_ABLATION = ablation_errors(demo_weights(DEMO2_N))
_GAP = 100 * (_ABLATION[32, "e8m0"] - _ABLATION[16, "e4m3"])  # MXFP4 → NVFP4, both factors at once
_BLOCK_WITH_E8M0 = 100 * (_ABLATION[32, "e8m0"] - _ABLATION[16, "e8m0"])
_MLA = (MEASURED_D_QK, MEASURED_D_V)
_MLA_FPE = flops_per_exp(*_MLA)
_T = {(chip.name, overlap): attention_time_per_score(chip, "fp8", *_MLA, overlap=overlap)
      for chip in (B200, B300) for overlap in (True, False)}
_REAL = real_tensor_errors()
_FRONTIER = "、".join(f"{BUDGET_OPTIONS[k][1]}（{format_bits(BUDGET_OPTIONS[k][0][0]):g} bit，{100 * _REAL[k]:.1f}%）"
                      for k in budget_frontier())
# q17: the backward pass's matmul per exp over the forward's, over every head shape a variant draws (d_v <= d_qk)
_BACKWARD_FACTORS = [(BACKWARD_FLOPS_PER_EXP["d_qk"] * q + BACKWARD_FLOPS_PER_EXP["d_v"] * v) / (2 * q + 2 * v)
                     for q in variants.HEAD_DIMS for v in variants.HEAD_DIMS if v <= q]
_BACKWARD_RANGE = f"{math.floor(min(_BACKWARD_FACTORS) * 10) / 10:g}–{math.ceil(max(_BACKWARD_FACTORS) * 10) / 10:g}"


# q28p, q28g: the triad is counted as STREAM's 3 × 8 B per element; numpy's two passes (a = 3·c; a += b) move
# 5 × 8 B, the bandwidth q28p predicts at. With write-allocate both the triad (48 B) and exp (12 B for 8 counted)
# move more: 40/48 × 12/8 = 1.25.
_TRIAD_COUNTED, _TRIAD_MOVED = TRIAD_BYTES_PER_ELEMENT, NUMPY_TRIAD_BYTES_PER_ELEMENT


def _peak_over_rms(a) -> float:
    a = np.asarray(a, dtype=np.float64)
    return float(np.abs(a).max() / np.sqrt(np.mean(np.square(a))))


# q22/q27: the same quantity on both data sets (the lecture's): how much a single maximum dominates
_X_REAL = _real_tensors()[0]
_X_STUDENT_T = demo_weights(DEMO2_N)
_PEAK_REAL, _PEAK_STUDENT_T = _peak_over_rms(_X_REAL), _peak_over_rms(_X_STUDENT_T)
_ZEROS_REAL = zero_fraction(quantize_matrix(_X_REAL, "fp4_tensor"), _X_REAL)
_ZEROS_STUDENT_T = zero_fraction(quantize_matrix(_X_STUDENT_T, "fp4_tensor"), _X_STUDENT_T)
# q20: the one ablation pair on which the block size may beat the scale format (its larger block is the largest);
# within ABLATION_TIE_PP of each other q11 and q12 are a tie, and either reading earns the rubric's point
_LARGEST_PAIR = max(variants.ABLATION_PAIRS)
ABLATION_TIE_PP = 0.1
# q20: E4M3's range as a block scale: 448 down to the smallest subnormal 2^-9; a block whose maximum lies
# below amax · 2^-10 / 448 gets the scale 0 (half the smallest subnormal rounds to 0) and becomes zeros
_E4M3_BINADES = math.log2(448 / 2.0**-9)
# q21: how far the SFU grew against the tensor cores, as the table states them (H100's 4.5 T is on another basis: q15)
_SFU_GAIN = B200.exp_per_s / H100.exp_per_s
_SPEC_Q04 = (B300.peak_flops("fp8") / B300.mem_bw) / (H100.peak_flops("fp8") / H100.mem_bw)  # q04 on the spec sheet
_B300_RATIO = exp_ratio(B300, "fp8", _D, _D)
# q18: on q15's basis H100 is exp-bound in FP8 below this d_qk + d_v (on the table's, below a smaller sum)
_H100_TENSOR_BASIS_SUM = H100.peak_flops("fp8") / h100_exp_on_tensor_basis() / 2
_RUBIN_FP16_GAIN = hw_specs.EX2_PER_SM_PER_CLK["Rubin FP16"] / hw_specs.EX2_PER_SM_PER_CLK["Blackwell Ultra FP16"]
# q27: where a block's maximum lands after scaling. E8M0 FLOOR divides by 2^(floor(log2 amax) − emax) with
# emax = floor(log2 6) = 2: the maximum lands in [4, 8), clipping above 6; RCEIL's 2^ceil(log2(amax / 6)) puts it in (3, 6]
_E2M1_MAX = E2M1_MAX   # the reference's grid, which the tests hold to ml_dtypes' float4_e2m1fn
_FLOOR_LOW = 2.0 ** math.floor(math.log2(_E2M1_MAX))
_NV_BLOCK = SCHEMES["nvfp4"]  # NVFP4's block: a Hadamard of this order mixes within one block only
# q25/q27: NVIDIA's NVFP4 training recipe (arXiv 2509.25149) applies its 16 × 16 random Hadamard transform (random
# signs) only to the inputs of the weight-gradient (Wgrad) GEMMs, not to Fprop or Dgrad; the kit's rotation is a fixed
# Sylvester Hadamard, and Y = X·Wᵀ is a forward GEMM. The whole encoder's forward (the same for everyone) with and
# without the 16-wide rotation says what it does there.
_NV_END, _H16_END = (END_UNIT * end_to_end()[name]["deficit"] for name in ("nvfp4", "nvfp4 + H16"))
_RECIPE = (f"NVIDIA 的 NVFP4 训练方案（arXiv 2509.25149）也用 {_NV_BLOCK} × {_NV_BLOCK} 的随机 Hadamard 变换"
           "（Hadamard 矩阵再乘一个随机符号向量），但只用在计算权重梯度（Wgrad）的矩阵乘法的两个输入上，"
           "前向（Fprop）和输入梯度（Dgrad）的矩阵乘法不旋转；本课程的旋转是固定的 Sylvester Hadamard 矩阵，没有随机符号。"
           "这里量的 Y = X·Wᵀ 是前向的矩阵乘法，正是那个方案不旋转的地方：讲义的编码器整个前向里，先做 "
           f"{_NV_BLOCK} 阶旋转再 NVFP4 的 1 − cos 是 {_H16_END:.0f} × 10⁻⁴，"
           f"比不旋转的 {_NV_END:.0f} {'大' if _H16_END > _NV_END else '小'}（q34h）")
# q03: the one generation step a variant may draw on which HBM bandwidth outgrows compute
_RUBIN_STEP = trend_row(hw_specs.RUBIN, "nvfp4", base=B300)
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
        Criterion(1, "哪种方案的误差随数据量变化最明显，为什么（引用数据量扫描的结果）",
                  "整张量 FP4：数据越多，重尾分布里出现的最大值越大，缩放因子越大，更多的数被舍入成 0；块缩放只看块内的最大值。"),
        Criterion(1, "NVFP4 赢过 MXFP4 主要靠什么：块大小还是缩放因子的格式（引用你的 2 × 2 消融的数字：你的两个块大小上同样的两个因素）",
                  f"按自己的消融比较 q11 和 q12，哪个大就说哪个（两种结论都可以是对的，要和自己的数一致）。讲义的参数（32 和 16）上"
                  f"是缩放格式：块大小从 32 减到 16 只省下约 "
                  f"{_KEY['q12_block_size_gain']:.1f} 个百分点，缩放格式从 E8M0 换成 E4M3 省下约 "
                  f"{_KEY['q11_scale_format_gain']:.1f} 个百分点（两项之和大于两者同时改变的 {_GAP:.2f} 个百分点：两个因素"
                  f"相互影响，E8M0 因子下块大小只值 {_BLOCK_WITH_E8M0:.2f} 个百分点）；块大到 {_LARGEST_PAIR[0]} 时（{_LARGEST_PAIR[0]} 和 "
                  f"{_LARGEST_PAIR[1]}），块大小可能更重要，其他的块大小组合很少如此。q11 和 q12 相差不到 {ABLATION_TIE_PP:g} 个百分点时两者差不多："
                  "说哪个更重要、或说两者差不多，都给这 1 分。"
                  f"缩放格式为什么重要：2 的幂因子向下取整，块内最大值缩放后"
                  f"落在 [4, 8)：落在 (6, 8) 的块（讲义的参数约 {_KEY['q12b_e8m0_clipped_blocks']:.0f}%）网格更细、代价是截断，"
                  "落在 [4, 6] 的块网格更粗。"),
        Criterion(1, "代价是什么",
                  f"每个数多 {_NV_BITS - 4:g} bit（{_NV_BITS:g} bit/值，MXFP4 是 {_MX_BITS:g}），硬件要多做一级缩放（FP32 张量级因子）；"
                  f"E4M3 块因子的范围窄（约 {_E4M3_BINADES:.1f} 个二进制数量级，E8M0 有 254 个）：块最大值小于约 amax·2⁻¹⁰/448 的块，"
                  "因子舍入成 0，整块变成 0。"),
    ),
    "q21_explain_codesign": (
        Criterion(1, "一个看似不起眼的单元为什么会成为瓶颈（用演示 3 的数字）",
                  f"每次 exp 只配 2·d_qk + 2·d_v FLOP 的矩阵乘法；H100 → B200，Tensor Core 的 FP8 算力涨了约 {_FP8_GAIN:.1f} 倍，"
                  f"表里 SFU 的 exp 吞吐只涨了 {_SFU_GAIN:.2f} 倍，"
                  f"B200 上 FP8、d_head = {_D} 的 t_exp / t_mma 约 {_B200_RATIO:.0%}：在 max(t_exp, t_mma) 这个瓶颈模型里，"
                  "慢的那个单元决定速度。"),
        Criterion(1, "硬件做了什么",
                  f"Blackwell Ultra 把 SFU 的 exp 吞吐提到 B200 的 {B300.exp_per_s / B200.exp_per_s:.2f} 倍（{B300.exp_per_s / 1e12:g} T/s；"
                  f"每个 SM 每个时钟 FP32 和 FP16 的 ex2 都从 {hw_specs.EX2_PER_SM_PER_CLK['Blackwell']} 次变成 "
                  f"{hw_specs.EX2_PER_SM_PER_CLK['Blackwell Ultra FP32']} 次），按表里的数比值降到约 {_B300_RATIO:.0%}"
                  "（B300 的 exp 吞吐的口径没有公布：按它的张量峰值推算的时钟，比值更高，q15 的道理）；Rubin 的 FP32 ex2 与 "
                  f"Blackwell Ultra 相同，只有 FP16 再涨到 {_RUBIN_FP16_GAIN:g} 倍（{hw_specs.EX2_PER_SM_PER_CLK['Rubin FP16']} 次）。"),
        Criterion(1, "软件能做什么（引用 q16、q17）",
                  f"把一部分 exp（q16，讲义的参数约 {_KEY['q16_software_exp_share']:.0f}%）挪到 FMA 单元上的多项式"
                  f"（FlashAttention-4 的做法），让 exp 和矩阵乘法流水重叠；反向传播每次 exp 配的矩阵乘法是前向的 "
                  f"{_BACKWARD_RANGE} 倍（讲义的参数：{_BACKWARD_FACTOR:g} 倍，q17 约 {_KEY['q17_backward_ratio']:.0f}%），"
                  "本来就不太受 exp 限制；模型上用更大的 head 或 MLA 式形状。"),
        Criterion(1, "模型和实测差在哪里（引用 q18–q19）",
                  f"在实测的形状（本课程推断的 {MEASURED_MODEL} 的 MLA，d_qk = {MEASURED_D_QK}、d_v = {MEASURED_D_V}）上，完全重叠的模型说 "
                  f"B300 比 B200 快 {_KEY['q18_model_speedup']:g} 倍，完全串行的模型说 {_KEY['q18b_serial_speedup']:.2f} 倍，"
                  f"实测端到端约 {MEASURED_FP8_FORWARD_GAIN:g} 倍，比两者都低：模型假设 Tensor Core 达到峰值、softmax 的其他运算"
                  "（求最大值、减法、缩放、求和）不占时间；矩阵乘法达不到峰值、其他运算、两代内核重叠程度不同都在其中"
                  "（两代重叠程度相同时，不完美的重叠只会让加速落在两个模型之间），"
                  f"若把差距全归到矩阵乘法效率上，效率就是 q19（讲义的参数，SFU 达到 exp 峰值时约 {_KEY['q19_mma_efficiency']:.0f}%）——那只是一种归因。"),
    ),
    "q33_explain_measurement": (
        Criterion(1, "计时的方法和理由",
                  "BLAS 固定为一个线程、预先分配、数组大过最后一级缓存、热身一次、重复多次取中位数，并说出各自防的是什么"
                  "（线程数和分配会让数字差好几倍；第一次运行要载入代码、触碰内存；中位数不受偶尔的干扰影响）。"),
        Criterion(1, "预测和测量的差距、FMA 的个数、quantize 的位置，以及和 GPU 的结构区别（引用 q28p、q28g、q28f、q32）",
                  "按自己量出的 q28g 说 exp 受计算还是受内存限制（哪个方向都可以是对的，要和自己的数一致）；一次 exp 约等于 q28f 次 FMA，"
                  "因为 CPU 没有单独的 exp 单元，exp 和矩阵乘法在同一组向量单元上轮流算；quantize 离带宽屋顶多远、为什么"
                  "（很多遍 numpy 小运算，每遍读写整个数组）；GPU 上 exp 在 SFU、矩阵乘法在 Tensor Core，两个单元各自的吞吐决定比值，"
                  f"硬件可以只加速其中一个（Blackwell Ultra 把 SFU 翻倍）。q32 比 1 大还是小（B300 FP8 是 {exp_ratio(B300, 'fp8', _D, _D):.0%}）"
                  "取决于机器，不预设方向。"),
    ),
    "q27_explain_format": (
        Criterion(1, "你选的配置在前沿上的位置（引用量出的误差和比特数）",
                  f"讲义的参数（整个 X 和 W）下，前沿上的配置是 {_FRONTIER}，预算 {BIT_BUDGET:g} bit 内误差最小的是 "
                  f"{BUDGET_OPTIONS[budget_choice()][1]}；你的那一块按自己量出的说（前沿和最好的配置都可能不同）。"),
        Criterion(1, "三种块缩放因子各输在哪里",
                  f"E8M0 FLOOR 会截断块内最大值（缩放后落在 ({_E2M1_MAX:g}, {2 * _FLOOR_LOW:g}) 的块）；RCEIL 不截断，"
                  f"但最大值缩放后只落在 ({_E2M1_MAX / 2:g}, {_E2M1_MAX:g}]，网格更粗；"
                  f"E4M3 加张量级因子几乎把每块的最大值放到 {_E2M1_MAX:g}。"),
        Criterion(1, "真实张量和随机数的不同，旋转对整张量 FP4 和对 NVFP4 各起什么作用（引用你的 q24、q25）",
                  f"真实激活的离群值集中在少数几个通道里，每个 token 都是那几个通道大：独立同分布的随机数没有这种结构"
                  f"（讲义的参数：整个 X 的 max/rms ≈ {_PEAK_REAL:.1f}，演示 2 的数据 ≈ {_PEAK_STUDENT_T:.1f}；你的那一块只有几个 token，"
                  f"它和你的数据谁的 max/rms 大取决于你的参数，按自己的数说）；Hadamard 旋转把离群通道摊开，整张量 FP4 的误差变小（讲义的参数：从 "
                  f"{100 * _REAL['fp4_tensor']:.0f}% 降到 {100 * _REAL['fp4_tensor rotated']:.0f}%，{ROTATION_SIZE} 阶）。对 NVFP4，旋转有两种"
                  "相反的作用：把一个块的离群值摊进同一旋转块里的其他小块，也让每个小块里的分布更均匀、块内最大值相对其他值变小；"
                  f"谁大取决于数据和旋转块的大小（{_NV_BLOCK} 阶只在一个 NVFP4 块里混合）。按自己量出的 q25 说（讲义的参数："
                  f"{100 * _REAL['nvfp4']:.1f}% → {100 * _REAL['nvfp4 rotated']:.1f}%）。{_RECIPE}。"),
    ),
}

EXPLANATIONS = {
    "q01_compute_headline": """
        `trend_row(B300_RUN, "nvfp4", base=H100_RUN)["compute"]` = B300 的 NVFP4 持续算力 ÷ H100 的最低精度（FP8）持续算力
        （讲义的参数就是规格表：实测比例都是 1，即厂商宣传的倍数）。这是厂商口径："每一代都用自己最低的精度"来比，所以这个倍数里混着两件事：芯片本身变快了，以及数值格式从 8 位降到了 4 位。
        """,
    "q02_format_gain": """
        q01 ÷（同为 FP8 的算力之比，同一行的 `"fp8"`）= B300 上 NVFP4 与 FP8 的持续算力之比：厂商口径的倍数里，有这么多倍来自"换了更低精度的格式"，
        而不是同精度下算得更快。读任何代际对比之前，先问一句：两边比的是不是同一种精度？
        """,
    "q03_least_grown": f"""
        `trend_row(CHIPS[新], "nvfp4", base=CHIPS[旧])` 里算力、带宽、容量、NVLink 四个倍数放在一起取最小值
        （讲义的 H100 → B300 是 NVLink；往 Rubin 的几步是 HBM 容量）。
        涨得最少的总是数据的存放或搬运（HBM 容量或 NVLink），不是算力。除了 B300 → Rubin（HBM4 的带宽涨了
        {_RUBIN_STEP["bandwidth"]:.2f} 倍，比 NVFP4 算力的 {_RUBIN_STEP["compute"]:.2f} 倍还多），每一步都是算力涨得最多。
        容量和互连跟不上：模型放不放得下、卡之间传不传得动，越来越成为限制。
        """,
    "q04_ridge_same_precision": f"""
        `ridge_point(B300_RUN, "fp8") / ridge_point(H100_RUN, "fp8")`：同一种精度的屋脊点之比。按规格表（讲义的参数，
        实测比例都是 1）只涨了几个百分点（{_KEY["q04_ridge_same_precision"]:.3f} 倍）——同样的 FP8 运算，B300 的算力和带宽涨得差不多。
        同一个团队、同一套内核：两块卡上 FP8 和 HBM 达到的比例相差在一成以内，分子分母里的比例大半抵消，实测芯片的这个比值
        离规格表的 {_SPEC_Q04:.3f} 倍不远：落在 {_SPEC_Q04 * variants.SAME_TEAM_FP8[0] / variants.SAME_TEAM_HBM[1]:.3f}–{_SPEC_Q04 * variants.SAME_TEAM_FP8[1] / variants.SAME_TEAM_HBM[0]:.3f} 倍之间，总是大于 1。
        """,
    "q05_ridge_mixed_precision": f"""
        `ridge_point(B300_RUN, "nvfp4") / ridge_point(H100_RUN, "fp8")` = q04 × q02：各取最低精度的屋脊点之比里，
        有 q02 倍来自格式变化（讲义的参数下 NVFP4 的算力是 FP8 的 {_KEY["q02_format_gain"]:g} 倍，q05 ≈ {_KEY["q05_ridge_mixed_precision"]:.2f}），
        不是带宽落后于同一种运算。
        """,
    "q06_memory_wall": f"""
        一个内核碰到的墙 = 它要到达的屋脊点 ÷ 它自己的算术强度（FLOP/B）。先看你的内核（`VARIANT["wall_kernel"]`）两样各变了什么：
        - 两块芯片上都用 FP8：屋脊点按 FP8 对 FP8 涨（q04），每个数的字节没变、强度没变：它的墙涨 q04 倍——这就是"同样的运算，
          带宽跟不上算力"的内存墙。
        - 数据仍按 FP8 读写、到 B300 上在片上量化成 NVFP4 再算：要到达的是 NVFP4 的屋脊点（q05 对 H100 的 FP8），
          而它从 HBM 搬的字节没变、强度没变：它的墙涨 q05 倍。q05 = q04 × q02：多出来的 q02 倍（讲义的参数 ×{_KEY["q02_format_gain"]:g}）
          来自更快的格式，不是带宽变慢——但对这个内核来说，这堵墙是真的。
        数据也换成 NVFP4 的内核，每个数只搬 {BYTES_PER_ELEM["nvfp4"]:g} 字节，强度也涨了 {_OVERSTATEMENT:.2f} 倍：见 q06b。
        """,
    "q06b_wall_for_nvfp4_kernel": f"""
        一个内核把数据从 FP8 换成 NVFP4：要到达的屋脊点涨了 q05 倍（讲义的参数：{_KEY["q05_ridge_mixed_precision"]:.2f}），它自己的 FLOP/B 涨了
        {BYTES_PER_ELEM["fp8"]:g} / {BYTES_PER_ELEM["nvfp4"]:g} ≈ {_OVERSTATEMENT:.2f} 倍，所以它还差的强度只涨了
        {_KEY["q05_ridge_mixed_precision"]:.2f} × {BYTES_PER_ELEM["nvfp4"]:g} ≈ {_KEY["q06b_wall_for_nvfp4_kernel"]:.2f} 倍。
        混合精度的比值把这个内核碰到的墙夸大了约 {_OVERSTATEMENT:.2f} 倍（不是 q02 的 {_KEY["q02_format_gain"]:g} 倍）；
        同样的运算、同样的格式，墙涨 q04 倍（讲义的参数：{_KEY["q04_ridge_same_precision"]:.2f} 倍）。
        """,
    "q06c_decode_generation_speedup": f"""
        batch = 1 的 decode 每生成一个 token，要把每个权重从 HBM 读一次、用它做一次乘加（2 FLOP）：算术强度在 H100 上约
        2 FLOP/B（FP8，每个数 {BYTES_PER_ELEM["fp8"]:g} 字节），在 B300 上约 {2 / BYTES_PER_ELEM["nvfp4"]:.1f} FLOP/B（NVFP4，{BYTES_PER_ELEM["nvfp4"]:g} 字节），
        都远低于屋脊点：两块芯片上都受带宽限制，一个 token 的时间 = 权重的字节 ÷ 带宽。所以倍数 = 带宽之比 × 每个权重的字节之比
        = (B300_RUN.mem_bw / H100_RUN.mem_bw) × ({BYTES_PER_ELEM["fp8"]:g} / {BYTES_PER_ELEM["nvfp4"]:g})（讲义的参数：
        {_LECTURE_BW_GAIN:.2f} × {_OVERSTATEMENT:.2f} ≈ {_KEY["q06c_decode_generation_speedup"]:.2f} 倍），算力不进来。厂商口径的 q01
        （讲义的参数：{_KEY["q01_compute_headline"]:.1f} 倍）对它不适用：受带宽限制的 decode 只吃到 HBM 带宽和更小的格式带来的好处。
        """,
    "q07_decode_intensity": f"""
        batch 个序列一起 decode：每一步把每个权重从 HBM 读一次（{BYTES_PER_ELEM["nvfp4"]:g} 字节），给每个序列各做一次乘加（2 FLOP）。
        算术强度 = 2 × batch / `BYTES_PER_ELEM["nvfp4"]` FLOP/B（讲义的 batch = 1：{_KEY["q07_decode_intensity"]:.3g}），
        远低于屋脊点：完全受带宽限制。
        """,
    "q08_decode_tokens_per_s": f"""
        带宽受限时每秒的 token 数 = 带宽 ÷ 每个 token 要读的字节数 = `B300_SERVE.mem_bw / (MODEL_PARAMS × {BYTES_PER_ELEM["nvfp4"]:g})`
        （讲义的参数：{MODEL_PARAMS / 1e9:g}B 参数、规格表的带宽，≈ {_KEY["q08_decode_tokens_per_s"]:.1f} token/s）。
        这是只读权重的上限：KV cache 的读取会让它更低（q09c–q09d）。
        """,
    "q09_decode_batch": f"""
        W4A4：权重和激活都是 NVFP4，矩阵乘法才按 NVFP4 的速率跑。batch 个序列一起 decode 时，每读一次权重做 batch 倍的运算，
        算术强度乘以 batch。到达屋脊点需要 batch = `ridge_point(B300_SERVE, "nvfp4")` ÷（2 / `BYTES_PER_ELEM["nvfp4"]`）
        （讲义的参数：{ridge_point(B300, "nvfp4"):,.0f} ÷ {_KEY["q07_decode_intensity"]:.3g} ≈ {_KEY["q09_decode_batch"]:.0f}）。
        这里只算了权重：这么多序列的 KV cache 也要放进 HBM。讲义的参数下，留出一成给运行时和激活，{_KEY["q09_decode_batch"]:.0f} 个序列
        每个最多 {_RIDGE_CONTEXT:,.0f} 个 token 的上下文就把 HBM 占满了（q09c）——长上下文的 decode 到不了这个屋脊点。
        """,
    "q09b_decode_batch_w4a8": f"""
        W4A8：权重 NVFP4、激活 FP8，Tensor Core 按 FP8 的速率算（两个操作数里精度高的那个决定速率），
        屋脊点是 `ridge_point(B300_SERVE, "fp8")`（讲义的参数：{ridge_point(B300, "fp8"):,.0f} FLOP/B）；权重仍按 NVFP4 读，强度不变：
        batch ≈ {_KEY["q09b_decode_batch_w4a8"]:.0f}（讲义的参数）。更少的并发就到顶了——算力上限也低了（B300_SERVE 上 NVFP4 与 FP8 持续算力之比；讲义的参数下即 q02 的
        {_KEY["q02_format_gain"]:g} 倍）。
        注意：Blackwell 原生的 FP8 × FP4 矩阵乘法（tcgen05 的 `kind::mxf8f6f4`）每 32 个数取一个 E8M0 因子，也就是 MXFP4 的权重
        （{_MX_BITS:g} bit/值）；权重要是 NVFP4，就得在软件里先反量化。本题按 NVFP4 的 {_NV_BITS:g} bit 读权重，是一个简化的模型。
        """,
    "q09c_kv_bytes_per_token": f"""
        每个 token 的上下文在每一层存一份 K 和一份 V，每份 `KV_HEADS` 个 KV 头（GQA）× `KV_HEAD_DIM` 维，FP8 每个数 1 字节：
        2 × 层数 × KV 头数 × 维数 × 1（讲义的参数：2 × {KV_LAYERS} × {KV_HEADS} × {KV_HEAD_DIM} × {BYTES_PER_ELEM["fp8"]:g}
        = {kv_bytes_per_token():,.0f} 字节，每个序列）。
        """,
    "q09d_kv_equal_weights_context": f"""
        一步 decode：权重读一次（`MODEL_PARAMS` × {BYTES_PER_ELEM["nvfp4"]:g} 字节，整个 batch 共用），
        每个序列各读自己的 L × q09c 字节 KV。令 `KV_BATCH` × L × q09c = 权重字节（讲义的参数：
        {MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"] / 1e9:g} GB、{KV_BATCH} 个序列，L ≈ {_KEY["q09d_kv_equal_weights_context"]:,.0f} 个 token）。上下文再长，decode 读的主要是 KV cache 而不是权重——
        这时加大 batch 的收益越来越小（KV 的字节随 batch 一起涨，强度最多趋近 2P/(L·k)），GQA、MLA 和 KV 的低精度存储才是办法。
        交叉点上 KV cache 和权重一样大，HBM 要装下两倍的权重：讲义的参数是 2 × {MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"] / 1e9:g} GB
        ≤ {variants.USABLE_HBM:.0%} × {B300.mem_cap / 1e9:g} GB（留一成给运行时和激活）；每位同学的模型都满足这一点，交叉点才存在。
        """,
    "q09e_ridge_share_with_kv": f"""
        q09 的 batch 是只算权重时的预测：那时 2P·B = R·W（P 个参数，W 是权重字节，R 是屋脊点）。算上 KV cache，每个序列的
        KV cache 占 L·k 字节（k 是 q09c，L 是服务要的上下文 `SERVICE_CONTEXT`），一步读的字节是 W + B·L·k，
        强度 = 2P·B / (W + B·L·k) = 2P / (W/B + L·k)：batch 越大，强度越高，所以取 q09 的值和装得下的最大值里小的那个。
        装得下要 W + B·L·k ≤ C（`USABLE_HBM`），即 B ≤ (C − W) / (L·k)。q09 的 batch 装得下时，
        与屋脊点之比 = W / (W + B·L·k)；装不下时 W + B·L·k = C，比值 = 2P·B / (R·C)，更低。
        讲义的参数：W = {_W_GB:.1f} GB，B ≈ {_KEY["q09_decode_batch"]:.0f} 个序列、每个 L = {variants.LECTURE["service_context"]:,} 个 token 的
        KV cache 共 {_Q09E_KV_GB:.1f} GB，合计 {_Q09E_GB:.1f} GB {"≤" if _Q09E_FITS else "＞"} C = {_C_GB:.1f} GB，{_Q09E_VERDICT}；
        只到屋脊点的 {_KEY["q09e_ridge_share_with_kv"]:.1f}%。
        差距说明：只算权重的 roofline 在长上下文下高估了 decode 的强度——KV 的字节随 batch 一起涨，加大 batch 时强度最多趋近
        2P / (L·k)：L 短时还能追上屋脊点，L 长了就追不上；batch 又受 HBM 容量的限制（q09f 把几个限制放在一起）。
        上下文长、每个 token 的 KV 大时，q09 的 batch 根本装不下，先碰到的是容量。
        """,
    "q09j_chunked_prefill_tokens": f"""
        q09e 的那一步受带宽限制（强度只到屋脊点的 q09e）：它的长短 = 读的字节 ÷ 带宽 = (W + B·L·k) / BW。这段时间里 Tensor Core
        能做 F·(W + B·L·k) / BW = R·(W + B·L·k) FLOP（R = F / BW 是屋脊点），decode 只用掉 2P·B。提示词的 token 和 decode 的一样，
        每个 2P FLOP，用的是这一步已经读进来的权重，不多读字节：一步能顺带处理 R·(W + B·L·k) / 2P − B 个提示词 token，
        也就是 B × (100 / q09e − 1)。
        讲义的参数：一步读 {_Q09E_GB:.1f} GB，约 {1e3 * service_step_seconds(service_batch()):.1f} 毫秒，B ≈ {service_batch():.0f}，
        能顺带 {_KEY["q09j_chunked_prefill_tokens"]:,.0f} 个提示词 token。
        这是分块预填充（chunked prefill）的道理：decode 的一步受带宽限制时 Tensor Core 空着，把 prefill 切成块塞进来几乎不花时间；
        块再大，这一步就到了算力屋顶，每多一个 token 都让这一步变长，batch 里每个序列的生成也跟着变慢。
        忽略了的两样：这些 token 自己的注意力（提示词长时不小，见 q17c），和它们写入的 KV cache（要占 HBM：q09e 的 batch
        装满 HBM 时，得等有序列结束腾出位置）。
        """,
    "q09f_w4a4_context_limit": f"""
        三个限制一起写：到达屋脊点要 2P·B ≥ R·(W + B·L·k)，即 B ≥ R·W / (2P − R·L·k)（只有 R·L·k < 2P 时才有解）；
        装进 HBM 要 W + B·L·k ≤ C（C = {variants.USABLE_HBM:.0%} × {B300.mem_cap / 1e9:g} GB）；框架排得下要 B ≤ B_max（`MAX_BATCH`）。
        batch 取到达屋脊点的最小值，代入内存的限制：W·2P / (2P − R·L·k) ≤ C，得 L ≤ 2P·(1 − W/C) / (R·k)，这时 batch = R·C / (2P)；
        代入 batch 的上限：R·W / (2P − R·L·k) ≤ B_max，得 L ≤ (2P − R·W / B_max) / (R·k)。两个都要满足，取短的：R·C / (2P) 比 B_max 大时，
        先卡住的是框架的 batch，不是 HBM。讲义的参数（R 是 B300 的 NVFP4 屋脊点，B_max = {variants.LECTURE["max_batch"]:,}）：只看 HBM 时边界上的
        batch 要 ≈ {_Q09F_HBM_BATCH:,.0f} 个序列，超过了 B_max，所以 L ≈ {_KEY["q09f_w4a4_context_limit"]:,.0f} 个 token，边界上 batch =
        {boundary_batch("W4A4"):,.0f}。上下文再长，W4A4 的 decode 在装得下、排得下的任何 batch 上都到不了屋脊点。
        """,
    "q09g_decode_precision": f"""
        W4A8 的屋脊点是 FP8 的（q09b），小 NVFP4 / FP8 的算力之比倍，边界 L 同样按 q09f 的式子算（两个限制取短的），更长（讲义的参数：
        W4A4 {_KEY["q09f_w4a4_context_limit"]:,.0f}、W4A8 {decode_context_limit("W4A8"):,.0f} 个 token）。服务要的上下文
        （讲义的 {variants.LECTURE["service_context"]:,}）落在哪一段就选哪个：比 W4A4 的边界短，W4A4 能到达它（更高的）屋脊点；
        在两条边界之间，只有 W4A8 能；比 W4A8 的还长，两者都始终受带宽限制——这时该省的是 KV 的字节（更少的 KV 头、更低精度的 KV、MLA），
        而不是换更快的矩阵乘法格式。
        """,
    "q09h_service_batch": f"""
        一步 decode 的时间按 roofline 是两者中慢的那个：t(B) = max(2P·B / F, (W + B·L·k) / BW)（F、BW 是 B300_SERVE 的 NVFP4 算力和带宽，
        L 是 `SERVICE_CONTEXT`，k 是 q09c）。两项都随 B 增长，所以每个序列的速度 1 / t(B) 随 batch 变慢，承诺的速度 T = `SERVICE_RATE`
        给 batch 一个上限：t(B) ≤ 1/T——在算力屋顶上是 B ≤ F / (2P·T)，在带宽屋顶上是 B ≤ (BW / T − W) / (L·k)；装得下再给一个，
        B ≤ (C − W) / (L·k)。三个上限取最小的，哪个最小，哪个就卡住 batch（每个上限都会卡住一部分同学的 batch，漏掉哪一个都可能答错）。
        讲义的参数（T = {variants.LECTURE["service_rate"]}）：三个上限（算力屋顶、带宽屋顶、HBM 容量）依次约
        {_Q09H_LIMITS["rate_compute"]:,.0f}、{_Q09H_LIMITS["rate_memory"]:,.0f}、{_Q09H_LIMITS["hbm"]:,.0f} 个序列，卡住的是{_Q09H_BINDS}；batch ≈ {_Q09H_BATCH:,.0f} 时
        一步 {_Q09H_STEP_MS:.1f} ms，整块芯片一共 ≈ {_Q09H_BATCH / (_Q09H_STEP_MS / 1e3):,.0f} token/s（算力屋顶的上限是 {_COMPUTE_CEILING:,.0f}）。
        承诺的速度越高，一步的时间越短，能一起跑的序列越少：服务的吞吐和每个用户的速度是一对要权衡的量，
        而长上下文的 KV cache 让这个权衡更紧——KV 的字节随 batch 涨，带宽屋顶上的每一步都更慢。
        """,
    "q09i_speculative_speedup": f"""
        一轮 = 草稿 γ 步 + 大模型检查一步。每一步都按 roofline 取慢的那个：草稿一步 t_d = max(2·P_d·B / F, W_d / BW)；检查一步每个序列算
        γ + 1 个 token，t_v = max(2P·B·(γ + 1) / F, (W + B·L·k) / BW)——在带宽屋顶上它和普通的一步一样长（权重和 KV 只读一遍），这正是
        投机解码的来源：多算的运算落在闲着的 Tensor Core 上。一共的 token/s = B·(1 − α^(γ+1)) / (1 − α) ÷ (γ·t_d + t_v)，
        对 γ = 0…8 逐个算，取最大的除以 γ = 0 的。讲义的参数（P_d = {_SPEC_P["draft_params_b"]:g}B、α = {_SPEC_P["draft_accept"]:g}、
        B = {_SPEC_P["spec_batch"]}、L = {_SPEC_P["service_context"]:,}，按规格表）：检查一步读 {MODEL_PARAMS * BYTES_PER_ELEM["nvfp4"] / 1e9:.1f} GB 权重和
        {_SPEC_KV_GB:.1f} GB KV，约 {_SPEC_STEP_MS:.1f} ms，草稿一步只要 {_SPEC_DRAFT_MS:.2f} ms；γ ≥ {_SPEC_ROOF} 时检查一步的运算超过了读取，
        它离开带宽屋顶、随 γ 变长。最好的 γ = {_SPEC_BEST}，快 {_KEY["q09i_speculative_speedup"]:.2f} 倍；再长，多出的猜测被接受的机会（α^γ）
        越来越小，付出的草稿步和检查的运算却一样多——最好的 γ 在中间，不是越长越好。
        KV cache 越大（上下文越长），检查一步越贵，草稿越显得便宜，投机越划算。
        不划算的时候：batch 大到检查一步已经受算力限制——γ + 1 倍的运算就是 γ + 1 倍的时间，被拒绝的猜测白算了，γ = 0 最好；
        α 低、草稿模型大时，收益也跟着变小。投机解码是拿闲置的算力换带宽，只有在 decode 受带宽限制时才有闲置的算力。
        """,
    "q09k_moe_tokens_per_s": f"""
        先从公开的参数数算出专家的大小：总参数 − 激活参数 = 没被选中的 E − k 个专家，所以一个路由专家 X = (总 − 激活) / (E − k)，
        专家以外每个 token 都读的部分 S = 激活 − k·X。一个 token 不选某个专家的概率是 1 − k/E，B 个 token 都不选它的概率是 (1 − k/E)^B：
        一层平均读到 E·(1 − (1 − k/E)^B) 个专家（每个 token 选的是 k 个不同的专家，所以是 1 − k/E，不是 (1 − 1/E)^k）。一步读 (S + E·(1 − (1 − k/E)^B)·X) × {BYTES_PER_ELEM["nvfp4"]:g} 字节；运算只有 2 × 激活参数 × B，
        强度远低于屋脊点，一步的时间 = 字节 ÷ 带宽，每个序列一步一个 token。讲义的参数（{_MOE_NAME}，E = {_MOE_E}，k = {_MOE_K}，
        B = {_MOE_B}，按规格表）：X ≈ {_MOE_X / 1e9:.3f}B，S ≈ {_MOE_S / 1e9:.1f}B，一层平均读 {_MOE_READ:.1f} 个专家（不是 {_MOE_K} 个），
        一步读 {_MOE_GB:.0f} GB，是激活参数的 {_MOE_TIMES:.1f} 倍，每个序列约 {_KEY["q09k_moe_tokens_per_s"]:.0f} token/s；
        激活参数一样多的稠密模型每步只读 {_MOE_DENSE_GB:.1f} GB，约 {_MOE_DENSE_RATE:.0f} token/s。batch = 1 时 MoE 确实只读激活参数；
        batch 变大，不同的 token 选中不同的专家，读的字节很快涨向全部参数，"激活参数"就不再是 decode 的成本。
        常见的错：只数 k 个专家，算出的速度是正确值的 (S + E·(1 − (1 − k/E)^B)·X) ÷ (S + k·X) 倍（讲义的参数下
        {_MOE_K_ONLY_TIMES:.1f} 倍，用你自己的 S、X、B 算一算）；把 B·k 个专家都当成不同的（忽略了重复选中）；
        或者把总参数平均分给 E 个专家、不留专家以外的部分（每个专家当成 总/E，漏掉了 S）。E·(1 − e^(−B·k/E)) 是期望值的近似。
        """,
    "q09l_tp_allreduce_batch": f"""
        一步 decode，每块 GPU 从 HBM 读 W / N 字节的权重：t_w = W / (N·BW)，与 batch 无关。每层两次 all-reduce，每次 B × d_model 个 BF16；
        环形 all-reduce 的 reduce-scatter 和 all-gather 各 N − 1 轮、每轮每块 GPU 发 1/N 的数据，共发 2(N − 1)/N 倍的数据量，
        同时也收这么多：按一个方向的带宽算，即规格表 NVLink 数的一半（{B300.link_bw / 2e9:g} GB/s）。
        t_ar = 2·L × 2(N − 1)/N × B·d_model·2 字节 ÷ {B300.link_bw / 2e9:g} GB/s，随 batch 线性增长。令两者相等：
        B = t_w ÷ (每个序列的 t_ar)。讲义的参数（N = {variants.LECTURE["tp_gpus"]}，L = {variants.LECTURE["kv_layers"]}，d_model =
        {_TP_WIDTH:,}，按规格表）：t_w ≈ {_TP_SHARD_MS:.2f} ms，每个序列的 all-reduce ≈ {_TP_PER_SEQ_US:.2f} µs，B ≈ {_KEY["q09l_tp_allreduce_batch"]:.0f}。
        这个 batch 在 W4A4 的屋脊 batch 之下，张量核还没饱和；batch 再大，NVLink 上的传输比读权重还长：重叠与否，NVLink 都先于张量核（它们的屋脊 batch 更大）卡住这一步。GPU 数加倍，t_w 减半，而 2(N − 1)/N 还略涨：
        这个 batch 减到一半还少——张量并行越宽，越早被 NVLink 卡住。真实的 all-reduce 还有每次几微秒的启动延迟，
        每步 2·L 次，batch 小时它往往比传输本身还长。
        """,
    "q10a_fp4_zero_share": """
        整张量 FP4 的缩放因子 s = amax / 6，x 量化成 to_e2m1(x / s)·s；E2M1 最小的非零值是 0.5，|x| / s ≤ 0.25 的数舍入成 0
        （恰好 0.25 时平局取偶数，也是 0）。所以变成 0 的就是 |x| ≤ amax / 24 的非零数：`np.mean((np.abs(x) <= np.abs(x).max() / 24) & (x != 0))`。
        模型和下面表里 `quantize` 量出来的完全一致：这一列不是"误差的后果"，而是缩放因子由最大值决定的直接结果。
        """,
    "q10_size_sensitive": """
        预测只需要问一句：每种方案的缩放因子由什么决定？只有整张量的缩放因子依赖"全体数据的最大值"：
        数据越多，重尾分布里出现的最大值越大，缩放因子越大，小数越容易被舍入成 0；块缩放方案只看 16 或 32 个数，没有系统性的增长（图上几个百分点的起伏是重尾样本的随机性）。
        FP8 也是整张量缩放，但它的网格细得多，最大值变大时损失的精度小。扫描的图（每种方案在 2^18 和 2^12 个数上的误差之差）验证了它：
        整张量 FP4 增加得最多。
        """,
    "q11_scale_format_gain": f"""
        块大小都是 `SMALL`（讲义：16）：`quantize(x, "mxfp4", block_size=SMALL)` 的误差减去
        `quantize(x, "mxfp4", block_size=SMALL, scale_format="e4m3")` 的误差，写成百分点。
        2 的幂缩放因子向下取整，块内最大值缩放后落在 [4, 8)：落在 [4, 6] 的块，其余的数用到的网格比 NVFP4 粗；
        落在 (6, 8) 的块（q12b，讲义的参数约 {_KEY["q12b_e8m0_clipped_blocks"]:.0f}%）网格反而更细，代价是超过 6 的被截断。
        E4M3 块因子几乎把块内最大值正好放到 6。
        """,
    "q12_block_size_gain": f"""
        缩放格式都是 E4M3：块大小 `BIG` 的误差减去块大小 `SMALL` 的误差（讲义：`quantize(x, "nvfp4", block_size=32)` 减去
        `quantize(x, "nvfp4")`）。讲义的数据上 q11 + q12 ≈ {_KEY["q11_scale_format_gain"] + _KEY["q12_block_size_gain"]:.2f} 个百分点，
        比两者同时改变（MXFP4 → NVFP4）的 {_GAP:.2f} 个百分点多：两个因素相互影响，不能简单相加——E8M0 因子下把块从 32 减到 16
        只省 {_BLOCK_WITH_E8M0:.2f} 个百分点；讲义的数据上，按哪个顺序拆，缩放因子的格式都是大头。你的块大小和数据不同，先从自己的表里读出这几项再下结论。
        """,
    "q12p_e8m0_clip_prediction": """
        E8M0 FLOOR 把块内最大值缩放到 amax / s = 8·m ∈ [4, 8)，正好一个倍频程；超过 6 的被截断。最大值在对数刻度上均匀时，
        落在 (6, 8) 的机会是这一段在对数刻度上的长度：log2(8 / 6) ≈ 41.5%。这个预测不依赖数据，只依赖缩放因子的取法。
        两种块各有代价：落在 [4, 6] 时，其余的数用到的网格比把最大值放到 6 的 E4M3 因子粗；落在 (6, 8) 时网格反而更细，
        代价是最大值被截断到 6。
        """,
    "q12b_e8m0_clipped_blocks": """
        E8M0 FLOOR 的因子是 2^(floor(log2 amax) − 2)，块内最大值缩放后 = 8·m，m 是 amax = m·2^e（m ∈ [0.5, 1)）的尾数，
        即 `np.frexp(amax)[0]`：8·m > 6 的块截断自己的最大值。重尾数据的块最大值跨一到三个倍频程，尾数大致均匀分布在对数尺度上，
        所以数出来的比例在 q12p 的预测（约 41.5%）附近（块少、尾巴轻重不同时，在三成到五成多之间）：差距来自块最大值的分布
        在一个倍频程之内并不完全均匀，和块的个数有限。
        """,
    "q13_bottleneck": f"""
        演示 3 的模型只比较 exp 和矩阵乘法：长序列的 prefill / 训练里，FlashAttention 把分块留在片上，HBM 和 NVLink
        不在这个比较里。`exp_ratio(芯片, 精度, d_qk, d_v)` 大于 1：做完一个分数的 exp 比做完它配套的矩阵乘法还慢，
        限制速度的是 SFU 的 exp；小于 1 则是 Tensor Core（讲义的 B200、FP8、d_head = 128 是前者）。
        H100 上按表里的 {H100.exp_per_s / 1e12:g} T exp/s 算，还是按 q15 的同一口径（{h100_exp_on_tensor_basis() / 1e12:.2f} T）算，
        答案都一样：每位同学的比值在两种口径下都离 1 至少 {variants.MARGINS["q13_bottleneck"]:.0%}。
        （decode 的注意力通常受 HBM 带宽限制，那是另一个问题；q17b 看 exp 什么时候也会卡住它。）
        """,
    "q14_mla_effect": """
        比较 `exp_ratio(B300, "fp8", *MLA_SHAPE)` 和 `exp_ratio(B300, "fp8", 128, 128)`。t_exp 不变，t_mma 和 d_qk + d_v 成正比：
        d_qk + d_v 比 256 大，每次 exp 配更多矩阵乘法，比值变小（讲义的 MLA 形状 192 / 128 就是这样）；比 256 小则变大。
        模型结构的选择也能缓解（或加重）exp 瓶颈。
        """,
    "q15_h100_tensor_basis": f"""
        形状 (d_qk, d_v) 时比值 = 989.4 TFLOPS ÷ (2·d_qk + 2·d_v) ÷ 同一口径的 exp 吞吐；下面的数字是讲义的 d_head = {_D}。
        表里 H100 的 {H100.exp_per_s / 1e12:g} T exp/s 与完整的 GH100 相符（{_GH100}；这是本课程的推算，没有哪款 H100 产品开了
        {hw_specs.GH100_FULL_SMS} 个 SM），而 {H100.peak_flops("bf16") / 1e12:g} TFLOPS 是 H100 SXM5 的
        {_SXM5.split(" ×")[0]} 个 SM、{hw_specs.H100_SXM5_BOOST_HZ / 1e9:g} GHz。同一口径下 exp 吞吐 = {_SXM5}
        ≈ {_sci(h100_exp_on_tensor_basis())} exp/s（FlashAttention-3 用的 3.9 T），比值 ≈ {_KEY["q15_h100_tensor_basis"]:.0f}%
        （FP8 则翻倍）：讲义按 {H100.exp_per_s / 1e12:g} T 算出的 {exp_ratio(H100, "bf16", _D, _D):.0%} 偏乐观。
        B200 / B300 的 {B200.exp_per_s / 1e12:g} / {B300.exp_per_s / 1e12:g} T 也只是 NVIDIA 图表上的数，口径（SM 数、时钟）没有公布。
        比较两个数之前，先确认口径一致。
        """,
    "q16_software_exp_share": f"""
        SFU 只做 (1 − f) 的 exp 时，t_exp 变成原来的 (1 − f) 倍；比值 `exp_ratio(B200, "fp8", *SOFTWARE_SHAPE)`（讲义的
        d_head = {_D}：{_B200_RATIO:.0%}）大于 1 时，
        令 (1 − f) × 比值 = 1，f = 1 − 1 / 比值；比值不超过 1 时什么也不用挪（f = 0）。这假设 FMA 单元还有空闲——
        它们同时要做 softmax 的其他运算，所以实际能挪的更少。
        """,
    "q16b_emulated_exp_time": f"""
        以"全部 exp 都在 SFU 上"时每个分数的时间为 1。Tensor Core 要 1 / 比值（比值 = `exp_ratio(B200, "fp8", *SOFTWARE_SHAPE)`）。
        把比例 s 的 exp 挪到 FMA 管线：SFU 还剩 1 − s；FMA 管线每个时钟出的结果是 SFU 的
        f = {_PIPES:g} 倍（{FP32_FMA_PER_SM_PER_CLK["Blackwell"]} ÷ {EX2_PER_SM_PER_CLK["Blackwell"]}），它要做 a + s·c 条
        （a = `SOFTMAX_FMA_OPS`，c = `EXP_POLY_OPS`），时间 (a + s·c) / f。三个单元同时工作，一个分数的时间是三者里最长的。
        s 越大，SFU 越快、FMA 管线越慢：exp 的部分在两者相等时最快，1 − s = (a + s·c) / f，s = (f − a) / (f + c)，
        时间 (a + c) / (f + c)。所以最短的时间 = max(1 / 比值, (a + c) / (f + c)) × 100%：两个限制里长的那个卡住它。
        讲义的参数（d_head = {_D}，c = {variants.LECTURE["exp_emulation"][0]}，a = {variants.LECTURE["exp_emulation"][1]}）：
        Tensor Core {_EMULATION["tensor"]:.1%}，SFU 和 FMA 管线平衡时 {_EMULATION["balanced"]:.1%}，卡住它的是
        {"exp（SFU 加 FMA 管线）" if _EMULATION["balanced"] > _EMULATION["tensor"] else "Tensor Core"}，
        最短 {_KEY["q16b_emulated_exp_time"]:.1f}%（快 {100 / _KEY["q16b_emulated_exp_time"]:.2f} 倍）。Tensor Core 先卡住时，只需挪 q16 的那一点，再多挪也不会更快；
        exp 先卡住时，挪到平衡点为止，再挪 FMA 管线就成了瓶颈。软件 exp 的上限由 FMA 管线定，还要和 softmax 抢同一条管线：
        FlashAttention-4 只把一部分 exp 挪到 FMA 管线上；Blackwell Ultra 把 SFU 的 exp2 吞吐翻倍（每个 SM 每个时钟 16 → 32），
        不占 FMA 管线就把 exp 的时间减半。本题是简化：每个 SM 每个时钟发射的指令也有限，FMA 管线出 128 个结果时发射已经用满，
        SFU 的每条 exp 指令还要再占发射；算上它，平衡点的时间更长，软件 exp 能省的更少。
        """,
    "q17_backward_ratio": f"""
        反向传播每个分数仍只有一次 exp（重算 P），却有 5 次矩阵乘法：重算 S = QKᵀ、dV = Pᵀ·dO、dP = dO·Vᵀ、dQ = dS·K、
        dK = dSᵀ·Q，合计 6·d_qk + 4·d_v FLOP（讲义的 d_head = {_D} 时是前向的 {_BACKWARD_FACTOR:g} 倍，比值 {_KEY["q17_backward_ratio"]:.0f}%）。
        每次 exp 配的矩阵乘法是前向的 {_BACKWARD_RANGE} 倍（d_v = d_qk 时正好 2.5 倍，d_v 比 d_qk 小时更多；本题所有的形状都在这个范围里），
        比值降到 100% 以下：反向不太在乎 exp。这里假设反向的矩阵乘法也用 FP8（训练里并不常见）；用 BF16 时 Tensor Core 的算力只有一半，
        t_mma 翻倍，比值再减半。
        """,
    "q17b_decode_exp_vs_kv": f"""
        每个上下文 token、每个 KV 头：从 HBM 读 K 和 V 各 d 个数，2·d·b 字节（b 是 KV 格式每个数的字节）；共用这个 KV 头的
        G 个 query 头各有一个分数，各做一次 exp。所以 t_exp / t_读 = (G / E) / (2·d·b / BW) = G·BW / (2·d·b·E)：和上下文长度、层数、
        KV 头数都无关（它们让两边同样变多）。讲义的设计（G = {_Q17B_GROUP}、d = {_Q17B_DIM}、{_Q17B_FORMAT.upper()}，按规格表的带宽）：
        {_KEY["q17b_decode_exp_vs_kv"]:.1f}%——decode 读 KV 的时间远多于 exp，exp 不是瓶颈。可这个比值和 G 成正比、和 d·b 成反比：
        FP8、d = {_Q17B_DIM} 时 G ≈ {_Q17B_EVEN_GROUP:.0f} 就持平；128 个 query 头共用一个 KV 头（MLA 的共享程度）、KV 存成 NVFP4、d = 64 时
        是 {100 * _Q17B_MLA:.0f}%。省 KV 字节的设计（更大的组、更低精度的 KV）把 decode 从带宽推向 SFU：演示 3 的 exp 瓶颈在 decode 里同样会出现。
        （这里只比 exp 和 HBM；decode 的注意力还有 QKᵀ 和 PV 的矩阵乘法，也随 G 增长。）
        """,
    "q17c_prefill_attention_ratio": f"""
        因果注意力：第 i 个 token 和 i 个 token 算分数，一层一个 query 头共 L·(L + 1) / 2 个分数；每个分数配 flops_per_exp(d, d) = 4d FLOP
        的 QKᵀ 和 PV（演示 3）。全模型：层数 × query 头数 × L·(L + 1) / 2 × 4d，约 2·层数·L²·(H_q·d)；权重的矩阵乘法是 2P·L。
        两者之比 = 层数·H_q·L·(L + 1)·2d / (2P·L) ≈ 层数·L·(H_q·d) / P：随 L 线性增长（稠密模型 P ≈ 12·层数·d_model²，比值约 L / (12·d_model)）。讲义的模型
        （{_Q17C_P["kv_layers"]} 层、{_Q17C_P["query_heads"]} 个 query 头 × {_Q17C_P["kv_head_dim"]} 维）、L = {_Q17C_P["service_context"]:,}：
        {_KEY["q17c_prefill_attention_ratio"]:.2f}%。要到 L ≈ {_Q17C_HALF:,.0f} 个 token，注意力才和权重的矩阵乘法一样多。
        所以演示 3 的 exp 瓶颈拖慢的只是注意力那一部分：短 prompt 的 prefill 几乎全是权重的矩阵乘法，exp 再慢也无关紧要；
        上下文越长，注意力的份额越大，SFU 跟不跟得上 Tensor Core 才越来越影响整个 prefill 的速度——长上下文正是 Blackwell Ultra
        提高 SFU 吞吐的理由。（这里还没算 exp 本身、softmax 的其余运算和 decode；只比矩阵乘法的运算量。）
        """,
    "q18_model_speedup": f"""
        你的形状和芯片：加速 = 旧芯片的 max(t_exp, t_mma) ÷ 新芯片的 max(t_exp, t_mma)，先看每块芯片受谁限制
        （按表里的 exp 吞吐，你的一次换代里总有一边受 exp 限制、另一边受矩阵乘法限制；H100 若换成 q15 的口径，d_qk + d_v 小于约 {_H100_TENSOR_BASIS_SUM:.0f} 时它也受 exp 限制，本题按表里的数）。下面是讲义的参数（B200 → B300、实测的形状）。NVIDIA 的实测（{MEASURED_DOCUMENT}）用的是 {MEASURED_MODEL}：本课程推断的形状是 MLA，d_qk = {MEASURED_D_QK}、d_v = {MEASURED_D_V}，
        每次 exp 配 {_MLA_FPE} FLOP。完全重叠时一个分数的时间 = max(t_exp, t_mma)——这是瓶颈模型，不是 Amdahl 定律。
        B200 受 exp 限制（1 / {_sci(B200.exp_per_s)} 秒），B300 的 exp 够快，变成受矩阵乘法限制
        （{_MLA_FPE} / {_sci(B300.peak_flops("fp8"))} 秒）：两者之比 {_KEY["q18_model_speedup"]:g} 倍。
        """,
    "q18b_serial_speedup": f"""
        完全串行时一个分数的时间 = t_exp + t_mma（讲义的参数）：B200 {_sci(_T["B200", False])} 秒，B300 {_sci(_T["B300", False])} 秒，
        之比 ≈ {_KEY["q18b_serial_speedup"]:.2f} 倍。exp 只占一部分时间，把它加速 {B300.exp_per_s / B200.exp_per_s:.2f} 倍，
        整体只快这么多——这才是 Amdahl 定律的形状。每块芯片上一个分数的真实时间介于两个模型之间（部分重叠）；
        两块芯片重叠得不一样时，加速却不一定介于两个模型之间（q18c）。
        """,
    "q18c_measured_position": f"""
        在实测的形状、B200 → B300 上（每位同学都一样），两个模型给出 {_KEY["q18b_serial_speedup"]:.2f}（串行）到 {_KEY["q18_model_speedup"]:g}（重叠）倍，实测
        {MEASURED_FP8_FORWARD_GAIN:g} 倍比两者都低：两块芯片的重叠程度相同时，重叠解释不了全部差距（两代的内核重叠得不一样时，加速可以落在两个模型之外：
        B200 上完全重叠、B300 上重叠得差一些，就可以正好是 {MEASURED_FP8_FORWARD_GAIN:g} 倍）。两个模型都假设矩阵乘法跑满峰值、softmax 的
        其他运算不占时间；实测是端到端的前向，还包括这些。（"只算注意力"和形状 ({MEASURED_D_QK}, {MEASURED_D_V}) 是本课程对这次
        测量的推断：博客只说是 {MEASURED_MODEL}；它的 MLA 在 decode 时吸收权重后是 d_qk = 576、d_v = 512。）
        """,
    "q19_mma_efficiency": f"""
        先判断每块芯片上谁在限制速度。两块都受矩阵乘法限制时，加速只是两者 FP8 峰值之比
        （{B300.peak_flops("fp8") / B200.peak_flops("fp8"):.2f} 倍）；两块都受 exp 限制时，是 exp 吞吐之比
        （{B300.exp_per_s / B200.exp_per_s:.2f} 倍）：都给不出 {MEASURED_FP8_FORWARD_GAIN:g} 倍。B200 受矩阵乘法限制而 B300 受 exp 限制也不可能
        （B300 的 exp 吞吐是 B200 的 {B300.exp_per_s / B200.exp_per_s:.2f} 倍，FP8 峰值只是 {B300.peak_flops("fp8") / B200.peak_flops("fp8"):.2f} 倍：
        B200 上矩阵乘法慢于 exp 的 a，在 B300 上更慢于 exp）。只剩 B200 受 exp 限制、B300 受矩阵乘法限制：
        若 SFU 达到 exp 峰值的 b，矩阵乘法达到峰值的 a：
        {_MLA_FPE} / (a × {_sci(B300.peak_flops("fp8"))}) = (1 / (b × {_sci(B200.exp_per_s)})) / {MEASURED_FP8_FORWARD_GAIN:g}，
        a 和 b 成正比；讲义取 b = 1，解得 a ≈ {_KEY["q19_mma_efficiency"]:.0f}%。这是把全部差距都归到矩阵乘法效率上的一种归因。两块芯片重叠程度相同时，不完美的重叠只能让加速落在两个模型之间，
        解释不了低于两者的实测（q18c）；两代内核的重叠程度不同也是一种解释；模型没算的 softmax 其他运算（在 FMA 单元上）、两代芯片上不同的内核也会让实测的提升变小，
        所以真实的矩阵乘法效率可以更高。
        """,
    "q22_real_fp4_tensor_error": f"""
        `matmul_error(quantize_matrix(X_TILE, "fp4_tensor"), quantize_matrix(W_TILE, "fp4_tensor"), X_TILE, W_TILE)`：
        两个操作数各自的误差都传到 Y 里。讲义的参数（整个 X 和 W）下约 {100 * _REAL["fp4_tensor"]:.0f}%。
        别直接拿它和演示 2 的整张量 FP4 误差比大小：那是一个张量自己的元素误差，这里是两个操作数都量化后 Y 的误差；样本大小也不同，
        而 q10 刚说过整张量方案的误差随数据量变。两个数不是同一种量，谁大谁小因人而异。
        用同一种量比，讲义的参数下整个 X 比演示 2 的数据更偏（max/rms ≈ {_PEAK_REAL:.1f}，演示 2 的 {DEMO2_N} 个数 ≈ {_PEAK_STUDENT_T:.1f}；
        整张量 FP4 把 X 里 {_ZEROS_REAL:.0%} 的数量化成 0，演示 2 的数据是 {_ZEROS_STUDENT_T:.0%}）；你的那一块只有几个 token，
        它和你的数据谁的 max/rms 大取决于你的参数。不变的是结构：X 的离群值集中在少数几个通道里——
        独立同分布的样本模拟不出这种结构，旋转（q24）利用的正是它。
        你的那一块只含几个 token 和几个输出通道，整张量的缩放因子由这一块里的最大值决定。
        """,
    "q23_real_nvfp4_error": f"""
        讲义的参数下 NVFP4 约 {100 * _REAL["nvfp4"]:.1f}%：每 16 个数一个 E4M3 因子，一个离群通道只影响它所在的块。
        """,
    "q24_rotated_fp4_tensor_error": f"""
        H 正交，所以 (XH)(WH)ᵀ = XWᵀ；旋转把离群通道的能量摊到 `ROTATION_SIZE` 个通道上，整张量的 amax 变小，
        被舍入成 0 的数变少：讲义的参数（块大小 {ROTATION_SIZE}）下误差从 {100 * _REAL["fp4_tensor"]:.0f}% 降到
        {100 * _REAL["fp4_tensor rotated"]:.0f}%。
        """,
    "q25_rotation_nvfp4": f"""
        比较旋转前后 NVFP4 的误差（讲义的参数：{100 * _REAL["nvfp4"]:.2f}% → {100 * _REAL["nvfp4 rotated"]:.2f}%）。16 个数一块时
        离群值本来就被隔离了，旋转把它摊进同一个旋转块里的所有小块，让更多块的缩放因子变大；同时块内的分布变得更均匀。
        两种作用谁大取决于数据和旋转块的大小——你的那一块按自己量出的两个数作答（每位同学的那一块上，两个数至少差
        {variants.MARGINS["q25_rotation_nvfp4"]:g} 个百分点）。{_NV_BLOCK} 阶旋转只在一个 NVFP4 块里混合，更大的旋转块会跨块混合。
        {_RECIPE}。
        """,
    "q25w_online_rotation_width": f"""
        数一数两个单元上的活。快速 Walsh–Hadamard 变换：16 个数要 log2(16) = 4 级蝶形，每级 8 对、每对一加一减，
        共 16 × 4 = 64 个 FMA 管线的结果，每个数 4 个。B200 的 FMA 管线按 exp 吞吐的口径：
        {_sci(B200.exp_per_s)} ÷ {EX2_PER_SM_PER_CLK["Blackwell"]} × {FP32_FMA_PER_SM_PER_CLK["Blackwell"]} = {_sci(_FMA_PIPE)} 个结果/s。
        矩阵乘法：X 的每个数和 W 的 N 行各乘加一次，2N FLOP，在 Tensor Core 上以 NVFP4 峰值 × `ROTATION_GEMM_SHARE` 的速度算。
        每个数的时间之比 (4 / R_FMA) / (2N / (F·s)) ≤ 预算 b，M 和 K 两边都有、约掉，得 N ≥ 4·F·s / (2·R_FMA·b) =
        2·F·s / (R_FMA·b)。讲义的参数（预算 {_ROT_BUDGET:g}%，峰值的 {_ROT_SHARE:.0%}）：N ≥ {_KEY["q25w_online_rotation_width"]:,.0f}。
        Tensor Core 的 NVFP4 峰值约是 FMA 管线的 {B200.peak_flops("nvfp4") / _FMA_PIPE:.0f} 倍，每个数 4 次加减在这个倍数面前不是小数目：
        d_model = 4096 的投影要多花 {100 * 2 * B200.peak_flops("nvfp4") * _ROT_SHARE / (_FMA_PIPE * 4096):.0f}%。
        题目假设了旋转在 FMA 管线上做：按这个假设，把旋转的时间按 Tensor Core 的速度算（每个数 32 FLOP），得数差得很远；
        在 FMA 管线上按稠密矩阵数（每个数 16 次乘加、忘了 log2）会大 4 倍。
        另一种做法是设计上的取舍：同一个 16 × 16 旋转当作矩阵乘法交给 Tensor Core（用 BF16 算），运算多 8 倍，
        时间却只有 FMA 管线上快速变换的 {_ROT_AS_MATMUL:.0%}——决定代价的是慢的单元，而不是运算次数。
        NVIDIA 的 Transformer Engine 正是这样实现 NVFP4 训练里的 16 × 16 随机 Hadamard 变换的：把它和量化（cast）融合进一个
        kernel，变换本身作为小矩阵乘法在 Tensor Core 上做；那时旋转的代价主要是这个 kernel 读写数据的时间，而不是 FMA 管线。
        本题是简化：旋转要读写 X，和量化融合时这份读写本来就要做；没有算 FMA 管线发射的其他指令（取数、shuffle）。
        """,
    "q25x_wgrad_rotation_share": f"""
        沿求和的 token 维旋转，乘积要不变，两个输入都得旋转：(HᵀdY)ᵀ·(HᵀX) = dYᵀ·H·Hᵀ·X = dYᵀ·X。
        它们又都是这一步刚算出来的：dY 是 M × N，X 是 M × K，没有哪个能离线旋转好，两个都要在线旋转，
        共 M·(N + K) 个数，每个数 4 个 FMA 管线的结果（q25w 的计数）；矩阵乘法 2·M·N·K FLOP。M 约掉，比值
        = 4·(N + K) / R_FMA ÷ (2·N·K / (F·s)) = 2·F·s·(1/N + 1/K) / R_FMA。讲义的参数（Llama 3 8B 的 MLP 上投影，
        K = {variants.LECTURE["wgrad_layer"][0]}、N = {variants.LECTURE["wgrad_layer"][1]}，峰值的 {_ROT_SHARE:.0%}）：
        {_KEY["q25x_wgrad_rotation_share"]:.1f}%。和 q25w 不同，这里两个宽度都进来：窄的那一维决定代价，只算 X 的话少算了 dY 那一份。
        推理时（q25w）W 可以离线旋转好；训练里 W 每步都在变。NVIDIA 的方案只在 Wgrad 上旋转，理由是精度（在 Fprop、Dgrad
        上没看到收益），而它恰是代价最大的一处：两个输入都要在线旋转。在 FMA 管线上单独做，这个比例不可忽略：实现上把旋转和
        量化融合进一个 kernel，把 16 × 16 的小矩阵乘法交给 Tensor Core（q25w 的解释）。
        """,
    "q28a_triad_gb_per_s": """
        24 字节 × 元素个数 ÷ 中位数耗时 ÷ 10^9。评分机在同样的沙箱里、用同样的 `cpu_timing` 量同样的 triad（一批作业量一次），
        两者相差不超过 `AGREEMENT_FACTOR` 倍就算对。
        """,
    "q29_matmul_gflops": """
        每个边长 2·m³ FLOP ÷ 中位数耗时 ÷ 10^9，取最大的一个；和评分机同一次的参照测量比，相差不超过 `AGREEMENT_FACTOR` 倍。
        小矩阵每次调用的固定开销占比大；分块的 BLAS 在大一些的矩阵上通常能保持速率，所以取各边长的 GFLOP/s 里最大的那个作屋顶。
        """,
    "q29b_cpu_ridge": """
        ridge point = 算力屋顶 ÷ 带宽屋顶 = q29 × 10^9 FLOP/s ÷ (q28a × 10^9 B/s) = q29 / q28a FLOP/B；按你同一次运行的 q28a、q29 重算。
        """,
    "q29c_gemm_edge_at_ridge": """
        m × m 的矩阵乘法做 2·m³ FLOP。它最少要搬的：A、B 各读一次，C 只写一次（`out=c`，不用先读），共 3·m² 个 float32，
        12·m² 字节。强度 = 2m³ / 12m² = m / 6 FLOP/B，随边长线性增长；到达 ridge point q29b 时 m = 6 × q29b。
        按你同一次运行的 q28a、q29 重算。单线程的 ridge point 通常只有几到十几 FLOP/B，边长几十到一百来就够得着算力屋顶，
        `GEMM_SIZES` 里大的边长都在它右边；可 q29 的扫描里小矩阵常常仍然慢：roofline 只给上界，每次调用的固定开销、打包和分块的
        效率都不在图里。反过来，m / 6 要求每个数只搬一次，这要靠缓存装得下分块；缓存装不下、同一块要反复从内存读时，实际强度比
        m / 6 低。
        """,
    "q28p_exp_if_memory_bound": f"""
        q28a 按 STREAM 的约定每个元素记 {_TRIAD_COUNTED} 字节，可 numpy 分两步算（先 a = 3·c，再 a += b），实际搬了 {_TRIAD_MOVED} 字节：
        numpy 实际用到的带宽是 q28a × {_TRIAD_MOVED}/{_TRIAD_COUNTED}。exp 每个数读 4 字节、写 4 字节：
        8 B ÷ (q28a × {_TRIAD_MOVED}/{_TRIAD_COUNTED} GB/s) = {8 * _TRIAD_COUNTED / _TRIAD_MOVED:g} / q28a 纳秒（GB/s 就是字节每纳秒）。按你同一次运行的 q28a 重算。
        """,
    "q28_exp_ns_per_value": """
        中位数耗时 ÷ 个数 × 10^9；和评分机同一次的参照测量比，相差不超过 `AGREEMENT_FACTOR` 倍。
        """,
    "q28g_exp_vs_memory": f"""
        q28 ÷ q28p，按你同一次运行的数重算。q28p 已经按 numpy 的 triad 实际用到的带宽算（q28a 的 {_TRIAD_MOVED}/{_TRIAD_COUNTED} 倍），
        所以真正受内存限制的 exp，q28g 约 1（写入前先把缓存行读进来的机器上，exp 和 triad 都多搬一些，约
        {_TRIAD_MOVED / (_TRIAD_MOVED + 8) * 12 / 8:.2f}）；明显大于这个数，exp 受计算限制。哪一种取决于机器（向量宽度、内存），两种都可能。
        """,
    "q28f_fmas_per_exp": """
        一次 FMA 是 2 FLOP：矩阵乘法每纳秒做 q29 / 2 次 FMA，一次 exp 要 q28 纳秒，所以约 q28 × q29 / 2 次 FMA。
        CPU 上 exp 和矩阵乘法共用向量单元，这个数就是"算一次 exp 少做多少次乘加"；GPU 的 exp 在单独的 SFU 上，不占 Tensor Core。
        q28 量的是内存里的大数组：exp 受内存限制时（q28g 约 1），这个时间里有一部分是搬数据，分数在寄存器或缓存里时算一次 exp
        要快一些；q30–q32 用的也是这个数，所以它们给的是 exp 代价的上界。
        """,
    "q30_exp_share_64": f"""
        CPU 没有单独的 exp 单元：exp 和矩阵乘法在同一组向量单元上轮流算（q28f），不能像 GPU 的 SFU 和 Tensor Core 那样同时忙，
        一个分数的时间是两者之和（演示 3 的"完全串行"）。t_exp = q28 纳秒，t_mma = `flops_per_exp(64, 64)` FLOP ÷ q29 GFLOP/s
        = {flops_per_exp(64, 64)} / q29 纳秒：exp 的份额 = t_exp / (t_exp + t_mma) × 100%。按完全重叠算的 t_exp / t_mma 是另一个数，不是时间的份额。
        评分时按你同一次运行的 q28、q29 重算，对得上才算对。
        """,
    "q31_exp_share_128": f"""
        同上，`flops_per_exp(128, 128)` = {flops_per_exp(128, 128)}：t_mma 翻倍，exp 的份额变小（不是减半：分母里还有 t_exp）。
        """,
    "q32_vs_b300": f"""
        你的 CPU 在 d = 128 上的 t_exp / t_mma = q28 ÷ ({flops_per_exp(128, 128)} / q29)，再除以 `exp_ratio(B300, "fp8", 128, 128)`
        （{exp_ratio(B300, "fp8", _D, _D):.0%}）：同样按你同一次运行的 q28、q29 重算。
        它比 1 大还是小取决于机器：BLAS 的线程数（评分机的沙箱里只用一个线程）、np.exp 写进新分配的数组还是预先分配的缓冲区，
        都能让 q28、q29 差好几倍。和 GPU 的区别在结构：CPU 没有单独的 exp 单元，exp 和矩阵乘法在同一组核心的向量单元上轮流算；
        GPU 上 exp 在 SFU、矩阵乘法在 Tensor Core，两个单元的相对速度才是演示 3 的比值。
        """,
}


def rubric_markdown(item: str, *, with_expectations: bool) -> str:
    """The criteria of a text question with their points; with what a full answer says, for the solutions."""
    lines = [f"评分标准（共 {sum(c.points for c in RUBRICS[item])} 分）："]
    for c in RUBRICS[item]:
        lines.append(f"- （{c.points} 分）{c.asks}" + (f"：{c.expects}" if with_expectations else ""))
    return "\n".join(lines)


EXPLANATIONS.update({item: rubric_markdown(item, with_expectations=True) for item in RUBRICS})


def _encoder_shape() -> tuple[dict[str, tuple[int, int]], int, int]:
    """The shipped encoder's linear layers, as its explanations state them: each kind's weight shape
    (output × input), the number of layers and of linear layers."""
    from solutions.lec01_codesign.answers import ENCODER
    from solutions.lec01_codesign.encoder import LINEAR_LAYERS, load_encoder

    model = load_encoder(ENCODER)[0]
    names = [name for name in model if name.endswith(".w") and name.split(".")[1] in LINEAR_LAYERS]
    shape = {name.split(".")[1]: model[name].shape for name in names}
    return shape, len({name.split(".")[0] for name in names}), len(names)


# "almost all": the share of a layer's weights per-tensor FP4 turns into 0 at or above which the texts say so
ALMOST_ALL_ZERO = 0.99


def fp4_weight_zeros() -> tuple[float, int]:
    """Per-tensor FP4 on the encoder's 36 linear layers: the share of all their weights it turns into 0, and
    how many layers it turns almost entirely (ALMOST_ALL_ZERO) into 0 (all of them FFN output layers)."""
    from solutions.lec01_codesign.answers import end_weight_zero_shares

    shares = end_weight_zero_shares("fp4_tensor")
    overall = sum(share * size for share, size in shares.values()) / sum(size for _, size in shares.values())
    almost_all = [name for name, (share, _) in shares.items() if share >= ALMOST_ALL_ZERO]
    assert all(name.split(".")[1] == "ffn_out" for name in almost_all), almost_all
    return overall, len(almost_all)


def _end_to_end_explanations() -> dict[str, str]:
    """q34a–q35m: the figures of the whole encoder (the same for everyone) and the lecture's tile."""
    from solutions.lec01_codesign.answers import (END_UNIT, end_exact_prediction, end_prediction, end_tile_errors, end_to_end,
                                                  nvfp4_weight_mb)

    from solutions.lec01_codesign.real_tensors import SENTENCE_PAIRS

    end, tile, predicted = end_to_end(), end_tile_errors(), END_UNIT * end_prediction()
    shape, layers, linear = _encoder_shape()
    bits = format_bits(_NV_BLOCK)
    scale_bits = round(8 * BYTES_PER_ELEM["fp8"])           # NVFP4's block scale is an FP8 (E4M3) number
    element_bits = round(bits - scale_bits / _NV_BLOCK)     # the E2M1 element
    fp32_bits = round(8 * BYTES_PER_ELEM["fp32"])
    _COMPARISONS = len(SENTENCE_PAIRS) * (len(SENTENCE_PAIRS) - 1) // 2  # two pairs compared: which is more similar
    deficit = {name: END_UNIT * row["deficit"] for name, row in end.items()}
    fp4_predicted, h16_predicted = (END_UNIT * end_prediction(None, name) for name in ("fp4_tensor", "nvfp4 + H16"))
    fp4_exact = END_UNIT * end_exact_prediction(None, "fp4_tensor")  # the same model without the small-error approximation
    zeros, all_zero = fp4_weight_zeros()
    return {
        "q34a_fp8_end_deficit": f"""
            `end_deficit(end_embeddings["fp8_tensor"], end_embeddings["fp32"])` × 10^4 = {deficit["fp8_tensor"]:.1f}：
            余弦约 {1 - deficit["fp8_tensor"] / END_UNIT:.4f}。{linear} 个线性层、两个操作数都是 FP8，句向量几乎不动。
            每位同学的模型和句子相同，这一题的数也相同。
            """,
        "q34p_nvfp4_end_prediction": f"""
            句向量 e 加上一个方向随机的误差 n（高维里几乎和 e 垂直），|n| / |e| = r：cos = 1 / √(1 + r²) ≈ 1 − r²/2。
            r 和张量误差成正比，所以 1 − cos 和张量误差的**平方**成正比：预测 = q34a × (NVFP4 的张量误差 ÷ FP8 的张量误差)²。
            讲义的那一块：{deficit["fp8_tensor"]:.1f} × ({tile["nvfp4"]:.2%} ÷ {tile["fp8_tensor"]:.2%})² = {predicted:.0f}。
            按张量误差本身（不平方）去比，会把 NVFP4 的效果低估几倍（讲义的那一块：测量是这种预测的
            {deficit["nvfp4"] / (deficit["fp8_tensor"] * tile["nvfp4"] / tile["fp8_tensor"]):.1f} 倍）。
            """,
        "q34b_nvfp4_end_deficit": f"""
            `end_deficits["nvfp4"]` × 10^4 = {deficit["nvfp4"]:.0f}（每位同学相同）；讲义的那一块预测 {predicted:.0f}：
            测量是预测的 {deficit["nvfp4"] / predicted:.2f} 倍。
            在讲义的那一块上，"误差的平方"这个模型只用 FP8 一个点定标，就把 NVFP4 的端到端效果估到了两倍以内：
            对小的误差，一块 Y 的张量误差是端到端效果的一个不错的代理。差距在两头：整张量 FP4 测出 {deficit["fp4_tensor"]:.0f}，模型给
            {fp4_predicted:.0f}；不用 r²/2 这个近似、按 1 − 1/√(1 + r²) 精确地算，预测只有 {fp4_exact:.0f}，更小：近似解释不了
            测量比预测大。误差本来就不是"一个方向随机的小扰动"：它在 {linear} 个线性层里逐层叠加，经过残差和 LayerNorm 传下去；
            整张量 FP4 还把这些层的权重里 {zeros:.0%} 的数变成 0（{all_zero} 个 FFN 输出层几乎全部），这是有结构的误差，不是随机的。
            先旋转再 NVFP4 测出 {deficit["nvfp4 + H16"]:.0f}，比讲义那一块的张量误差（{tile["nvfp4 + H16"]:.2%}，
            NVFP4 是 {tile["nvfp4"]:.2%}）推出的更差：一块 Y 只代表一层里的一个投影，其他 35 个线性层（FFN 的 1536 维输入、
            别的层的离群通道）各不相同。你的那一块不同，倍数也不同。
            """,
        "q35p_fp4_end_prediction": f"""
            和 q34p 同一个模型，换成整张量 FP4 的张量误差：预测的倍数 = (整张量 FP4 的张量误差 ÷ FP8 的张量误差)²。
            讲义的那一块：({tile["fp4_tensor"]:.2%} ÷ {tile["fp8_tensor"]:.2%})² = {fp4_predicted / deficit["fp8_tensor"]:.0f}。
            """,
        "q34r_h16_end_prediction": f"""
            同一个模型，换成先旋转再 NVFP4 在你那一块上的张量误差：预测的倍数 = (它的张量误差 ÷ FP8 的张量误差)²。
            讲义的那一块：({tile["nvfp4 + H16"]:.2%} ÷ {tile["fp8_tensor"]:.2%})² = {h16_predicted / deficit["fp8_tensor"]:.0f}。
            """,
        "q35g_fp4_end_over_fp8": f"""
            `end_deficits["fp4_tensor"] / end_deficits["fp8_tensor"]` = {deficit["fp4_tensor"]:.0f} ÷ {deficit["fp8_tensor"]:.1f}
            = {deficit["fp4_tensor"] / deficit["fp8_tensor"]:.0f}（每位同学相同）。讲义的那一块预测 {fp4_predicted / deficit["fp8_tensor"]:.0f} 倍，
            测量是预测的 {deficit["fp4_tensor"] / fp4_predicted:.2f} 倍：模型{"低估" if deficit["fp4_tensor"] > fp4_predicted else "高估"}了效果。
            这不怪 cos ≈ 1 − r²/2 这个近似：同一个模型按 1 − 1/√(1 + r²) 精确地算（r² = 2 × 预测的 1 − cos），预测只会更小
            （讲义的那一块：{fp4_exact / END_UNIT:.3f}，近似给 {fp4_predicted / END_UNIT:.3f}，测量 {deficit["fp4_tensor"] / END_UNIT:.3f}）。
            差在模型的前提：误差不是"一个方向随机的小误差"。整张量 FP4 把 {linear} 个线性层的权重里 {zeros:.0%} 的数变成 0
            （{all_zero} 个 FFN 输出层几乎全部），是有结构的误差；它在 {layers} 层里逐层叠加，经过残差和 LayerNorm 传下去，
            句向量的方向都变了（余弦只剩约 {1 - deficit["fp4_tensor"] / END_UNIT:.2f}）。
            """,
        "q34h_h16_end_over_fp8": f"""
            `end_deficits["nvfp4 + H16"] / end_deficits["fp8_tensor"]` = {deficit["nvfp4 + H16"]:.0f} ÷ {deficit["fp8_tensor"]:.1f}
            = {deficit["nvfp4 + H16"] / deficit["fp8_tensor"]:.1f}（每位同学相同）。讲义的那一块预测 {h16_predicted / deficit["fp8_tensor"]:.1f} 倍，
            测量是预测的 {deficit["nvfp4 + H16"] / h16_predicted:.2f} 倍。旋转在一块 Y 上的效果不代表整个模型：一块只是 {linear} 个线性层里一个投影的一小块，
            其他层（FFN 的 {shape["ffn_in"][0]} 维输入、别的层的离群通道）各不相同。你的那一块不同，倍数也不同，哪个方向都可能。
            """,
        "q35_fp4_rank_agreement": f"""
            整张量 FP4 的 1 − cos 约 {deficit["fp4_tensor"] / END_UNIT:.2f}（余弦只剩约 {1 - deficit["fp4_tensor"] / END_UNIT:.2f}），
            可 {_COMPARISONS} 组"两对比先后"里仍有 {100 * end["fp4_tensor"]["agreement"]:.0f}% 和 FP32 一致：
            排序只要求相对的先后，所有句向量一起偏向同一个方向时，相似度整体抬高，先后却大多保留。
            只在乎排序的任务比句向量本身耐受得多——但这里只有 {len(SENTENCE_PAIRS)} 对句子，一组先后就是 {100 / _COMPARISONS:.1f} 个百分点。
            """,
        "q35m_nvfp4_weight_mb": f"""
            每层 query、key、value、注意力输出各 {shape["query"][1]} × {shape["query"][0]}，FFN 的两层各 {shape["ffn_in"][1]} × {shape["ffn_in"][0]}：{layers} 层一共
            {nvfp4_weight_mb() * 8 / bits * 1e6:,.0f} 个权重。NVFP4 每个数 {element_bits} + {scale_bits} / {_NV_BLOCK} = {bits:g} bit：{nvfp4_weight_mb():.2f} MB
            （FP32 是它的 {fp32_bits} / {bits:g} ≈ {fp32_bits / bits:.1f} 倍）。
            """,
    }


EXPLANATIONS.update(_end_to_end_explanations())


_FP4_WEIGHT_ZEROS = fp4_weight_zeros()
_LINEAR = _encoder_shape()[2]
RUBRICS["q36_explain_end_to_end"] = (
    Criterion(1, "张量误差能不能预测端到端效果（引用 q34a、q34p、q34b 和表里的几种格式）",
              "说出预测用的模型（误差向量方向随机、长度和张量误差成正比，1 − cos ≈ r²/2，所以按张量误差的平方推算），"
              "按自己的 q34b ÷ q34p 说 NVFP4 的预测准不准；再看表里的其他格式：整张量 FP4 测出的比预测大得多，"
              "原因不在 r²/2 这个近似（精确的 1 − 1/√(1 + r²) 给得更小），而在误差不是一个方向随机的小扰动：它在 "
              f"{_LINEAR} 个线性层里逐层叠加，经过残差和 LayerNorm；整张量 FP4 还把约 {_FP4_WEIGHT_ZEROS[0]:.0%} 的权重变成 0（{_FP4_WEIGHT_ZEROS[1]} 个 FFN "
              "输出层几乎全部），是有结构的误差。旋转在一块上的效果不一定代表整个模型。"),
    Criterion(1, "差距说明了什么（引用 q35）",
              f"一块 Y 只是 {_LINEAR} 个线性层里的一个投影的一小块：离群通道、FFN 的宽输入、误差在残差和 LayerNorm 里的传递都不在里面；"
              "评价量化要看端到端的指标，而且要看任务在乎什么：整张量 FP4 的余弦已经很低，句子对的排序一致率却仍然不低"
              "（句子太少，一组先后就是好几个百分点）。"),
)
EXPLANATIONS["q36_explain_end_to_end"] = rubric_markdown("q36_explain_end_to_end", with_expectations=True)
