#!/usr/bin/env python3
"""Writes a tiny Hugging Face GPT-2 folder that reads any text: GPT-2's byte-level alphabet as its 256 tokens (no
merges), 2 layers of 2 heads, n_embd 8, 64 positions, float32 weights drawn from a fixed seed. For window tests that
type into the Real model view; no download, no npm. With --real-width: one layer of 12 heads at GPT-2 small's width
(n_embd 768, head_dim 64, 28 MB), for captures of the pipeline on a head at the real shapes.

Usage: byte_gpt2_folder.py DIR [--real-width]
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crosscheck"))
from checkpoint_crosscheck import BYTE_CHAR  # noqa: E402

POSITIONS = 64
TINY = {"layers": 2, "heads": 2, "width": 8, "scale": 0.5}
REAL_WIDTH = {"layers": 1, "heads": 12, "width": 768, "scale": 0.02}


def byte_alphabet():
    """GPT-2's printable stand-in for each byte, as the checkpoint cross-check writes it."""
    return [BYTE_CHAR[b] for b in range(256)]


def tensors(rng, shape):
    D = shape["width"]
    t = {"wte.weight": (256, D), "wpe.weight": (POSITIONS, D), "ln_f.weight": (D,), "ln_f.bias": (D,)}
    for l in range(shape["layers"]):
        p = "h.%d." % l
        t.update({p + "ln_1.weight": (D,), p + "ln_1.bias": (D,), p + "ln_2.weight": (D,), p + "ln_2.bias": (D,),
                  p + "attn.c_attn.weight": (D, 3 * D), p + "attn.c_attn.bias": (3 * D,),
                  p + "attn.c_proj.weight": (D, D), p + "attn.c_proj.bias": (D,),
                  p + "mlp.c_fc.weight": (D, 4 * D), p + "mlp.c_fc.bias": (4 * D,),
                  p + "mlp.c_proj.weight": (4 * D, D), p + "mlp.c_proj.bias": (D,)})
    out, scale = {}, shape["scale"]
    for name, size in t.items():
        gain = name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight"
        out[name] = np.ones(size, np.float32) if gain else (rng.standard_normal(size) * scale).astype(np.float32)
    return out


def write_safetensors(path, named):
    header, at, blobs = {}, 0, []
    for name, a in named.items():
        blob = a.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + len(blob)]}
        at += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--real-width", action="store_true", help="one layer of 12 heads at n_embd 768")
    args = parser.parse_args()
    folder, shape = args.folder, REAL_WIDTH if args.real_width else TINY
    os.makedirs(folder, exist_ok=True)
    config = {"model_type": "gpt2", "n_embd": shape["width"], "n_head": shape["heads"], "n_layer": shape["layers"],
              "n_positions": POSITIONS, "vocab_size": 256}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump({c: i for i, c in enumerate(byte_alphabet())}, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n")
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors(np.random.default_rng(7), shape))


if __name__ == "__main__":
    main()
