#!/usr/bin/python3
"""Independent check of the folders `attention-lab convert FOLDER ... --out DIR` writes.

Why this exists: kv_conversion_crosscheck.py checks the numbers `convert` prints; this one checks
the converted model it writes to disk, read back byte by byte with a safetensors parser of its own
and rebuilt in NumPy from the spec alone (docs/FORMATS.md "Converted model folders", docs/CLI.md
"convert"), never from the C++ sources:

  model.json   {"format": "attention-lab converted model", "source": {"name", "config"},
               "converted_layers": [{"layer", "to", "kv_heads" | "latent_dim"}, ...]}: exactly these
               keys, source.config the source's config.json as a JSON value (the original's after a
               second conversion), one entry per converted layer in ascending order (a second
               conversion keeps the first's entries).
  model.safetensors  every source tensor under its own name with the same dtype, shape and bytes
               (mask buffers and tensors of other shards included), and per converted layer L
               attention_lab.layers.L.{W_K, W_V} (gqa, (d_model, G d)) or {W_DKV (d_model, C),
               W_UK, W_UV (C, H d)} (mla), with b_K, b_V (G d for gqa, H d for mla) exactly when
               the source has key/value biases; nothing else.
      gqa: column block g of W_K (and W_V, b_K, b_V) = the mean of the source's key/value heads
               g G0/G .. (g+1) G0/G - 1 (computed here exactly, with fractions, and rounded once).
      mla: A = [W_K | W_V] (d_model x 2 G0 d, the lab's x W layout) = U S V^T (numpy.linalg.svd),
               each column of U (and row of V^T) signed so its entry of largest magnitude (the
               first of equal ones) is positive; W_DKV = U_C S_C; [W_UK | W_UV] = V^T_C with query
               head j's block from key/value head floor(j / (H/G0)); b_K, b_V the source's,
               expanded the same way.  SVD factors to 1e-9 relative (max |diff| / max |expected|),
               everything else bit for bit.
      dtype: each new tensor in the narrowest of BF16, F32, F64 that holds every one of its numbers
               exactly: checked on the exact values computed here (gqa, biases) and on the lab's own
               stored values (SVD factors), whose bytes must also re-encode to themselves.
  other files  no config.json; the source's tokenizer.json, vocab.json, merges.txt,
               tokenizer_config.json, special_tokens_map.json, generation_config.json that exist,
               byte for byte, and nothing else (no README, no shard, no index).

Round trip: `eval OUT --text-file T --json` must give the converted loss `convert ... --eval T
--json` printed (1e-12 relative), the tokens/windows/predicted of `eval SOURCE`, and the loss of a
float64 forward pass (checkpoint_crosscheck.forward, windows and loss from
kv_conversion_crosscheck) on OUT's tensors read as the spec says (1e-9): each layer's keys and
values rebuilt per query head (gqa: head j reads new head floor(j / (H/G)); mla: x W_DKV W_UK + b_K,
the RoPE turning the keys after the up-projection).

`run OUT --text T --json`: its logits and every layer's every head's attention weights against the
same forward pass (1e-9).

Refusals (exit 2, nothing on stdout, a message naming --out, no hidden .DIR.partial-* folder left):
--out a folder holding a file (the file untouched), an existing regular file, a folder under a
missing parent, and --out with --ladder.  An existing empty folder is accepted.

Folders (in --work): gpt2 (F32, E 16, 4 heads, learned positions, c_attn q|k|v with bias, the mask
buffers, tokenizer as vocab.json + merges.txt with tokenizer_config.json, special_tokens_map.json,
generation_config.json and a README.md that is not to be copied), qwen2 (BF16 and F16 weights in
two shards with an index, GQA 8 heads / 4 kv, q/k/v biases, 3 layers, tokenizer.json), llama (F32,
GQA 4 / 2 kv, head_dim 8 so that d_model 16 < 2 G0 d 32, no biases, tokenizer.json).

Run:  /usr/bin/python3 converted_folder_crosscheck.py --binary build/app/attention-lab \\
          --work build/tests/converted_folder_crosscheck

Exit status: 0 all agree, 1 a mismatch, 2 the binary cannot be run.
"""

import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time
from fractions import Fraction

import numpy as np
import torch

import checkpoint_crosscheck as ck
import kv_conversion_crosscheck as kv

LAB_TIMEOUT = 30
FACTOR_TOLERANCE = 1e-9   # SVD factors: max |found - expected| <= this x max |expected|
LOSS_TOLERANCE = 1e-9     # our forward pass against the lab
ROUND_TRIP = 1e-12        # eval OUT against convert --eval, relative
FORMAT = "attention-lab converted model"
RUN_TEXT = "the cat sat on the mat, and then the dog ran."
TOKENIZER_FILES = ["tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json",
                   "special_tokens_map.json", "generation_config.json"]

# ---------------------------------------------------------------------------------------------
# safetensors: a reader of our own.

DTYPE_SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}


class Tensor:
    def __init__(self, dtype, shape, raw):
        self.dtype, self.shape, self.raw = dtype, tuple(shape), raw

    def values(self):
        return ck.decode_tensor(self.dtype, self.shape, self.raw)


def no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError("the name %r appears twice" % key)
        out[key] = value
    return out


def read_safetensors(path):
    """{name: Tensor}: an 8-byte little-endian header length, a JSON object (no name twice, every
    entry with a known dtype, a whole-number shape and offsets matching dtype x shape), then the
    data, covered without gap or overlap to the end of the file. Raises ValueError otherwise."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError("%s: shorter than 8 bytes" % path)
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ValueError("%s: header length %d past the end of the file" % (path, n))
    header = json.loads(data[8:8 + n].decode("utf-8"), object_pairs_hook=no_duplicates)
    if not isinstance(header, dict):
        raise ValueError("%s: the header is not a JSON object" % path)
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and
                                     all(isinstance(v, str) for v in metadata.values())):
        raise ValueError("%s: __metadata__ is not a map of strings" % path)
    buffer = data[8 + n:]
    spans = []
    for name, h in header.items():
        if set(h) != {"dtype", "shape", "data_offsets"}:
            raise ValueError("%s: %s: keys %s" % (path, name, sorted(h)))
        if h["dtype"] not in DTYPE_SIZE:
            raise ValueError("%s: %s: dtype %r" % (path, name, h["dtype"]))
        shape = h["shape"]
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ValueError("%s: %s: shape %r" % (path, name, shape))
        begin, end = h["data_offsets"]
        if end - begin != math.prod(shape) * DTYPE_SIZE[h["dtype"]]:
            raise ValueError("%s: %s: offsets %r for %s %r" % (path, name, h["data_offsets"],
                                                                h["dtype"], shape))
        spans.append((begin, end, name))
    position = 0
    for begin, end, name in sorted(spans):
        if begin != position:
            raise ValueError("%s: a gap or an overlap before %s" % (path, name))
        position = end
    if position != len(buffer):
        raise ValueError("%s: the tensors end at %d of %d data bytes" % (path, position,
                                                                        len(buffer)))
    return {name: Tensor(h["dtype"], h["shape"], buffer[h["data_offsets"][0]:
                                                         h["data_offsets"][1]])
            for name, h in header.items()}


def encode(values, dtype):
    """float64 values that the dtype holds exactly -> its bytes (no rounding needed)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if dtype == "F64":
        return values.astype("<f8").tobytes()
    if dtype == "F32":
        return values.astype("<f4").tobytes()
    if dtype == "F16":
        return values.astype("<f2").tobytes()
    if dtype == "BF16":
        return (values.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
    raise ValueError(dtype)


def holds(values, dtype):
    """Whether every number of values (float64) is exactly a number of dtype."""
    values = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        return dtype == "F64"
    if dtype == "F64":
        return True
    with np.errstate(over="ignore"):
        f32 = values.astype(np.float32)
    if not np.all(np.isfinite(f32)) or not np.array_equal(f32.astype(np.float64), values):
        return False
    if dtype == "F32":
        return True
    assert dtype == "BF16"
    return bool(np.all((f32.view(np.uint32) & 0xFFFF) == 0))


def narrowest(values):
    for dtype in ("BF16", "F32", "F64"):
        if holds(values, dtype):
            return dtype


# ---------------------------------------------------------------------------------------------
# Tiny Hugging Face folders.


class Source:
    """A folder written here: config, tensors {name: (values, dtype)}, extra files {name: bytes},
    shards None (one model.safetensors) or [set of names, ...]."""

    def __init__(self, name, config, tensors, files, shards=None, style="gpt2", note=""):
        self.name, self.config, self.tensors, self.files = name, config, tensors, files
        self.shards, self.style, self.note = shards, style, note
        self.path = None
        self.model_name = None   # as `eval FOLDER --json` names it


def json_bytes(obj):
    return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def gpt2_source(seed):
    """GPT-2, F32, E 16, 4 heads of 4, 2 layers, tied, the mask buffers; the tokenizer as GPT-2
    ships it (vocab.json + merges.txt) with its three small JSON files and a README (not a file
    the converted folder takes)."""
    rng = np.random.default_rng(seed)
    e, heads, layers, positions = 16, 4, 2, 64
    tok = ck.tokenizer_json("gpt2")
    vocab = tok["model"]["vocab"]
    t = {"wte.weight": ck.normal(rng, (len(vocab), e), 0.5),
         "wpe.weight": ck.normal(rng, (positions, e), 0.3)}
    for n in range(layers):
        p = "h.%d." % n
        for ln in ("ln_1", "ln_2"):
            t[p + ln + ".weight"] = 1 + ck.normal(rng, (e,), 0.2)
            t[p + ln + ".bias"] = ck.normal(rng, (e,), 0.1)
        t[p + "attn.c_attn.weight"] = ck.normal(rng, (e, 3 * e), 0.3)
        t[p + "attn.c_attn.bias"] = ck.normal(rng, (3 * e,), 0.1)
        t[p + "attn.c_proj.weight"] = ck.normal(rng, (e, e), 0.2)
        t[p + "attn.c_proj.bias"] = ck.normal(rng, (e,), 0.1)
        t[p + "mlp.c_fc.weight"] = ck.normal(rng, (e, 4 * e), 0.3)
        t[p + "mlp.c_fc.bias"] = ck.normal(rng, (4 * e,), 0.1)
        t[p + "mlp.c_proj.weight"] = ck.normal(rng, (4 * e, e), 0.2)
        t[p + "mlp.c_proj.bias"] = ck.normal(rng, (e,), 0.1)
        t[p + "attn.bias"] = np.tril(np.ones((positions, positions))).reshape(
            1, 1, positions, positions)
        t[p + "attn.masked_bias"] = np.array(-1e4)
    t["ln_f.weight"] = 1 + ck.normal(rng, (e,), 0.2)
    t["ln_f.bias"] = ck.normal(rng, (e,), 0.1)
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": e,
              "n_head": heads, "n_layer": layers, "n_positions": positions, "n_ctx": positions,
              "vocab_size": len(vocab), "layer_norm_epsilon": 1e-5,
              "activation_function": "gelu_new", "n_inner": None, "scale_attn_weights": True,
              "tie_word_embeddings": True, "bos_token_id": len(vocab) - 1,
              "eos_token_id": len(vocab) - 1, "torch_dtype": "float32",
              "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}}}
    merges = "#version: 0.2\n" + "".join("%s %s\n" % pair for pair in ck.MERGES)
    files = {"vocab.json": json.dumps(vocab, ensure_ascii=False).encode("utf-8"),
             "merges.txt": merges.encode("utf-8"),
             "tokenizer_config.json": json_bytes({"model_max_length": positions,
                                                  "tokenizer_class": "GPT2Tokenizer"}),
             "special_tokens_map.json": json_bytes({"bos_token": "<|endoftext|>",
                                                    "eos_token": "<|endoftext|>"}),
             "generation_config.json": json_bytes({"bos_token_id": len(vocab) - 1,
                                                   "eos_token_id": len(vocab) - 1}),
             "README.md": b"# a tiny random GPT-2\n"}
    return Source("gpt2", config, {k: (v, "F32") for k, v in t.items()}, files, style="gpt2",
                  note="F32, 4 heads, vocab.json + merges.txt")


def qwen2_source(seed):
    """Qwen2, GQA 8 heads / 4 kv of 4, q/k/v biases, 3 layers, tied; BF16 with layer 1's k_proj,
    v_proj and their biases F16 and the norms F32; two shards and an index."""
    rng = np.random.default_rng(seed)
    tok = ck.tokenizer_json("qwen2")
    vocab = len(tok["model"]["vocab"])
    t = ck.llama_tensors(rng, 32, 8, 4, 4, 48, vocab, 3, ("q", "k", "v"), tied=True)
    config = ck.llama_config("qwen2", 32, 8, 4, 48, vocab, 3, 1e-6, 1000000.0, True, "bfloat16",
                             use_sliding_window=False, sliding_window=4096, max_window_layers=3,
                             bos_token_id=vocab - 1, eos_token_id=vocab - 1)

    def dtype(name):
        if "norm" in name:
            return "F32"
        if ".layers.1.self_attn." in name and ("k_proj" in name or "v_proj" in name):
            return "F16"
        return "BF16"
    first = {n for n in t if n.startswith("model.embed_tokens") or ".layers.0." in n}
    files = {"tokenizer.json": json_bytes(tok),
             "tokenizer_config.json": json_bytes({"model_max_length": 64}),
             "generation_config.json": json_bytes({"eos_token_id": vocab - 1})}
    return Source("qwen2", config, {k: (v, dtype(k)) for k, v in t.items()}, files,
                  shards=[first, set(t) - first], style="qwen2",
                  note="BF16 + F16 k/v of layer 1, 2 shards, GQA 8/4, q/k/v biases")


def llama_source(seed):
    """Llama, F32, GQA 4 heads / 2 kv, head_dim 8 (d_model 16 < 2 G0 d = 32), no biases, its own
    lm_head."""
    rng = np.random.default_rng(seed)
    tok = ck.tokenizer_json("llama")
    vocab = len(tok["model"]["vocab"])
    t = ck.llama_tensors(rng, 16, 4, 2, 8, 32, vocab, 2, (), tied=False)
    config = ck.llama_config("llama", 16, 4, 2, 32, vocab, 2, 1e-5, 10000.0, False, "float32",
                             head_dim=8, bos_token_id=vocab - 2, eos_token_id=vocab - 1)
    files = {"tokenizer.json": json_bytes(tok),
             "special_tokens_map.json": json_bytes({"bos_token": "<s>", "eos_token": "</s>"})}
    return Source("llama", config, {k: (v, "F32") for k, v in t.items()}, files, style="llama",
                  note="F32, GQA 4/2, head_dim 8, no biases")


def write_source(source, root):
    path = os.path.join(root, source.name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(source.config, f, indent=2)
    for name, data in source.files.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    if source.shards is None:
        ck.write_safetensors(os.path.join(path, "model.safetensors"), source.tensors)
    else:
        weight_map = {}
        for i, names in enumerate(source.shards):
            file = "model-%05d-of-%05d.safetensors" % (i + 1, len(source.shards))
            ck.write_safetensors(os.path.join(path, file), {n: source.tensors[n] for n in names})
            weight_map.update({n: file for n in names})
        with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {}, "weight_map": dict(sorted(weight_map.items()))}, f,
                      indent=2)
    source.path = path


def read_source_tensors(path):
    """{name: Tensor} of a Hugging Face folder (one file or shards) or a converted folder."""
    index = os.path.join(path, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(path, "model.safetensors"))
    with open(index) as f:
        weight_map = json.load(f)["weight_map"]
    out = {}
    for file in sorted(set(weight_map.values())):
        out.update(read_safetensors(os.path.join(path, file)))
    assert set(out) == set(weight_map)
    return out


# ---------------------------------------------------------------------------------------------
# The source's key/value projections in the lab's x W layout (its shape is kv.Shape).


def source_kv(config, values, layer):
    """(W_K, W_V, b_K, b_V) of a layer of the source, float64, W (d_model, G0 d), b (G0 d,) or
    None: GPT-2's c_attn columns [E, 2E) and [2E, 3E); the Llama family's k_proj / v_proj
    transposed."""
    if config["model_type"] == "gpt2":
        prefix = "transformer." if "transformer.wte.weight" in values else ""
        p = prefix + "h.%d.attn.c_attn." % layer
        e = config["n_embd"]
        w, b = values[p + "weight"], values[p + "bias"]
        return w[:, e:2 * e], w[:, 2 * e:], b[e:2 * e], b[2 * e:]
    p = "model.layers.%d.self_attn." % layer
    return (values[p + "k_proj.weight"].T, values[p + "v_proj.weight"].T,
            values.get(p + "k_proj.bias"), values.get(p + "v_proj.bias"))


def exact_group_mean(w, kv_heads, head_dim, groups):
    """w (..., G0 d) -> (..., G d): new head g's block = the mean over the source heads
    g G0/G .. (g+1) G0/G - 1, computed exactly with fractions and rounded once to float64."""
    size = kv_heads // groups
    blocks = w.reshape(w.shape[:-1] + (groups, size, head_dim))
    flat = blocks.reshape(-1, groups, size, head_dim)
    out = np.empty((flat.shape[0], groups, head_dim))
    for r in range(flat.shape[0]):
        for g in range(groups):
            for c in range(head_dim):
                total = sum(Fraction(float(x)) for x in flat[r, g, :, c])
                out[r, g, c] = float(total / size)
    return out.reshape(w.shape[:-1] + (groups * head_dim,))


def expand_heads(w, kv_heads, heads, head_dim):
    """w (..., G d) -> (..., H d): query head j's block is head floor(j / (H/G))'s."""
    group = heads // kv_heads
    cols = [w[..., (j // group) * head_dim:(j // group + 1) * head_dim] for j in range(heads)]
    return np.concatenate(cols, axis=-1)


def signed_svd(a):
    """U, S, V^T of a with each left singular vector signed so that its entry of largest
    magnitude (the first of equal ones) is positive, the right one flipped with it."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    for i in range(u.shape[1]):
        k = int(np.argmax(np.abs(u[:, i])))   # argmax: the first of equal ones
        if u[k, i] < 0:
            u[:, i], vt[i, :] = -u[:, i], -vt[i, :]
    return u, s, vt


def expected_layer(config, values, layer, target, amount):
    """{suffix: (float64 values, exact)} of the tensors attention_lab.layers.L.* the spec gives;
    exact: compared bit for bit (else to FACTOR_TOLERANCE)."""
    shape = kv.Shape(config)
    w_k, w_v, b_k, b_v = source_kv(config, values, layer)
    out = {}
    if target == "gqa":
        args = (shape.kv_heads, shape.head_dim, amount)
        out["W_K"] = (exact_group_mean(w_k, *args), True)
        out["W_V"] = (exact_group_mean(w_v, *args), True)
        if b_k is not None:
            out["b_K"] = (exact_group_mean(b_k, *args), True)
            out["b_V"] = (exact_group_mean(b_v, *args), True)
        return out
    u, s, vt = signed_svd(np.hstack([w_k, w_v]))
    n = shape.kv_heads * shape.head_dim
    expand = (shape.kv_heads, shape.heads, shape.head_dim)
    out["W_DKV"] = (u[:, :amount] * s[:amount], False)
    out["W_UK"] = (expand_heads(vt[:amount, :n], *expand), False)
    out["W_UV"] = (expand_heads(vt[:amount, n:], *expand), False)
    if b_k is not None:
        out["b_K"] = (expand_heads(b_k, *expand), True)
        out["b_V"] = (expand_heads(b_v, *expand), True)
    return out


# ---------------------------------------------------------------------------------------------
# The converted folder as a model: keys and values per query head, then the forward pass.


def effective_weights(config, values, entries):
    """(config with H key/value heads, {name: torch float64}) equivalent to the converted folder:
    every layer's keys and values spelled out per query head (gqa: W_K of G heads expanded;
    mla: W_DKV W_UK, its bias b_K outside the latent; a layer left alone: the source's G0 heads
    expanded). values: the folder's tensors as float64 (the source's names and attention_lab's)."""
    shape = kv.Shape(config)
    by_layer = {e["layer"]: e for e in entries}
    weights = {k: v for k, v in values.items() if not k.startswith("attention_lab.")}
    hd, h = shape.head_dim, shape.heads
    for n in range(shape.layers):
        w_k, w_v, b_k, b_v = source_kv(config, values, n)
        p = "attention_lab.layers.%d." % n
        e = by_layer.get(n)
        if e is None:
            w_k, w_v = expand_heads(w_k, shape.kv_heads, h, hd), expand_heads(w_v, shape.kv_heads,
                                                                              h, hd)
            if b_k is not None:
                b_k, b_v = (expand_heads(b_k, shape.kv_heads, h, hd),
                            expand_heads(b_v, shape.kv_heads, h, hd))
        elif e["to"] == "gqa":
            g = e["kv_heads"]
            w_k, w_v = expand_heads(values[p + "W_K"], g, h, hd), expand_heads(values[p + "W_V"],
                                                                               g, h, hd)
            if b_k is not None:
                b_k, b_v = (expand_heads(values[p + "b_K"], g, h, hd),
                            expand_heads(values[p + "b_V"], g, h, hd))
        else:
            w_k = values[p + "W_DKV"] @ values[p + "W_UK"]
            w_v = values[p + "W_DKV"] @ values[p + "W_UV"]
            if b_k is not None:
                b_k, b_v = values[p + "b_K"], values[p + "b_V"]
        if config["model_type"] == "gpt2":
            prefix = "transformer." if "transformer.wte.weight" in values else ""
            q = prefix + "h.%d.attn.c_attn." % n
            e_ = config["n_embd"]
            w = values[q + "weight"].copy()
            b = values[q + "bias"].copy()
            w[:, e_:2 * e_], w[:, 2 * e_:] = w_k, w_v
            b[e_:2 * e_], b[2 * e_:] = b_k, b_v
            weights[q + "weight"], weights[q + "bias"] = w, b
        else:
            q = "model.layers.%d.self_attn." % n
            weights[q + "k_proj.weight"], weights[q + "v_proj.weight"] = w_k.T, w_v.T
            if b_k is not None:
                weights[q + "k_proj.bias"], weights[q + "v_proj.bias"] = b_k, b_v
    config = dict(config)
    if config["model_type"] != "gpt2":
        config["num_key_value_heads"] = h
    return config, {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in weights.items()}


def forward_loss(config, weights, ids):
    window = min(config.get("n_positions") or config["max_position_embeddings"], 1024)
    logits = []
    for part in kv.windows_of(ids, window):
        out, _ = ck.forward(config, weights, part)
        logits.append((out.numpy()[:-1], np.array(part[1:], dtype=np.int64)))
    return kv.evaluate(logits)[0]["loss"]


# ---------------------------------------------------------------------------------------------
# Running the lab and reporting.


class Checks:
    """One line per group of checks; counts the checks and the failed groups."""

    def __init__(self):
        self.groups, self.failed, self.count = 0, 0, 0

    def group(self, label, problems, count):
        self.groups += 1
        self.count += count
        if problems:
            self.failed += 1
            print("FAIL %s" % label)
            for p in problems[:12]:
                print("       %s" % p)
            if len(problems) > 12:
                print("       ... and %d more" % (len(problems) - 12))
        else:
            print("ok   %s (%d checks)" % (label, count))


class Lab:
    def __init__(self, binary):
        self.binary = binary

    def run(self, args):
        """(returncode, stdout, stderr); returncode None when it could not run. A binary being
        rebuilt (missing for a moment) is waited for."""
        for attempt in range(60):
            try:
                out = subprocess.run([self.binary] + args, capture_output=True,
                                     timeout=LAB_TIMEOUT)
                return (out.returncode, out.stdout.decode("utf-8", "replace"),
                        out.stderr.decode("utf-8", "replace"))
            except subprocess.TimeoutExpired:
                return None, "", "timed out after %d s" % LAB_TIMEOUT
            except OSError as e:
                if attempt == 59:
                    return None, "", "could not be started: %s" % e
                time.sleep(1)

    def json(self, args):
        code, stdout, stderr = self.run(args)
        if code != 0:
            lines = stderr.strip().splitlines()
            return None, "%s exited %s: %s" % (args[0], code, lines[0] if lines else "")
        try:
            return json.loads(stdout), None
        except ValueError as e:
            return None, "%s printed no JSON: %s" % (args[0], e)


def json_equal(a, b):
    """JSON values equal, with booleans, numbers, strings and null told apart."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def partial_leftovers(parent, name):
    return sorted(e for e in os.listdir(parent) if e.startswith(".%s.partial-" % name))


# ---------------------------------------------------------------------------------------------
# One conversion: run it, read the folder back, check everything.


class Case:
    def __init__(self, source, target, amount, layers=None, from_case=None, evaluate=True,
                 tag=None):
        self.source, self.target, self.amount, self.layers = source, target, amount, layers
        self.from_case, self.evaluate = from_case, evaluate   # from_case: convert its OUT
        self.tag = tag or "%s_%s%d%s" % (source.name, target, amount,
                                         "" if layers is None else "_L" + layers.replace(",", "."))
        self.out = None
        self.entries = None       # converted_layers as expected
        self.values = None        # OUT's tensors as float64, once read
        self.source_name = None


def check_folder(case):
    """The problems of case.out against the spec, and the number of checks made. A second
    conversion (case.from_case) has that conversion's folder as its source."""
    problems, count = [], 0
    src = case.source
    config, shape = src.config, kv.Shape(src.config)
    input_path = case.from_case.out if case.from_case else src.path
    layers = sorted(kv.layer_list(case.layers, shape.layers))
    amount_key = "kv_heads" if case.target == "gqa" else "latent_dim"
    mine = [{"layer": n, "to": case.target, amount_key: case.amount} for n in layers]
    earlier = case.from_case.entries if case.from_case else []
    redone = {e["layer"] for e in mine}
    case.entries = sorted([e for e in earlier if e["layer"] not in redone] + mine,
                          key=lambda e: e["layer"])

    # The files.
    listing = sorted(os.listdir(case.out))
    source_files = set(os.listdir(input_path))
    want = sorted(["model.json", "model.safetensors"] +
                  [f for f in TOKENIZER_FILES if f in source_files])
    count += 1
    if listing != want:
        problems.append("files: expected %s, found %s" % (want, listing))
    count += 1
    if "config.json" in listing:
        problems.append("config.json is in the converted folder")
    for f in TOKENIZER_FILES:
        if f in source_files and f in listing:
            count += 1
            with open(os.path.join(input_path, f), "rb") as a, \
                    open(os.path.join(case.out, f), "rb") as b:
                if a.read() != b.read():
                    problems.append("%s: not the source's bytes" % f)
    parent = os.path.dirname(case.out)
    count += 1
    left = partial_leftovers(parent, os.path.basename(case.out))
    if left:
        problems.append("hidden partial folders left: %s" % left)

    # model.json.
    try:
        with open(os.path.join(case.out, "model.json"), "rb") as f:
            model = json.loads(f.read().decode("utf-8"), object_pairs_hook=no_duplicates)
    except (OSError, ValueError) as e:
        return problems + ["model.json: %s" % e], count
    count += 6
    if not isinstance(model, dict) or set(model) != {"format", "source", "converted_layers"}:
        problems.append("model.json: expected the keys format, source, converted_layers, found "
                        "%s" % (sorted(model) if isinstance(model, dict) else model))
        model = model if isinstance(model, dict) else {}
    if model.get("format") != FORMAT:
        problems.append("model.json.format: expected %r, found %r" % (FORMAT,
                                                                      model.get("format")))
    source_block = model.get("source") if isinstance(model.get("source"), dict) else {}
    if set(source_block) != {"name", "config"}:
        problems.append("model.json.source: expected the keys name, config, found %s"
                        % sorted(source_block))
    with open(os.path.join(src.path, "config.json")) as f:
        original_config = json.load(f)
    if not json_equal(source_block.get("config"), original_config):
        problems.append("model.json.source.config: not the original config.json: %s"
                        % json.dumps(source_block.get("config"))[:300])
    name = source_block.get("name")
    if case.from_case is None:
        if not isinstance(name, str) or not name or name != src.model_name:
            problems.append("model.json.source.name: expected the model's name (%r, as eval "
                            "names it), found %r" % (src.model_name, name))
        case.source_name = name
    elif name != case.from_case.source_name:
        problems.append("model.json.source.name: expected the first conversion's %r (the "
                        "model it was made from), found %r" % (case.from_case.source_name, name))
    case.source_name = case.source_name if case.from_case is None else case.from_case.source_name
    if not json_equal(model.get("converted_layers"), case.entries):
        problems.append("model.json.converted_layers: expected %s, found %s" % (
            json.dumps(case.entries), json.dumps(model.get("converted_layers"))))

    # model.safetensors.
    try:
        out = read_safetensors(os.path.join(case.out, "model.safetensors"))
    except (OSError, ValueError, KeyError, TypeError) as e:
        return problems + ["model.safetensors: %s" % e], count
    source_tensors = read_source_tensors(input_path)
    for name, t in source_tensors.items():
        count += 1
        o = out.get(name)
        if o is None:
            problems.append("%s: missing" % name)
        elif (o.dtype, o.shape) != (t.dtype, t.shape) or o.raw != t.raw:
            problems.append("%s: expected the source's %s %s and bytes, found %s %s%s" % (
                name, t.dtype, list(t.shape), o.dtype, list(o.shape),
                " (bytes differ)" if (o.dtype, o.shape) == (t.dtype, t.shape) else ""))
    hf_values = {k: t.values() for k, t in source_tensors.items()}
    new_names = set()
    for n in layers:
        expected = expected_layer(config, hf_values, n, case.target, case.amount)
        for suffix, (values, exact) in expected.items():
            name = "attention_lab.layers.%d.%s" % (n, suffix)
            new_names.add(name)
            count += 1
            o = out.get(name)
            if o is None:
                problems.append("%s: missing" % name)
                continue
            if o.shape != values.shape:
                problems.append("%s: expected shape %s, found %s" % (name, list(values.shape),
                                                                     list(o.shape)))
                continue
            found = o.values()
            if encode(found, o.dtype) != o.raw:
                problems.append("%s: its %s bytes do not re-encode to themselves" % (name,
                                                                                     o.dtype))
            if exact:
                want_dtype = narrowest(values)
                if o.dtype != want_dtype:
                    problems.append("%s: expected dtype %s (the narrowest of BF16, F32, F64 "
                                    "holding every value), found %s" % (name, want_dtype,
                                                                        o.dtype))
                if not np.array_equal(found, values):
                    k = np.unravel_index(np.argmax(np.abs(found - values)), values.shape)
                    problems.append("%s: expected bit-exact values; %d differ, e.g. at %s "
                                    "expected %.17g found %.17g" % (
                                        name, int(np.sum(found != values)), list(k),
                                        values[k], found[k]))
            else:
                own = narrowest(found)
                if o.dtype != own:
                    problems.append("%s: stored as %s but its values fit %s (not the narrowest)"
                                    % (name, o.dtype, own))
                scale = float(np.max(np.abs(values)))
                diff = float(np.max(np.abs(found - values)))
                if not diff <= FACTOR_TOLERANCE * scale:
                    k = np.unravel_index(np.argmax(np.abs(found - values)), values.shape)
                    problems.append("%s: max |diff| %.3g of max |value| %.3g (at %s expected "
                                    "%.17g found %.17g)" % (name, diff, scale, list(k),
                                                            values[k], found[k]))
        # The sign rule on the lab's own W_DKV: each column's largest-magnitude entry positive.
        if case.target == "mla" and "attention_lab.layers.%d.W_DKV" % n in out:
            count += 1
            d = out["attention_lab.layers.%d.W_DKV" % n].values()
            bad = [i for i in range(d.shape[1]) if d[int(np.argmax(np.abs(d[:, i]))), i] <= 0]
            if bad:
                problems.append("layer %d W_DKV columns %s: largest-magnitude entry not positive"
                                % (n, bad))
    extra = sorted(set(out) - set(source_tensors) - new_names)
    count += 1
    if extra:
        problems.append("unexpected tensors: %s" % extra)
    case.values = {k: t.values() for k, t in out.items()}
    return problems, count


def run_case(lab, checks, case, text_file, ids_of, eval_of):
    src = case.source
    input_path = case.from_case.out if case.from_case else src.path
    case.out = os.path.join(os.path.dirname(src.path), "out", case.tag)
    shutil.rmtree(case.out, ignore_errors=True)
    os.makedirs(os.path.dirname(case.out), exist_ok=True)
    args = ["convert", input_path, "--to", case.target,
            "--kv-heads" if case.target == "gqa" else "--latent-dim", str(case.amount)]
    if case.layers is not None:
        args += ["--layers", case.layers]
    if case.evaluate:
        args += ["--eval", text_file]
    args += ["--out", case.out, "--json"]
    label = "%s: convert %s%s" % (
        case.tag, "(converted %s) " % case.from_case.tag if case.from_case else "",
        " ".join(args[2:-3]).replace(os.path.dirname(text_file) + os.sep, ""))
    found, error = lab.json(args)
    if error:
        checks.group(label, [error], 1)
        return False
    problems, count = check_folder(case)
    checks.group(label + " -> folder", problems, count)
    if not case.evaluate:
        return not problems

    # Round trip: eval OUT against convert --eval, eval SOURCE's counts, and our forward pass.
    problems, count = [], 4
    converted = found.get("converted", {}) if isinstance(found, dict) else {}
    want = converted.get("loss")
    result, error = lab.json(["eval", case.out, "--text-file", text_file, "--json"])
    if error:
        checks.group(case.tag + ": eval OUT", [error], 1)
        return False
    loss = result.get("loss")
    if not (isinstance(want, float) and isinstance(loss, float) and
            abs(loss - want) <= ROUND_TRIP * abs(want)):
        problems.append("eval OUT loss %r, convert --eval's converted loss %r (diff %s)" % (
            loss, want, abs(loss - want) if isinstance(loss, float) and isinstance(want, float)
            else "-"))
    base = eval_of[src.name]
    for key in ("tokens", "windows", "predicted"):
        if result.get(key) != base.get(key):
            problems.append("eval OUT %s %r, eval SOURCE %r" % (key, result.get(key),
                                                                base.get(key)))
    if not (isinstance(result.get("perplexity"), float) and isinstance(loss, float) and
            abs(result["perplexity"] - math.exp(loss)) <= 1e-12 * math.exp(loss)):
        problems.append("eval OUT perplexity %r, e^loss %r" % (result.get("perplexity"),
                                                               math.exp(loss)))
    if case.values is None:
        checks.group("%s: eval OUT" % case.tag, problems + ["OUT's tensors unreadable"], count)
        return False
    cfg, weights = effective_weights(src.config, case.values, case.entries)
    mine = forward_loss(cfg, weights, ids_of[src.name])
    if not (isinstance(loss, float) and abs(loss - mine) <= LOSS_TOLERANCE * max(1.0, mine)):
        problems.append("eval OUT loss %r, the forward pass of OUT's tensors %.17g" % (loss,
                                                                                       mine))
    # `run OUT`: logits and every head's attention weights against the same forward pass.
    count += 1
    ran, error = lab.json(["run", case.out, "--text", RUN_TEXT, "--json"])
    if error:
        problems.append("run OUT: %s" % error)
    elif ran.get("ids") != ck.hand_bpe(RUN_TEXT, ck.tokenizer_json(src.style)):
        problems.append("run OUT: ids %r, not the hand BPE's" % (ran.get("ids"),))
    else:
        logits, layers = ck.forward(cfg, weights, ran["ids"])
        problems += ["run OUT: %s" % p for p in ck.compare_run(ran, logits, layers)]
    checks.group("%s: eval OUT = convert --eval = forward pass (loss %.6f), run OUT's logits "
                 "and weights" % (case.tag, mine), problems, count)
    return True


# ---------------------------------------------------------------------------------------------
# The folder check against tampered copies of folders the lab wrote.


def write_tensors(path, tensors):
    """{name: Tensor} -> a safetensors file, in the given order, header padded to 8 bytes."""
    header, offset = {}, 0
    for name, t in tensors.items():
        header[name] = {"dtype": t.dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(t.raw)]}
        offset += len(t.raw)
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(t.raw for t in tensors.values()))


def mutants(case):
    """[(what, function changing a copy of case.out)] for a gqa or an mla folder."""
    def tensors(fn):
        def apply(path):
            file = os.path.join(path, "model.safetensors")
            ts = read_safetensors(file)
            fn(ts)
            write_tensors(file, ts)
        return apply

    def model_json(fn):
        def apply(path):
            file = os.path.join(path, "model.json")
            with open(file) as f:
                m = json.load(f)
            fn(m)
            with open(file, "w") as f:
                json.dump(m, f)
        return apply

    def scaled(name, factor, index=0):
        def fn(ts):
            t = ts[name]
            v = t.values().copy().reshape(-1)
            v[index] *= factor
            if t.dtype != "F64":
                v = v.astype(np.float32).astype(np.float64)
            ts[name] = Tensor(t.dtype, t.shape, encode(v.reshape(t.shape), t.dtype))
        return fn

    def widened(name):
        def fn(ts):
            t = ts[name]
            ts[name] = Tensor("F64", t.shape, encode(t.values(), "F64"))
        return fn

    def next_up(name):
        def fn(ts):
            t = ts[name]
            v = t.values().copy().reshape(-1)
            if t.dtype == "F64":
                v[0] = np.nextafter(v[0], np.inf)
            else:
                v[0] = float(np.nextafter(np.float32(v[0]), np.float32(np.inf)))
            ts[name] = Tensor(t.dtype, t.shape, encode(v.reshape(t.shape), t.dtype))
        return fn

    def sign_flipped(n):
        def fn(ts):
            for suffix, axis in (("W_DKV", 1), ("W_UK", 0), ("W_UV", 0)):
                t = ts["attention_lab.layers.%d.%s" % (n, suffix)]
                v = t.values().copy()
                if axis == 1:
                    v[:, 0] = -v[:, 0]
                else:
                    v[0, :] = -v[0, :]
                ts["attention_lab.layers.%d.%s" % (n, suffix)] = Tensor(t.dtype, t.shape,
                                                                       encode(v, t.dtype))
        return fn

    def dropped(name):
        return lambda ts: ts.pop(name)

    def added(name):
        return lambda ts: ts.__setitem__(name, Tensor("F32", (1,), encode([1.0], "F32")))

    def touch(file, data=b"{}"):
        def apply(path):
            with open(os.path.join(path, file), "wb") as f:
                f.write(data)
        return apply

    def remove(file):
        return lambda path: os.remove(os.path.join(path, file))

    last = "attention_lab.layers.0."
    first_source = sorted(t for t in read_safetensors(os.path.join(case.out, "model.safetensors"))
                          if not t.startswith("attention_lab."))[0]
    out = [("a source tensor's value", tensors(scaled(first_source, 1.5))),
           ("a source tensor dropped", tensors(dropped(first_source))),
           ("an extra tensor", tensors(added("attention_lab.layers.0.extra"))),
           ("a config.json", touch("config.json")),
           ("a README.md", touch("README.md", b"x")),
           ("a tokenizer file changed", touch("tokenizer_config.json" if os.path.exists(
               os.path.join(case.out, "tokenizer_config.json")) else "tokenizer.json", b"{ }")),
           ("a tokenizer file removed", remove("tokenizer_config.json" if os.path.exists(
               os.path.join(case.out, "tokenizer_config.json")) else "tokenizer.json")),
           ("format", model_json(lambda m: m.__setitem__("format", "attention-lab"))),
           ("source.config", model_json(lambda m: m["source"]["config"].__setitem__(
               "vocab_size", m["source"]["config"]["vocab_size"] + 1))),
           ("source.config's float as an int", model_json(lambda m: m["source"]["config"]
                                                           .__setitem__("rms_norm_eps" if
                                                                        "rms_norm_eps" in m[
                                                                            "source"]["config"]
                                                                        else "n_embd", True))),
           ("a converted_layers entry dropped", model_json(
               lambda m: m["converted_layers"].pop())),
           ("a converted_layers entry with a key more", model_json(
               lambda m: m["converted_layers"][0].__setitem__("note", 1))),
           ("a key more", model_json(lambda m: m.__setitem__("extra", 1)))]
    stored = read_safetensors(os.path.join(case.out, "model.safetensors"))
    biases = last + "b_K" in stored
    if case.target == "gqa":
        out += [("W_K one ulp up", tensors(next_up(last + "W_K"))),
                ("W_V one ulp up", tensors(next_up(last + "W_V")))]
        if stored[last + "W_K"].dtype != "F64":
            out.append(("W_K widened to F64", tensors(widened(last + "W_K"))))
    else:
        out += [("W_UK one value x (1 + 1e-7)", tensors(scaled(last + "W_UK", 1 + 1e-7, 3))),
                ("W_DKV one value x (1 + 1e-7)", tensors(scaled(last + "W_DKV", 1 + 1e-7, 5))),
                ("W_UV one value x (1 + 1e-7)", tensors(scaled(last + "W_UV", 1 + 1e-7, 7))),
                ("a singular pair signed the other way", tensors(sign_flipped(0))),
                ("W_UV dropped", tensors(dropped(last + "W_UV")))]
    if biases:
        out += [("b_K one ulp up", tensors(next_up(last + "b_K"))),
                ("b_V dropped", tensors(dropped(last + "b_V")))]
        if stored[last + "b_V"].dtype != "F64":
            out.append(("b_V widened to F64", tensors(widened(last + "b_V"))))
    else:
        out.append(("a b_K added", tensors(lambda ts: ts.__setitem__(
            last + "b_K", Tensor("F32", (4,), encode(np.zeros(4), "F32"))))))
    return out


def check_the_check(checks, cases, work):
    """Each tampered copy of a folder the lab wrote must be flagged, the untouched copy not."""
    import copy
    root = os.path.join(work, "mutants")
    problems, count = [], 0
    for case in cases:
        if case.values is None:
            continue
        for what, apply in [("nothing", None)] + mutants(case):
            path = os.path.join(root, case.tag)
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(case.out, path)
            if apply is not None:
                apply(path)
            twin = copy.copy(case)
            twin.out = path
            found, _ = check_folder(twin)
            count += 1
            if apply is None and found:
                problems.append("%s: the untouched copy is flagged: %s" % (case.tag, found[:2]))
            if apply is not None and not found:
                problems.append("%s: %s is not flagged" % (case.tag, what))
    shutil.rmtree(root, ignore_errors=True)
    checks.group("self-checks: the folder check flags each of %d tampered copies and passes the "
                 "untouched ones" % count, problems, count)


# ---------------------------------------------------------------------------------------------
# Refusals.


def check_refusals(lab, checks, gpt2, text_file, work):
    root = os.path.join(work, "refusals")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    base = ["convert", gpt2.path, "--to", "gqa", "--kv-heads", "2"]

    def refused(label, out, extra, prepare=None, after=None):
        problems = []
        code, stdout, stderr = lab.run(base[:2] + extra + ["--out", out, "--json"])
        if code != 2:
            problems.append("exit status: expected 2, found %r" % (code,))
        if stdout:
            problems.append("stdout: expected nothing, found %r" % stdout[:120])
        line = stderr.strip()
        if "--out" not in line or not line.startswith("attention-lab: "):
            problems.append("stderr: expected a message naming --out, found %r" % line[:300])
        parent = os.path.dirname(out)
        if os.path.isdir(parent):
            left = partial_leftovers(parent, os.path.basename(out))
            if left:
                problems.append("hidden partial folders left: %s" % left)
        if after:
            problems += after()
        checks.group("refuses --out %s: exit 2, %r" % (label, line[:110]), problems, 5)

    # A folder with a file in it: the file untouched.
    full = os.path.join(root, "full")
    os.makedirs(full)
    keep = os.path.join(full, "keep.txt")
    with open(keep, "wb") as f:
        f.write(b"mine\n")
    stamp = os.stat(keep).st_mtime_ns

    def untouched():
        out = []
        if sorted(os.listdir(full)) != ["keep.txt"]:
            out.append("the folder now holds %s" % sorted(os.listdir(full)))
        with open(keep, "rb") as f:
            if f.read() != b"mine\n" or os.stat(keep).st_mtime_ns != stamp:
                out.append("keep.txt was changed")
        return out
    refused("a folder holding a file", full, base[2:], after=untouched)

    # An existing regular file.
    plain = os.path.join(root, "plain.bin")
    with open(plain, "wb") as f:
        f.write(b"data")

    def plain_untouched():
        with open(plain, "rb") as f:
            return [] if f.read() == b"data" else ["the file was changed"]
    refused("an existing regular file", plain, base[2:], after=plain_untouched)

    # A missing parent.
    missing = os.path.join(root, "no-such-parent", "out")

    def not_made():
        return ["the missing parent was made"] if os.path.exists(
            os.path.dirname(missing)) else []
    refused("under a missing parent", missing, base[2:], after=not_made)

    # The source folder itself (not empty).
    refused("the source folder", gpt2.path, base[2:])

    # --out with --ladder.
    ladder_out = os.path.join(root, "ladder")

    def no_ladder_out():
        return ["%s was made" % ladder_out] if os.path.exists(ladder_out) else []
    refused("with --ladder", ladder_out, ["--ladder", "--eval", text_file], after=no_ladder_out)

    # An existing empty folder is accepted.
    empty = os.path.join(root, "empty")
    os.makedirs(empty)
    code, stdout, stderr = lab.run(base + ["--out", empty, "--json"])
    problems = []
    if code != 0:
        problems.append("exit %r: %s" % (code, stderr.strip()[:200]))
    elif sorted(os.listdir(empty)) != ["generation_config.json", "merges.txt", "model.json",
                                      "model.safetensors", "special_tokens_map.json",
                                      "tokenizer_config.json", "vocab.json"]:
        problems.append("the folder holds %s" % sorted(os.listdir(empty)))
    left = partial_leftovers(root, "empty")
    if left:
        problems.append("hidden partial folders left: %s" % left)
    checks.group("accepts --out an existing empty folder", problems, 3)

    # The same folder spelled with a trailing slash (as a shell completes a folder's name): DIR/
    # names DIR, so a new DIR/ and an empty DIR/ are accepted as DIR is.
    written = sorted(os.listdir(empty))
    for label, make in (("a new folder", False), ("an existing empty folder", True)):
        path = os.path.join(root, "slash-" + ("empty" if make else "new"))
        if make:
            os.makedirs(path)
        code, stdout, stderr = lab.run(base + ["--out", path + os.sep, "--json"])
        problems = []
        if code != 0:
            problems.append("exit %r: %s" % (code, stderr.strip()[:200]))
        elif not os.path.isdir(path) or sorted(os.listdir(path)) != written:
            problems.append("the folder holds %s" % (sorted(os.listdir(path))
                                                     if os.path.isdir(path) else "nothing"))
        left = partial_leftovers(root, os.path.basename(path)) + (
            [e for e in os.listdir(path) if ".partial-" in e] if os.path.isdir(path) else [])
        if left:
            problems.append("hidden partial folders left: %s" % left)
        checks.group("accepts --out DIR/ (trailing slash), DIR %s" % label, problems, 3)


# ---------------------------------------------------------------------------------------------
# Self-checks of the reference.


def self_checks(checks, sources, values_of):
    problems = []
    # The dtype rule on hand-made values.
    cases = [([1.0, -0.5, 3.0], "BF16"), ([1.0 + 2 ** -8], "F32"), ([1.0 + 2 ** -23], "F32"),
             ([1.0 + 2 ** -24], "F64"), ([0.1], "F64"), ([np.float32(0.1)], "F32"),
             ([1e39], "F64"), ([2.0 ** -126], "BF16")]
    for values, want in cases:
        if narrowest(values) != want:
            problems.append("narrowest(%r) = %s, expected %s" % (values, narrowest(values), want))
    for values, dtype in cases:
        v = np.array(values, dtype=np.float64)
        if not np.array_equal(ck.decode_tensor(dtype, v.shape, encode(v, dtype)), v):
            problems.append("%s does not round-trip %r" % (dtype, values))
    # The exact mean equals NumPy's where the sum is exact (groups of 2 and 4).
    for src in sources:
        shape = kv.Shape(src.config)
        w_k = source_kv(src.config, values_of[src.name], 0)[0]
        for g in kv.divisors(shape.kv_heads):
            mine = exact_group_mean(w_k, shape.kv_heads, shape.head_dim, g)
            theirs = kv.pool_columns(w_k, shape.kv_heads, shape.head_dim, g)
            theirs = theirs.reshape(shape.d_model, g, shape.kv_heads // g, shape.head_dim)[
                :, :, 0, :].reshape(shape.d_model, g * shape.head_dim)
            if not np.array_equal(mine, theirs):
                problems.append("%s: exact mean != numpy mean at G %d" % (src.name, g))
        # The signed SVD rebuilds A; the signs are as the rule says; expansion of G = H is itself.
        w_k, w_v, _, _ = source_kv(src.config, values_of[src.name], 0)
        a = np.hstack([w_k, w_v])
        u, s, vt = signed_svd(a)
        if not np.allclose((u * s) @ vt, a, rtol=0, atol=1e-12):
            problems.append("%s: U S V^T != A" % src.name)
        if any(u[int(np.argmax(np.abs(u[:, i]))), i] <= 0 for i in range(u.shape[1])):
            problems.append("%s: a left singular vector's largest entry is not positive"
                            % src.name)
        x = np.arange(shape.heads * shape.head_dim, dtype=np.float64)
        if not np.array_equal(expand_heads(x, shape.heads, shape.heads, shape.head_dim), x):
            problems.append("expanding H heads to H is not the identity")
        # The effective weights of "nothing converted" give the source's forward pass.
        ids = ck.hand_bpe("the cat sat on the mat", ck.tokenizer_json(src.style))
        base_w = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in
                  values_of[src.name].items()}
        cfg, w = effective_weights(src.config, values_of[src.name], [])
        a_logits, _ = ck.forward(src.config, base_w, ids)
        b_logits, _ = ck.forward(cfg, w, ids)
        if float((a_logits - b_logits).abs().max()) > 1e-12:
            problems.append("%s: the per-query-head spelling changes the logits" % src.name)
        # Full-rank MLA spelled per query head is the model itself.
        entries = [{"layer": n, "to": "mla", "latent_dim": shape.full_rank}
                   for n in range(shape.layers)]
        vals = dict(values_of[src.name])
        for n in range(shape.layers):
            for suffix, (v, _) in expected_layer(src.config, values_of[src.name], n, "mla",
                                                 shape.full_rank).items():
                vals["attention_lab.layers.%d.%s" % (n, suffix)] = v
        cfg, w = effective_weights(src.config, vals, entries)
        c_logits, _ = ck.forward(cfg, w, ids)
        if float((a_logits - c_logits).abs().max()) > 1e-9:
            problems.append("%s: full-rank MLA changes the logits" % src.name)
        # ... and MLA at C = 1 does change them.
        entries = [{"layer": 0, "to": "mla", "latent_dim": 1}]
        vals = dict(values_of[src.name])
        for suffix, (v, _) in expected_layer(src.config, values_of[src.name], 0, "mla",
                                             1).items():
            vals["attention_lab.layers.0.%s" % suffix] = v
        cfg, w = effective_weights(src.config, vals, entries)
        d_logits, _ = ck.forward(cfg, w, ids)
        if float((a_logits - d_logits).abs().max()) < 1e-3:
            problems.append("%s: MLA at C = 1 leaves the logits" % src.name)
    checks.group("self-checks: dtype rule, exact means, signed SVD, per-head spelling, "
                 "full-rank MLA is the model", problems, len(cases) * 2 + 7 * len(sources))


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", "--lab", dest="binary", help="the attention-lab executable")
    parser.add_argument("--work", required=True, help="folder for the model folders and outputs")
    args = parser.parse_args()
    start = time.monotonic()
    torch.set_num_threads(1)
    lab = Lab(args.binary)
    code, _, _ = lab.run(["--version"]) if args.binary else (None, "", "")
    if code is None:
        print("converted folder cross-check: cannot run the binary %r" % args.binary)
        return 2
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    shutil.rmtree(os.path.join(work, "out"), ignore_errors=True)
    sources = [gpt2_source(21), qwen2_source(22), llama_source(23)]
    for s in sources:
        write_source(s, work)
    values_of = {s.name: {k: t.values() for k, t in read_source_tensors(s.path).items()}
                 for s in sources}
    checks = Checks()
    self_checks(checks, sources, values_of)

    # Texts of 129 tokens (windows of 64, 64 and 1), the ids the lab and the hand BPE agree on,
    # and eval of each source.
    text_dir = os.path.join(work, "texts")
    os.makedirs(text_dir, exist_ok=True)
    text_files, ids_of, eval_of = {}, {}, {}
    for s in sources:
        style = "llama" if s.style == "llama" else "gpt2"
        text_files[s.name] = os.path.join(text_dir, style + "_129.txt")
        text = kv.text_of_length(style, 129)
        with open(text_files[s.name], "w") as f:
            f.write(text)
        problems = []
        tokenized, error = lab.json(["tokenize", s.path, "--text", text, "--json"])
        result, error2 = lab.json(["eval", s.path, "--text-file", text_files[s.name], "--json"])
        if error or error2:
            problems.append(error or error2)
        else:
            ids_of[s.name] = tokenized.get("ids")
            eval_of[s.name] = result
            s.model_name = result.get("model")
            hand = ck.hand_bpe(text, ck.tokenizer_json(s.style))
            if ids_of[s.name] != hand:
                problems.append("tokenize: not the hand BPE's ids")
            w = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in
                 values_of[s.name].items()}
            mine = forward_loss(s.config, w, hand)
            if not abs(result.get("loss", math.nan) - mine) <= LOSS_TOLERANCE * max(1, mine):
                problems.append("eval SOURCE loss %r, forward pass %.17g" % (result.get("loss"),
                                                                             mine))
        checks.group("%s (%s): tokenize = hand BPE, eval SOURCE = forward pass" % (s.name,
                                                                                 s.note),
                     problems, 2)
        if problems:
            print("converted folder cross-check: cannot go on without %s" % s.name)
            return 1

    gpt2, qwen2, llama = sources
    cases = [Case(gpt2, "gqa", 2), Case(gpt2, "gqa", 1, "1"), Case(gpt2, "gqa", 4, "0"),
             Case(gpt2, "mla", 5), Case(gpt2, "mla", 16, "0", evaluate=False),
             Case(qwen2, "gqa", 2), Case(qwen2, "gqa", 1, "0,2", evaluate=False),
             Case(qwen2, "gqa", 4, "1-2", evaluate=False),
             Case(qwen2, "mla", 7), Case(qwen2, "mla", 32, "1"),
             Case(llama, "gqa", 1), Case(llama, "mla", 3), Case(llama, "mla", 16, "1")]
    by_tag = {c.tag: c for c in cases}
    # Converted folders converted again, another layer (the first conversion's entry kept).
    again = [Case(gpt2, "mla", 3, "0", from_case=by_tag["gpt2_gqa1_L1"], tag="gpt2_again"),
             Case(qwen2, "mla", 4, "1", from_case=by_tag["qwen2_gqa1_L0.2"], tag="qwen2_again"),
             Case(llama, "gqa", 1, "0", from_case=by_tag["llama_mla16_L1"], tag="llama_again")]
    ok = {}
    for case in cases + again:
        if case.from_case is not None and not ok.get(case.from_case.tag):
            checks.group("%s: its source conversion failed" % case.tag, ["skipped"], 1)
            continue
        ok[case.tag] = run_case(lab, checks, case, text_files[case.source.name], ids_of,
                                eval_of)

    check_the_check(checks, [by_tag[t] for t in ("gpt2_gqa2", "qwen2_gqa2", "qwen2_mla7",
                                                 "llama_mla3")], work)
    check_refusals(lab, checks, gpt2, text_files["gpt2"], work)
    left = [(d, e) for d in (work, os.path.join(work, "out"))
            for e in os.listdir(d) if ".partial-" in e]
    checks.group("no hidden .NAME.partial-* folder anywhere in the work folder",
                 ["left: %s" % left] if left else [], 1)
    print("converted folder cross-check: %d checks in %d groups, %d groups failed (%.1f s)" % (
        checks.count, checks.groups, checks.failed, time.monotonic() - start))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
