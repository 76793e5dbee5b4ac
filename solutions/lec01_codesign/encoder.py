"""The end-to-end lab's model: a numpy forward pass of all six encoder layers of all-MiniLM-L6-v2
(assignments/lec01_codesign/minilm_encoder.npz, written by tools/extract_real_tensors.py), and the
measures of a quantized forward's end effect. The notebook shows these functions with their source
(the build copies them with `inspect.getsource`), so the student's forward and the answer key run
the very same arithmetic; in the notebook `quantize_matrix` calls the student's own `quantize`.
"""

from __future__ import annotations

import numpy as np

from solutions.lec01_codesign.handout_data import block_hadamard, quantize_matrix

ENCODER_FILE = "minilm_encoder.npz"
HEADS = 12  # all-MiniLM-L6-v2: 12 heads of 32 channels in a hidden size of 384
ROTATION_BLOCK = 16  # the rotation before NVFP4 mixes values only inside one NVFP4 block
LINEAR_LAYERS = ("query", "key", "value", "attention_out", "ffn_in", "ffn_out")
# The end-to-end table: name -> (quantize's scheme or None for FP32, rotate before quantizing). Each
# format quantizes all 10.6 M weights once, the bulk of the lab's time in every grading: four formats,
# each with a job (FP8 calibrates q34p, NVFP4 verifies it, per-tensor FP4 is q35, H16 the rotation);
# MXFP4 lies between the two FP4s and stays in the tile tables.
END_FORMATS = {"fp32": (None, False), "fp8_tensor": ("fp8_tensor", False), "fp4_tensor": ("fp4_tensor", False),
               "nvfp4": ("nvfp4", False), "nvfp4 + H16": ("nvfp4", True)}


def load_encoder(path=ENCODER_FILE):
    """all-MiniLM-L6-v2 的全部六层（权重按 float16 存储，读成 float32）、分好词的句子和句子对。
    返回 (模型, 句子, 句子对, 出处)：模型是 名字 -> 数组 的字典，句子对是 (对数, 2) 的句子下标。"""
    import json

    with np.load(path) as data:
        model = {name: data[name].astype(np.float32) for name in data.files
                 if name.startswith(("emb.", "layer"))}
        model["token_ids"], model["lengths"] = data["token_ids"].astype(np.int64), data["lengths"].astype(np.int64)
        return model, json.loads(str(data["sentences"])), data["pairs"].astype(np.int64), json.loads(str(data["provenance"]))


def rotate16(a):
    """每一行按相邻 16 个数一组乘以 16 阶归一化 Hadamard 矩阵：等于 a @ block_hadamard(K, 16)，但不构造 K × K 的矩阵。"""
    h = block_hadamard(ROTATION_BLOCK, ROTATION_BLOCK)
    return (np.reshape(a, (-1, ROTATION_BLOCK)) @ h).reshape(np.shape(a))


def linear_weights(model, scheme=None, rotate=False):
    """每个线性层的权重 W（输出 × 输入）各处理一次：rotate 时先旋转（W·H），scheme 不是 None 时再用 quantize_matrix 量化。"""
    weights = {}
    for name, w in model.items():
        if name.endswith(".w") and name.split(".")[1] in LINEAR_LAYERS:
            w = rotate16(w) if rotate else w
            weights[name] = np.asarray(w if scheme is None else quantize_matrix(w, scheme), dtype=np.float32)
    return weights


def layer_norm(x, w, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = np.square(x - mean).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def gelu(x):
    """GELU 的精确形式 x·Φ(x)；erf 用 Abramowitz–Stegun 7.1.26 的多项式（绝对误差 < 1.5e-7）。"""
    z = np.abs(x) / np.sqrt(2)
    t = 1 / (1 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return 0.5 * x * (1 + np.sign(x) * (1 - poly * np.exp(-z * z)))


def encode(model, weights, scheme=None, rotate=False):
    """每个句子的句向量（一行一句，长度为 1）：BERT 的六层编码器，再对每句的 token 取平均、归一化。
    weights 是 linear_weights(model, scheme, rotate) 的结果；每个线性层 y = x·Wᵀ + b 的输入 x 也一样处理：
    rotate 时先旋转（(xH)(WH)ᵀ = xWᵀ），scheme 不是 None 时再量化（所有句子的 token 合成一个张量）。按 FP32 相乘。"""
    ids, lengths = model["token_ids"], model["lengths"]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    positions = np.concatenate([np.arange(n) for n in lengths])
    x = layer_norm(model["emb.words"][ids] + model["emb.positions"][positions] + model["emb.type"],
                   model["emb.norm.w"], model["emb.norm.b"])

    def operand(a):  # 一个线性层的输入：旋转、量化
        a = rotate16(a) if rotate else a
        return np.asarray(a if scheme is None else quantize_matrix(a, scheme), dtype=np.float32)

    def linear(a, name):  # a 已经处理过
        return a @ weights[name + ".w"].T + model[name + ".b"]

    d = x.shape[1] // HEADS
    for layer in range(sum(name.endswith(".query.w") for name in model)):
        p = f"layer{layer}."
        a = operand(x)
        q, k, v = (linear(a, p + name) for name in ("query", "key", "value"))
        context = np.empty_like(x)
        for s, e in zip(starts[:-1], starts[1:]):  # 注意力只在同一句的 token 之间
            qs, ks, vs = (t[s:e].reshape(e - s, HEADS, d).transpose(1, 0, 2) for t in (q, k, v))
            scores = qs @ ks.transpose(0, 2, 1) / np.float32(np.sqrt(d))
            p_attn = np.exp(scores - scores.max(axis=-1, keepdims=True))
            p_attn /= p_attn.sum(axis=-1, keepdims=True)
            context[s:e] = (p_attn @ vs).transpose(1, 0, 2).reshape(e - s, -1)
        x = layer_norm(x + linear(operand(context), p + "attention_out"), model[p + "norm1.w"], model[p + "norm1.b"])
        h = gelu(linear(operand(x), p + "ffn_in"))
        x = layer_norm(x + linear(operand(h), p + "ffn_out"), model[p + "norm2.w"], model[p + "norm2.b"])
    pooled = np.stack([x[s:e].mean(axis=0) for s, e in zip(starts[:-1], starts[1:])]).astype(np.float64)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def end_deficit(e, e_ref):
    """端到端效果：每句的句向量和 FP32 句向量的余弦 cos，1 − cos 的平均（两者都已归一化）。"""
    return float(np.mean(1 - np.sum(e * e_ref, axis=1)))


def pair_similarities(e, pairs):
    """每个句子对的两个句向量的余弦相似度。"""
    return np.sum(e[pairs[:, 0]] * e[pairs[:, 1]], axis=1)


def rank_agreement(s, s_ref):
    """句子对排序的一致率：任取两对，按 s 和按 s_ref 排出的先后相同的比例（Kendall 的一致对比例）。"""
    i, j = np.triu_indices(len(s), 1)
    return float(np.mean(np.sign(s[i] - s[j]) == np.sign(s_ref[i] - s_ref[j])))
