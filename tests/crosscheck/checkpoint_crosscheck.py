#!/usr/bin/python3
"""Independent PyTorch float64 reference for Hugging Face checkpoints (`attention-lab run FOLDER`).

Why this exists: the lab reads real Hugging Face model folders (config.json, safetensors weights,
tokenizer.json) and runs GPT-2 and the Llama family on them.  This script writes tiny random
checkpoints in the exact names, layouts and dtypes those models ship with, reads them back with a
safetensors reader of its own, and runs a forward pass written from the formulas (never from the
C++ sources, and without transformers) in float64:

  GPT-2:  x = wte[ids] + wpe[t]; per block x += Attn(LN1(x)) with Conv1D weights (y = x W + b,
          q/k/v = columns [0,E), [E,2E), [2E,3E) of c_attn), x += gelu_tanh(LN2(x) W_fc + b) W_proj
          + b; logits = LN_f(x) (lm_head or wte)^T.  The attn.bias / masked_bias buffers are ignored.
  Llama, Qwen2, Mistral:  x = embed[ids]; per layer q, k, v = RMS1(x) W^T (+ b), RoPE by
          rotate_half (pairs (i, i + hd/2), theta_i = t base^(-2i/hd), llama3 scaling), query head
          j reads KV head floor(j / (nh / nkv)), softmax(q k^T / sqrt(hd)) causal (and Mistral's
          sliding window: key j visible to query i iff i - W < j <= i), x += concat(P v) Wo^T (+ bo),
          x += down(silu(gate(m)) * up(m)) with m = RMS2(x); logits = RMS_f(x) (lm_head or embed)^T.

Folders (in --work): gpt2 (F32, tied, mask buffers), gpt2_prefixed ("transformer." names, its own
lm_head, n_inner given), llama (BF16, GQA 4/2, two shards with model.safetensors.index.json),
llama_tied_headdim (F16, tied, head_dim 12 != hidden/heads, llama3 rope_scaling over all three
frequency bands, biases on q/k/v/o), qwen2 (mixed F32/BF16, MQA 4/1, q/k/v biases, theta 1e6, eps
1e-6, a padded vocabulary, sliding_window present but use_sliding_window false), mistral (F32,
sliding window 3, GQA 4/2).  Each has a byte-level BPE tokenizer.json (256 byte symbols + 21
merges; a "<s>" template for Llama and Mistral).

For each folder and text the lab's `run FOLDER --text T --json` must give the ids of `tokenize
FOLDER --text T --json`, and its logits and every layer's every head's weights must equal the
reference's (on the lab's ids) to 1e-9 (absolute, relative where |expected| > 1).

Self-checks of the reference, run always (alone with --reference-only): Conv1D as x W equals a
Linear with W^T; rotate_half RoPE equals interleaved RoPE on un-permuted q/k rows; GQA equals MHA
on repeated K/V weights; tied equals an explicit lm_head equal to the embedding; safetensors
written here read back bit-exactly (with an unaligned header too) and the dtype test vectors; the
tokenizer.json gives the ids the merges give by hand and Hugging Face's JavaScript tokenizer
(@huggingface/tokenizers under --npm, skipped with a note when missing); the sliding window and
llama3 bands matter; the comparison flags a perturbed result.

ablation_crosscheck.py imports this reference: forward(..., ablate={(layer, head), ...},
ablate_mode="zero"|"mean", outputs=[]) replaces those heads' outputs before the output projection
and collects each layer's attention output; without them it is the pass above.

Run:  /usr/bin/python3 checkpoint_crosscheck.py --binary build/app/attention-lab \\
          --work build/tests/checkpoint_crosscheck [--npm build/npm] [--reference-only]

Exit status: 0 all agree, 1 a mismatch (the lab's or a self-check's), 2 the binary cannot be run.
"""

import argparse
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import time

import numpy as np
import torch

from reference import merge_pair

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_SCRIPT = os.path.join(HERE, "tokenizer_reference.mjs")
LAB_TIMEOUT = 30
TOLERANCE = 1e-9        # |expected - found| <= TOLERANCE * max(1, |expected|)
SELF_TOLERANCE = 1e-12  # two forms of the reference against each other

TEXTS = ["the cat sat", "the cat sat on the mat, and then the dog ran."]

# ---------------------------------------------------------------------------------------------
# Tokenizer: GPT-2's byte-level BPE over 256 byte symbols plus a few merges.


def bytes_to_unicode():
    """GPT-2's byte -> character map: printable bytes stand for themselves, the other 68 in
    increasing order for U+0100 onwards."""
    kept = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    table, extra = {}, 0
    for b in range(256):
        if b in kept:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


BYTE_CHAR = bytes_to_unicode()
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("a", "t"), ("Ġ", "c"), ("Ġc", "at"), ("Ġ", "s"),
          ("Ġs", "at"), ("t", "he"), ("Ġ", "o"), ("Ġo", "n"), ("Ġ", "m"), ("Ġm", "at"), ("a", "n"),
          ("Ġ", "an"), ("Ġan", "d"), ("Ġ", "d"), ("o", "g"), ("Ġd", "og"), ("Ġ", "r"), ("Ġr", "an")]


def base_vocab():
    vocab = {BYTE_CHAR[b]: b for b in range(256)}
    for a, b in MERGES:
        assert a in vocab and b in vocab, (a, b)
        assert a + b not in vocab, a + b
        vocab[a + b] = len(vocab)
    return vocab


def added_token(token_id, content):
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": False, "special": True}


def tokenizer_json(style):
    """A tokenizer.json in Hugging Face's format. style: "gpt2" (ByteLevel post-processor, an
    <|endoftext|> added token), "qwen2" (the same shape, no BOS) or "llama" (<s> and </s>, a
    TemplateProcessing that puts <s> before the text)."""
    vocab = base_vocab()
    specials = ["<s>", "</s>"] if style == "llama" else ["<|endoftext|>"]
    added = []
    for content in specials:
        vocab[content] = len(vocab)
        added.append(added_token(vocab[content], content))
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}
    if style == "llama":
        bos = vocab["<s>"]
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "<s>", "type_id": 1}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [bos], "tokens": ["<s>"]}}}
    else:
        post = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                "use_regex": True}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": None, "pre_tokenizer": byte_level, "post_processor": post,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                      "merges": ["%s %s" % pair for pair in MERGES]}}


# GPT-2's pre-split regex restricted to ASCII (\p{L} -> [A-Za-z], \p{N} -> [0-9]): the texts here
# are ASCII, which hand_bpe asserts.
ASCII_GPT2_SPLIT = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+"
                              r"|\s+(?!\S)|\s+")


def hand_bpe(text, tok):
    """The ids the merges give by hand: split, map bytes to characters, merge the lowest-ranked
    adjacent pair everywhere until none is ranked, then prepend the template's BOS if any."""
    assert text.isascii()
    vocab = tok["model"]["vocab"]
    rank = {tuple(m.split(" ")): r for r, m in enumerate(tok["model"]["merges"])}
    ids = []
    if tok["post_processor"]["type"] == "TemplateProcessing":
        ids.append(vocab["<s>"])
    for piece in ASCII_GPT2_SPLIT.findall(text):
        symbols = [BYTE_CHAR[b] for b in piece.encode("utf-8")]
        while len(symbols) > 1:
            ranked = [(rank[p], i) for i, p in enumerate(zip(symbols, symbols[1:])) if p in rank]
            if not ranked:
                break
            best = min(ranked)[0]
            symbols = list(merge_pair(symbols, MERGES[best]))
        ids.extend(vocab[s] for s in symbols)
    return ids


# ---------------------------------------------------------------------------------------------
# safetensors, written and read here with struct + numpy.

DTYPE_SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}


def bf16_bits(values):
    """float64 -> float32 -> its top 16 bits, rounded to nearest, ties to even."""
    bits = np.ascontiguousarray(values, dtype="<f4").view("<u4").astype(np.uint64)
    rounding = ((bits >> 16) & 1) + 0x7FFF
    return ((bits + rounding) >> 16).astype("<u2")


def encode_tensor(values, dtype):
    values = np.asarray(values, dtype=np.float64)
    if dtype == "F64":
        return values.astype("<f8").tobytes()
    if dtype == "F32":
        return values.astype("<f4").tobytes()
    if dtype == "F16":
        return values.astype("<f2").tobytes()
    if dtype == "BF16":
        return bf16_bits(values).tobytes()
    raise ValueError(dtype)


def decode_tensor(dtype, shape, raw):
    """Stored bytes -> float64, exactly: BF16 as (u16 << 16) reinterpreted as float32."""
    if dtype == "F64":
        flat = np.frombuffer(raw, dtype="<f8")
    elif dtype == "F32":
        flat = np.frombuffer(raw, dtype="<f4")
    elif dtype == "F16":
        flat = np.frombuffer(raw, dtype="<f2")
    elif dtype == "BF16":
        flat = (np.frombuffer(raw, dtype="<u2").astype("<u4") << 16).view("<f4")
    else:
        raise ValueError("unsupported dtype %s" % dtype)
    return flat.astype(np.float64).reshape(shape)


def write_safetensors(path, tensors, pad=True, metadata=None):
    """tensors: {name: (values, dtype)}. Laid out as the Python writer does: by alignment
    (descending), then name; the header padded with spaces to a multiple of 8 unless pad is
    False. Returns {name: raw bytes} as written."""
    order = sorted(tensors, key=lambda n: (-DTYPE_SIZE[tensors[n][1]], n))
    header, blobs, offset = {}, {}, 0
    for name in order:
        values, dtype = tensors[name]
        raw = encode_tensor(values, dtype)
        blobs[name] = raw
        header[name] = {"dtype": dtype, "shape": list(np.shape(values)),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    header["__metadata__"] = metadata if metadata is not None else {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    if pad:
        text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name in order:
            f.write(blobs[name])
    return blobs


def read_safetensors(path):
    """{name: (dtype, shape, raw bytes)}, checking the layout rules a reader must."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert 8 + n <= len(data), "header past the end of %s" % path
    header = json.loads(data[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    buffer = data[8 + n:]
    spans = sorted((tuple(h["data_offsets"]), name) for name, h in header.items())
    end = 0
    for (b, e), name in spans:
        assert b == end and e >= b, "gap or overlap at %s in %s" % (name, path)
        h = header[name]
        assert math.prod(h["shape"]) * DTYPE_SIZE[h["dtype"]] == e - b, name
        end = e
    assert end == len(buffer), "buffer not fully covered in %s" % path
    return {name: (h["dtype"], tuple(h["shape"]), buffer[h["data_offsets"][0]:
                                                         h["data_offsets"][1]])
            for name, h in header.items()}


def header_of(path):
    """(header length, header JSON) of a safetensors file."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return n, json.loads(f.read(n).decode("utf-8"))


def read_folder_weights(folder):
    """Every tensor of a model folder as float64 torch tensors, following the shard index."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            weight_map = json.load(f)["weight_map"]
        files = sorted(set(weight_map.values()))
    else:
        weight_map, files = None, ["model.safetensors"]
    weights = {}
    for name in files:
        for tensor, (dtype, shape, raw) in read_safetensors(os.path.join(folder, name)).items():
            assert weight_map is None or weight_map[tensor] == name, tensor
            weights[tensor] = torch.from_numpy(decode_tensor(dtype, shape, raw).copy())
    assert weight_map is None or set(weight_map) == set(weights)
    return weights


# ---------------------------------------------------------------------------------------------
# Tiny random checkpoints.


class Folder:
    def __init__(self, name, config, tensors, style, shards=None, note=""):
        self.name, self.config, self.tensors, self.style = name, config, tensors, style
        self.shards = shards  # None: one model.safetensors; else [set of names, ...]
        self.note = note
        self.path = None
        self.written = {}     # name -> raw bytes written


def normal(rng, shape, scale):
    return rng.standard_normal(shape) * scale


def gpt2_folder(name, seed, prefixed):
    rng = np.random.default_rng(seed)
    e, heads, layers, positions = (24, 3, 2, 64) if prefixed else (16, 2, 2, 64)
    inner = 40 if prefixed else 4 * e
    vocab = len(tokenizer_json("gpt2")["model"]["vocab"])
    t = {"wte.weight": normal(rng, (vocab, e), 0.5), "wpe.weight": normal(rng, (positions, e), 0.3)}
    for n in range(layers):
        p = "h.%d." % n
        for ln in ("ln_1", "ln_2"):
            t[p + ln + ".weight"] = 1 + normal(rng, (e,), 0.2)
            t[p + ln + ".bias"] = normal(rng, (e,), 0.1)
        t[p + "attn.c_attn.weight"] = normal(rng, (e, 3 * e), 0.3)
        t[p + "attn.c_attn.bias"] = normal(rng, (3 * e,), 0.1)
        t[p + "attn.c_proj.weight"] = normal(rng, (e, e), 0.2)
        t[p + "attn.c_proj.bias"] = normal(rng, (e,), 0.1)
        t[p + "mlp.c_fc.weight"] = normal(rng, (e, inner), 0.3)
        t[p + "mlp.c_fc.bias"] = normal(rng, (inner,), 0.1)
        t[p + "mlp.c_proj.weight"] = normal(rng, (inner, e), 0.2)
        t[p + "mlp.c_proj.bias"] = normal(rng, (e,), 0.1)
        t[p + "attn.bias"] = np.tril(np.ones((positions, positions))).reshape(1, 1, positions,
                                                                              positions)
        t[p + "attn.masked_bias"] = np.array(-1e4)
    t["ln_f.weight"] = 1 + normal(rng, (e,), 0.2)
    t["ln_f.bias"] = normal(rng, (e,), 0.1)
    if prefixed:
        t = {"transformer." + k: v for k, v in t.items()}
        t["lm_head.weight"] = normal(rng, (vocab, e), 0.5)
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": e,
              "n_head": heads, "n_layer": layers, "n_positions": positions, "n_ctx": positions,
              "vocab_size": vocab, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
              "n_inner": inner if prefixed else None, "scale_attn_weights": True,
              "tie_word_embeddings": not prefixed,
              "bos_token_id": vocab - 1, "eos_token_id": vocab - 1, "torch_dtype": "float32"}
    note = ("F32, 'transformer.' names, its own lm_head, n_inner 40, E 24, 3 heads" if prefixed
            else "F32, tied to wte, attn.bias/masked_bias buffers, E 16, 2 heads")
    return Folder(name, config, {k: (v, "F32") for k, v in t.items()}, "gpt2", note=note)


def llama_tensors(rng, hidden, heads, kv_heads, head_dim, inner, vocab, layers, biases, tied):
    """{name: values} in Llama's layout; biases: the projections that carry one."""
    t = {"model.embed_tokens.weight": normal(rng, (vocab, hidden), 0.5)}
    for n in range(layers):
        p = "model.layers.%d." % n
        t[p + "input_layernorm.weight"] = 1 + normal(rng, (hidden,), 0.2)
        t[p + "post_attention_layernorm.weight"] = 1 + normal(rng, (hidden,), 0.2)
        rows = {"q": heads * head_dim, "k": kv_heads * head_dim, "v": kv_heads * head_dim}
        for proj, out in rows.items():
            t[p + "self_attn.%s_proj.weight" % proj] = normal(rng, (out, hidden), 0.35)
        t[p + "self_attn.o_proj.weight"] = normal(rng, (hidden, heads * head_dim), 0.25)
        for proj in biases:
            out = hidden if proj == "o" else rows[proj]
            t[p + "self_attn.%s_proj.bias" % proj] = normal(rng, (out,), 0.2)
        t[p + "mlp.gate_proj.weight"] = normal(rng, (inner, hidden), 0.3)
        t[p + "mlp.up_proj.weight"] = normal(rng, (inner, hidden), 0.3)
        t[p + "mlp.down_proj.weight"] = normal(rng, (hidden, inner), 0.25)
    t["model.norm.weight"] = 1 + normal(rng, (hidden,), 0.2)
    if not tied:
        t["lm_head.weight"] = normal(rng, (vocab, hidden), 0.5)
    return t


def llama_config(model_type, hidden, heads, kv_heads, inner, vocab, layers, eps, theta, tied,
                 dtype, **extra):
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
            "mistral": "MistralForCausalLM"}[model_type]
    config = {"architectures": [arch], "model_type": model_type, "hidden_size": hidden,
              "intermediate_size": inner, "num_hidden_layers": layers,
              "num_attention_heads": heads, "num_key_value_heads": kv_heads,
              "hidden_act": "silu", "rms_norm_eps": eps, "rope_theta": theta,
              "rope_scaling": None, "tie_word_embeddings": tied, "max_position_embeddings": 64,
              "vocab_size": vocab, "torch_dtype": dtype, "attention_bias": False,
              "mlp_bias": False}
    config.update(extra)
    return config


def llama_folder(seed):
    rng = np.random.default_rng(seed)
    vocab = len(tokenizer_json("llama")["model"]["vocab"])
    t = llama_tensors(rng, 16, 4, 2, 4, 32, vocab, 2, (), tied=False)
    config = llama_config("llama", 16, 4, 2, 32, vocab, 2, 1e-5, 10000.0, False, "bfloat16",
                          bos_token_id=vocab - 2, eos_token_id=vocab - 1)
    first = {n for n in t if n.startswith("model.embed_tokens") or ".layers.0." in n}
    return Folder("llama", config, {k: (v, "BF16") for k, v in t.items()}, "llama",
                  shards=[first, set(t) - first],
                  note="BF16, two shards + index, GQA 4 heads / 2 kv, hd 4, theta 1e4, lm_head")


def llama_tied_folder(seed):
    rng = np.random.default_rng(seed)
    vocab = len(tokenizer_json("llama")["model"]["vocab"])
    t = llama_tensors(rng, 16, 2, 2, 12, 24, vocab, 2, ("q", "k", "v", "o"), tied=True)
    # L0 = 32 puts the 6 frequencies of hd 12, theta 1e4 (wavelengths 6.3, 29, 135, ...) in all
    # three llama3 bands: kept (< 8), smoothed (8..32) and divided by the factor (> 32).
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 32}
    config = llama_config("llama", 16, 2, 2, 24, vocab, 2, 1e-5, 10000.0, True, "float16",
                          head_dim=12, rope_scaling=scaling, attention_bias=True,
                          bos_token_id=vocab - 2, eos_token_id=vocab - 1)
    return Folder("llama_tied_headdim", config, {k: (v, "F16") for k, v in t.items()}, "llama",
                  note="F16, tied to embed_tokens, head_dim 12 with hidden 16 / 2 heads, llama3 "
                       "rope_scaling (all 3 bands), q/k/v/o biases")


def qwen2_folder(seed):
    rng = np.random.default_rng(seed)
    tok_vocab = len(tokenizer_json("qwen2")["model"]["vocab"])
    vocab = tok_vocab + 10  # the embedding has more rows than the tokenizer, as Qwen2.5's does
    t = llama_tensors(rng, 16, 4, 1, 4, 32, vocab, 2, ("q", "k", "v"), tied=True)

    def dtype(name):
        if name.endswith("bias") or "norm" in name or "v_proj" in name or "down_proj" in name:
            return "F32"
        return "BF16"
    # sliding_window is set (small, so that it would show) but use_sliding_window is false: every
    # layer attends to all earlier tokens, as in Qwen2.5's published configs.
    config = llama_config("qwen2", 16, 4, 1, 32, vocab, 2, 1e-6, 1000000.0, True, "bfloat16",
                          use_sliding_window=False, sliding_window=4, max_window_layers=1,
                          bos_token_id=tok_vocab - 1, eos_token_id=tok_vocab - 1)
    return Folder("qwen2", config, {k: (v, dtype(k)) for k, v in t.items()}, "qwen2",
                  note="F32/BF16 mix, MQA 4 heads / 1 kv, q/k/v biases, theta 1e6, eps 1e-6, tied, "
                       "vocab 10 rows past the tokenizer, sliding_window 4 unused")


def mistral_folder(seed):
    rng = np.random.default_rng(seed)
    vocab = len(tokenizer_json("llama")["model"]["vocab"])
    t = llama_tensors(rng, 16, 4, 2, 4, 32, vocab, 2, (), tied=False)
    config = llama_config("mistral", 16, 4, 2, 32, vocab, 2, 1e-5, 10000.0, False, "float32",
                          sliding_window=3, bos_token_id=vocab - 2, eos_token_id=vocab - 1)
    return Folder("mistral", config, {k: (v, "F32") for k, v in t.items()}, "llama",
                  note="F32, sliding_window 3, GQA 4 heads / 2 kv, lm_head")


def all_folders():
    return [gpt2_folder("gpt2", 11, False), gpt2_folder("gpt2_prefixed", 12, True),
            llama_folder(13), llama_tied_folder(14), qwen2_folder(15), mistral_folder(16)]


def write_folder(folder, root):
    path = os.path.join(root, folder.name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(folder.config, f, indent=2)
    with open(os.path.join(path, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(folder.style), f, ensure_ascii=False, indent=2)
    if folder.shards is None:
        folder.written = write_safetensors(os.path.join(path, "model.safetensors"), folder.tensors)
    else:
        weight_map, total = {}, 0
        for i, names in enumerate(folder.shards):
            file = "model-%05d-of-%05d.safetensors" % (i + 1, len(folder.shards))
            blobs = write_safetensors(os.path.join(path, file),
                                      {n: folder.tensors[n] for n in names})
            folder.written.update(blobs)
            total += sum(len(b) for b in blobs.values())
            weight_map.update({n: file for n in names})
        index = {"metadata": {"total_size": total},
                 "weight_map": {n: weight_map[n] for n in sorted(weight_map)}}
        with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=2)
    folder.path = path


# ---------------------------------------------------------------------------------------------
# The reference forward passes (torch float64).


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def gelu_tanh(u):
    return 0.5 * u * (1 + torch.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))


def causal_softmax(scores, window=None):
    """scores (heads, T, T) -> (weights, masked scores); key j visible to query i iff j <= i and,
    with a window W, i - W < j."""
    t = scores.shape[-1]
    i = torch.arange(t)[:, None]
    j = torch.arange(t)[None, :]
    visible = j <= i
    if window is not None:
        visible = visible & (j > i - window)
    masked = scores.masked_fill(~visible, float("-inf"))
    return torch.softmax(masked, dim=-1), masked


def strip(weights, prefix):
    return {(k[len(prefix):] if k.startswith(prefix) else k): v for k, v in weights.items()}


def ablate_heads(o, layer, ablate, mode):
    """o (heads, T, hd): each query head's output P v before the output projection. Every (layer,
    h) in ablate replaces o[h] by zeros (mode "zero") or by its mean over the T positions in every
    row ("mean"); the other heads are kept. ablate None or empty: o itself."""
    if not ablate:
        return o
    assert mode in ("zero", "mean"), mode
    o = o.clone()
    for n, h in ablate:
        if n == layer:
            o[h] = 0 if mode == "zero" else o[h].mean(0, keepdim=True).expand_as(o[h])
    return o


def gpt2_forward(config, weights, ids, conv_as_linear=False, ablate=None, ablate_mode="zero",
                 outputs=None):
    """(logits (T, V), [weights (heads, T, T) per layer]). conv_as_linear: every Conv1D computed
    as a Linear on the transposed weight, for self-check (a). ablate: {(layer, head), ...} whose
    outputs ablate_heads replaces (ablate_mode). outputs, a list, receives each layer's attention
    output (T, E) after the output projection and its bias."""
    w = strip(weights, "transformer.")
    e, heads = config["n_embd"], config["n_head"]
    eps, dh = config["layer_norm_epsilon"], config["n_embd"] // config["n_head"]
    ids = torch.tensor(ids)
    t = len(ids)
    assert t <= config["n_positions"]

    def conv1d(x, name):
        if conv_as_linear:
            return torch.nn.functional.linear(x, w[name + ".weight"].T, w[name + ".bias"])
        return x @ w[name + ".weight"] + w[name + ".bias"]

    x = w["wte.weight"][ids] + w["wpe.weight"][torch.arange(t)]
    layers = []
    for n in range(config["n_layer"]):
        p = "h.%d." % n
        a = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = conv1d(a, p + "attn.c_attn")
        q, k, v = (qkv[:, s * e:(s + 1) * e].reshape(t, heads, dh).transpose(0, 1)
                   for s in range(3))
        probs, _ = causal_softmax(q @ k.transpose(1, 2) / math.sqrt(dh))
        layers.append(probs)
        o = ablate_heads(probs @ v, n, ablate, ablate_mode)
        attention = conv1d(o.transpose(0, 1).reshape(t, e), p + "attn.c_proj")
        if outputs is not None:
            outputs.append(attention)
        x = x + attention
        m = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        x = x + conv1d(gelu_tanh(conv1d(m, p + "mlp.c_fc")), p + "mlp.c_proj")
    # transformers ties lm_head to wte when tie_word_embeddings (GPT2Config's default is true).
    head = w["wte.weight"] if config.get("tie_word_embeddings", True) else w["lm_head.weight"]
    return layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps) @ head.T, layers


def rms_norm(x, weight, eps):
    return weight * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)


def head_dim_of(config):
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def inv_freq_of(config):
    """theta_base^(-2i/hd) for i < hd/2, with llama3 scaling when rope_scaling asks for it."""
    hd = head_dim_of(config)
    inv = config.get("rope_theta", 10000.0) ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    scaling = config.get("rope_scaling")
    if scaling is None:
        return inv
    kind = scaling.get("rope_type", scaling.get("type"))
    assert kind == "llama3", "the reference knows no rope_scaling %r" % kind
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    l0 = scaling["original_max_position_embeddings"]
    out = []
    for f in inv.tolist():
        wavelength = 2 * math.pi / f
        if wavelength < l0 / high:
            out.append(f)
        elif wavelength > l0 / low:
            out.append(f / factor)
        else:
            s = (l0 / wavelength - low) / (high - low)
            out.append((1 - s) * f / factor + s * f)
    return torch.tensor(out, dtype=torch.float64)  # float64 as everything here (torch's default is float32)


def rope(x, inv_freq, mode):
    """x (heads, T, hd) rotated by angle t * inv_freq_i; mode "half" pairs (i, i + hd/2)
    (Hugging Face's rotate_half), "interleaved" pairs (2i, 2i + 1)."""
    t = x.shape[1]
    angle = torch.arange(t, dtype=torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = torch.cos(angle), torch.sin(angle)
    if mode == "half":
        half = x.shape[-1] // 2
        a, b = x[..., :half], x[..., half:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)


def window_of(config, layer):
    if config["model_type"] == "mistral":
        return config.get("sliding_window")
    if config["model_type"] == "qwen2" and config.get("use_sliding_window"):
        if layer >= config.get("max_window_layers", 0):
            return config.get("sliding_window")
    return None


def llama_forward(config, weights, ids, rope_mode="half", scores_out=None, ablate=None,
                  ablate_mode="zero", outputs=None):
    """(logits (T, V), [weights (heads, T, T) per layer]) for Llama, Qwen2 and Mistral.
    scores_out, a list, receives each layer's masked scaled scores. ablate, ablate_mode and
    outputs as in gpt2_forward (an ablated query head's KV head is shared and untouched)."""
    w = strip(weights, "model.")
    heads, kv = config["num_attention_heads"], config.get("num_key_value_heads") or \
        config["num_attention_heads"]
    hd, eps = head_dim_of(config), config["rms_norm_eps"]
    inv_freq = inv_freq_of(config)
    ids = torch.tensor(ids)
    t = len(ids)
    x = w["embed_tokens.weight"][ids]
    group = heads // kv
    layers = []

    def linear(a, name):
        y = a @ w[name + ".weight"].T
        return y + w[name + ".bias"] if name + ".bias" in w else y

    for n in range(config["num_hidden_layers"]):
        p = "layers.%d." % n
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = linear(a, p + "self_attn.q_proj").reshape(t, heads, hd).transpose(0, 1)
        k = linear(a, p + "self_attn.k_proj").reshape(t, kv, hd).transpose(0, 1)
        v = linear(a, p + "self_attn.v_proj").reshape(t, kv, hd).transpose(0, 1)
        q, k = rope(q, inv_freq, rope_mode), rope(k, inv_freq, rope_mode)
        kv_of = torch.arange(heads) // group
        scores = q @ k[kv_of].transpose(1, 2) / math.sqrt(hd)
        probs, masked = causal_softmax(scores, window_of(config, n))
        layers.append(probs)
        if scores_out is not None:
            scores_out.append(masked)
        o = ablate_heads(probs @ v[kv_of], n, ablate, ablate_mode)
        attention = linear(o.transpose(0, 1).reshape(t, heads * hd), p + "self_attn.o_proj")
        if outputs is not None:
            outputs.append(attention)
        x = x + attention
        m = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = linear(m, p + "mlp.gate_proj")
        x = x + linear(torch.nn.functional.silu(gate) * linear(m, p + "mlp.up_proj"),
                       p + "mlp.down_proj")
    # Tied when the config says so (LlamaConfig's default is false), as transformers ties lm_head.
    head = w["embed_tokens.weight"] if config.get("tie_word_embeddings", False) else weights["lm_head.weight"]
    return rms_norm(x, w["norm.weight"], eps) @ head.T, layers


def forward(config, weights, ids, **options):
    if config["model_type"] == "gpt2":
        return gpt2_forward(config, weights, ids, **options)
    return llama_forward(config, weights, ids, **options)


# ---------------------------------------------------------------------------------------------
# Comparison.


def compare(label, expected, found, tolerance=TOLERANCE):
    """None when found (nested lists) equals expected (tensor) within tolerance * max(1, |e|),
    else what differs."""
    expected = np.asarray(expected, dtype=np.float64)
    try:
        found = np.asarray(found, dtype=np.float64)
    except (TypeError, ValueError):
        return "%s is not a rectangular array of numbers" % label
    if found.shape != expected.shape:
        return "%s shape %s, expected %s" % (label, list(found.shape), list(expected.shape))
    if found.size == 0:
        return None
    finite = np.isfinite(expected)
    diff = np.where(finite, np.abs(found - expected), np.where(found == expected, 0, np.inf))
    diff = np.nan_to_num(diff, nan=np.inf)
    excess = diff / (tolerance * np.maximum(1, np.abs(np.where(finite, expected, 1))))
    worst = np.unravel_index(np.argmax(excess), excess.shape)
    if excess[worst] <= 1:
        return None
    return "%s max diff %.3g at %s (expected %.17g, found %.17g)" % (
        label, diff[worst], list(int(i) for i in worst), expected[worst], found[worst])


def compare_run(result, logits, layers):
    """Every difference between a lab `run --json` result and the reference's."""
    problems = []
    problem = compare("logits", logits, result.get("logits"))
    if problem:
        problems.append(problem)
    found_layers = result.get("layers")
    if not isinstance(found_layers, list) or len(found_layers) != len(layers):
        return problems + ["layers: %s, expected %d" % (
            "%d" % len(found_layers) if isinstance(found_layers, list) else "missing", len(layers))]
    for n, (layer, probs) in enumerate(zip(found_layers, layers)):
        heads = ((layer or {}).get("attention") or {}).get("heads")
        if not isinstance(heads, list) or len(heads) != probs.shape[0]:
            problems.append("layer %d: %s heads, expected %d" % (
                n, len(heads) if isinstance(heads, list) else "no", probs.shape[0]))
            continue
        for h, head in enumerate(heads):
            problem = compare("layer %d head %d weights" % (n, h), probs[h],
                              (head or {}).get("weights"))
            if problem:
                problems.append(problem)
    return problems


# ---------------------------------------------------------------------------------------------
# Self-checks of the reference.


class Report:
    def __init__(self):
        self.failed = 0

    def check(self, ok, label, detail=""):
        if ok:
            print("ok   self-check %s" % label)
        else:
            self.failed += 1
            print("FAIL self-check %s%s" % (label, ": " + detail if detail else ""))

    def close(self, label, a, b, tolerance=SELF_TOLERANCE):
        problem = compare("values", np.asarray(a), np.asarray(b).tolist(), tolerance)
        self.check(problem is None, label, problem or "")


def unpermute_rows(w, heads, hd):
    """Hugging Face (rotate_half) rows -> interleaved rows: W_int[h hd + 2i + j] =
    W_hf[h hd + j hd/2 + i]."""
    order = [h * hd + j * (hd // 2) + i for h in range(heads) for i in range(hd // 2)
             for j in range(2)]
    return w[order]


def check_conv1d(report, folder, weights, ids):
    a, la = gpt2_forward(folder.config, weights, ids)
    b, lb = gpt2_forward(folder.config, weights, ids, conv_as_linear=True)
    report.close("(a) %s: Conv1D x W + b = Linear(W^T) logits" % folder.name, a, b)
    report.close("(a) %s: Conv1D = Linear layer 1 weights" % folder.name, la[-1], lb[-1])


def check_rope_pairing(report, folder, weights, ids):
    config = folder.config
    hd = head_dim_of(config)
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    interleaved = dict(weights)
    for name in weights:
        for proj, count in (("q_proj", heads), ("k_proj", kv)):
            if ".self_attn.%s." % proj in name:
                interleaved[name] = unpermute_rows(weights[name], count, hd)
    s_half, s_int = [], []
    a, _ = llama_forward(config, weights, ids, "half", s_half)
    b, _ = llama_forward(config, interleaved, ids, "interleaved", s_int)
    for n, (x, y) in enumerate(zip(s_half, s_int)):
        report.close("(b) %s: rotate_half = interleaved on un-permuted rows, layer %d scores"
                     % (folder.name, n), torch.nan_to_num(x, neginf=-1e300),
                     torch.nan_to_num(y, neginf=-1e300))
    report.close("(b) %s: rotate_half = interleaved, logits" % folder.name, a, b)
    # The permutation matters: the interleaved pass on the Hugging Face rows differs.
    c, _ = llama_forward(config, weights, ids, "interleaved")
    report.check(float((a - c).abs().max()) > 1e-3,
                 "(b) %s: interleaved RoPE on Hugging Face rows differs" % folder.name)


def check_gqa(report, folder, weights, ids):
    config = folder.config
    heads, kv, hd = config["num_attention_heads"], config["num_key_value_heads"], \
        head_dim_of(config)
    mha, group = dict(weights), heads // kv
    for name, value in weights.items():
        if ".self_attn.k_proj." in name or ".self_attn.v_proj." in name:
            rows = [(h // group) * hd + d for h in range(heads) for d in range(hd)]
            mha[name] = value[rows]
    a, la = llama_forward(config, weights, ids)
    b, lb = llama_forward(dict(config, num_key_value_heads=heads), mha, ids)
    report.close("(c) %s: GQA %d/%d = MHA on repeated K/V weights, logits" % (
        folder.name, heads, kv), a, b)
    report.close("(c) %s: GQA = MHA, layer 1 weights" % folder.name, la[-1], lb[-1])


def check_tied(report, folder, weights, ids):
    embed = "wte.weight" if folder.config["model_type"] == "gpt2" else "model.embed_tokens.weight"
    a, _ = forward(folder.config, weights, ids)
    if "lm_head.weight" not in weights:
        b, _ = forward(dict(folder.config, tie_word_embeddings=False),
                       dict(weights, **{"lm_head.weight": weights[embed].clone()}), ids)
        report.close("(d) %s: tied = explicit lm_head equal to the embedding" % folder.name, a, b)
    else:
        b, _ = forward(dict(folder.config, tie_word_embeddings=True), weights, ids)
        report.check(float((a - b).abs().max()) > 1e-3,
                     "(d) %s: its own lm_head is used (the embedding gives other logits)"
                     % folder.name)


def check_safetensors(report, folders, work):
    """(e) Bit-exact read-back of every folder and of a file with every dtype, a rank-0 and an
    empty tensor and an unaligned header; the dtype test vectors and BF16 rounding."""
    for folder in folders:
        files = [f for f in os.listdir(folder.path) if f.endswith(".safetensors")]
        read = {}
        aligned = True
        for file in files:
            path = os.path.join(folder.path, file)
            read.update(read_safetensors(path))
            n, header = header_of(path)
            # Every tensor starts at a file offset that is a multiple of its element size.
            aligned &= n % 8 == 0 and all(
                (8 + n + h["data_offsets"][0]) % DTYPE_SIZE[h["dtype"]] == 0
                for name, h in header.items() if name != "__metadata__")
        same = set(read) == set(folder.written) and all(
            read[n][2] == folder.written[n] and read[n][0] == folder.tensors[n][1]
            and read[n][1] == np.shape(folder.tensors[n][0]) for n in read)
        report.check(same and aligned, "(e) %s: %d tensors read back bit-exactly, aligned" % (
            folder.name, len(read)))
    rng = np.random.default_rng(5)
    values = rng.standard_normal((3, 5))
    tensors = {"a.f64": (values, "F64"), "b.f32": (values, "F32"), "c.f16": (values, "F16"),
               "d.bf16": (values, "BF16"), "e.scalar": (np.array(2.5), "F32"),
               "f.empty": (np.zeros((0, 3)), "F32")}
    for extra in range(8):
        path = os.path.join(work, "unaligned.safetensors")
        written = write_safetensors(path, tensors, pad=False, metadata={"format": "pt",
                                                                        "x": "y" * extra})
        n, _ = header_of(path)
        if n % 8:
            break
    read = read_safetensors(path)
    report.check(n % 8 != 0 and all(read[k][2] == written[k] for k in tensors),
                 "(e) unaligned header (%d bytes): every dtype, rank 0 and empty read back" % n)
    decoded = {k: decode_tensor(*read[k]) for k in tensors}
    exact = (np.array_equal(decoded["a.f64"], values)
             and np.array_equal(decoded["b.f32"], values.astype(np.float32))
             and np.array_equal(decoded["c.f16"], values.astype(np.float16))
             and decoded["e.scalar"].shape == () and decoded["e.scalar"] == 2.5
             and decoded["f.empty"].shape == (0, 3))
    bf = decoded["d.bf16"]
    f32 = values.astype(np.float32)
    # Round to nearest: within half a BF16 step (2^-8 relative) of the float32.
    near = np.all(np.abs(bf - f32) <= np.abs(f32) * 2.0 ** -8)
    report.check(exact and near, "(e) decoded values: F64/F32/F16 exact, BF16 rounded to nearest")
    vectors = [decode_tensor("BF16", (), struct.pack("<H", 0x3F80)) == 1.0,
               decode_tensor("F16", (), struct.pack("<H", 0x3C00)) == 1.0,
               decode_tensor("F16", (), struct.pack("<H", 0x0001)) == 2.0 ** -24,
               decode_tensor("F16", (), struct.pack("<H", 0x7C00)) == math.inf]
    ties = np.array([0x3F808000, 0x3F818000, 0x3F808001], dtype="<u4").view("<f4")
    vectors.append(bf16_bits(ties.astype(np.float64)).tolist() == [0x3F80, 0x3F82, 0x3F81])
    report.check(all(vectors), "(e) test vectors: BF16 0x3F80, F16 0x3C00/0x0001/0x7C00, "
                 "BF16 ties to even")


def node_ids(npm, tokenizer_path, texts):
    job = {"tokenizer_json_path": tokenizer_path, "tokenizer_config": None, "texts": texts}
    out = subprocess.run(["node", NODE_SCRIPT, "--npm", npm], input=json.dumps(job),
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip() or "node exited %d" % out.returncode)
    return json.loads(out.stdout)["ids"]


def check_tokenizer(report, folders, npm):
    """(f) The ids of the merges applied by hand, a literal list, and Hugging Face's JavaScript
    tokenizer on the written tokenizer.json."""
    vocab = base_vocab()
    literal = [vocab["the"], vocab["Ġcat"], vocab["Ġsat"]]
    styles = {}
    for folder in folders:
        styles.setdefault(folder.style, folder)
    for style, folder in sorted(styles.items()):
        tok = tokenizer_json(style)
        expected = ([tok["model"]["vocab"]["<s>"]] if style == "llama" else []) + literal
        report.check(hand_bpe(TEXTS[0], tok) == expected,
                     "(f) %s tokenizer: %r by hand = %s" % (style, TEXTS[0], expected))
        long_ids = hand_bpe(TEXTS[1], tok)
        report.check(len(long_ids) >= 12, "(f) %s tokenizer: %r is %d tokens" % (
            style, TEXTS[1], len(long_ids)))
        if npm is None:
            print("note (f) %s: @huggingface/tokenizers not found (--npm): the JavaScript "
                  "tokenizer check is skipped" % style)
            continue
        try:
            js = node_ids(npm, os.path.join(folder.path, "tokenizer.json"), TEXTS)
        except (OSError, RuntimeError, subprocess.SubprocessError, ValueError) as e:
            report.check(False, "(f) %s tokenizer via @huggingface/tokenizers" % style, str(e))
            continue
        report.check(js == [hand_bpe(text, tok) for text in TEXTS],
                     "(f) %s tokenizer: @huggingface/tokenizers gives the hand ids" % style,
                     "it gives %s" % js)


def check_masks_and_bands(report, folders, weights_of):
    """The sliding window and the llama3 bands are exercised by these folders and texts."""
    for folder in folders:
        config = folder.config
        ids = hand_bpe(TEXTS[1], tokenizer_json(folder.style))
        if config["model_type"] == "mistral":
            a, layers = llama_forward(config, weights_of[folder.name], ids)
            b, _ = llama_forward(dict(config, sliding_window=None), weights_of[folder.name], ids)
            outside = torch.tril(torch.ones(len(ids), len(ids)), diagonal=-3).bool()
            report.check(float(layers[0][:, outside].abs().max()) == 0
                         and float((a - b).abs().max()) > 1e-3,
                         "mistral: keys at i - 3 and before get weight 0, and the window "
                         "changes the logits")
        if config["model_type"] == "qwen2":
            # The small sliding_window would change the logits if use_sliding_window were true.
            a, _ = llama_forward(config, weights_of[folder.name], ids)
            b, _ = llama_forward(dict(config, use_sliding_window=True), weights_of[folder.name],
                                 ids)
            report.check(float((a - b).abs().max()) > 1e-3,
                         "qwen2: sliding_window %d with use_sliding_window false is unused, and "
                         "would matter" % config["sliding_window"])
        if config.get("rope_scaling"):
            scaling = config["rope_scaling"]
            hd = head_dim_of(config)
            inv = config["rope_theta"] ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
            lengths = 2 * math.pi / inv
            l0 = scaling["original_max_position_embeddings"]
            kept = int((lengths < l0 / scaling["high_freq_factor"]).sum())
            divided = int((lengths > l0 / scaling["low_freq_factor"]).sum())
            smooth = len(lengths) - kept - divided
            report.check(kept and divided and smooth, "%s: llama3 bands kept %d, smoothed %d, "
                         "divided %d" % (folder.name, kept, smooth, divided))


def check_comparer(report, folder, weights):
    """The comparison passes the reference's own result and flags a change of 1e-7."""
    ids = hand_bpe(TEXTS[1], tokenizer_json(folder.style))
    logits, layers = forward(folder.config, weights, ids)
    result = {"ids": ids, "logits": logits.tolist(),
              "layers": [{"attention": {"heads": [{"weights": p.tolist()} for p in probs]}}
                         for probs in layers]}
    report.check(compare_run(result, logits, layers) == [], "comparer passes the reference")
    result["layers"][1]["attention"]["heads"][0]["weights"][5][2] += 1e-7
    result["logits"][3][7] *= 1 + 1e-8
    problems = compare_run(result, logits, layers)
    report.check(len(problems) == 2 and problems[0].startswith("logits max diff")
                 and "at [3, 7]" in problems[0] and "layer 1 head 0 weights" in problems[1]
                 and "at [5, 2]" in problems[1], "comparer flags a change of 1e-7", str(problems))


def self_checks(folders, weights_of, work, npm):
    report = Report()
    check_safetensors(report, folders, work)
    check_tokenizer(report, folders, npm)
    for folder in folders:
        weights = weights_of[folder.name]
        ids = hand_bpe(TEXTS[1], tokenizer_json(folder.style))
        if folder.config["model_type"] == "gpt2":
            check_conv1d(report, folder, weights, ids)
        else:
            check_rope_pairing(report, folder, weights, ids)
            if folder.config["num_key_value_heads"] < folder.config["num_attention_heads"]:
                check_gqa(report, folder, weights, ids)
        check_tied(report, folder, weights, ids)
    check_masks_and_bands(report, folders, weights_of)
    check_comparer(report, folders[2], weights_of[folders[2].name])
    return report.failed


# ---------------------------------------------------------------------------------------------
# The lab.


def run_lab(binary, args):
    """(parsed JSON, None) or (None, what went wrong)."""
    try:
        out = subprocess.run([binary] + args, capture_output=True, timeout=LAB_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "%s timed out after %d s" % (args[0], LAB_TIMEOUT)
    if out.returncode != 0:
        lines = out.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "%s exited %d: %s" % (args[0], out.returncode, lines[0] if lines else "")
    try:
        return json.loads(out.stdout.decode("utf-8")), None
    except ValueError as e:
        return None, "%s printed no JSON object: %s" % (args[0], e)


def check_lab(binary, folder, weights, text):
    """The problems of one folder and text, [] when the lab agrees."""
    tokenized, error = run_lab(binary, ["tokenize", folder.path, "--text", text, "--json"])
    if error:
        return [error]
    result, error = run_lab(binary, ["run", folder.path, "--text", text, "--json"])
    if error:
        return [error]
    ids = result.get("ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, int) for i in ids):
        return ["run printed no ids"]
    problems = []
    if ids != tokenized.get("ids"):
        problems.append("ids %s, tokenize gives %s" % (ids, tokenized.get("ids")))
    if result.get("tokens") != tokenized.get("tokens"):
        problems.append("tokens %s, tokenize gives %s" % (result.get("tokens"),
                                                          tokenized.get("tokens")))
    vocab = weights["lm_head.weight" if "lm_head.weight" in weights else
                    ("transformer.wte.weight" if "transformer.wte.weight" in weights else
                     "wte.weight" if "wte.weight" in weights else
                     "model.embed_tokens.weight")].shape[0]
    if max(ids) >= vocab or min(ids) < 0:
        return problems + ["ids %s outside the vocabulary of %d" % (ids, vocab)]
    logits, layers = forward(folder.config, weights, ids)
    return problems + compare_run(result, logits, layers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", help="the attention-lab executable")
    parser.add_argument("--work", required=True, help="folder for the model folders")
    parser.add_argument("--npm", help="npm prefix holding @huggingface/tokenizers "
                        "(default: build/npm of this checkout, when it has it)")
    parser.add_argument("--reference-only", action="store_true",
                        help="build the folders and run the self-checks without the lab")
    args = parser.parse_args()
    start = time.monotonic()
    torch.set_num_threads(1)
    if not args.reference_only and (not args.binary or not os.access(args.binary, os.X_OK)):
        print("checkpoint cross-check: cannot run the binary %r" % args.binary)
        return 2
    npm = args.npm or os.path.join(HERE, "..", "..", "build", "npm")
    if (not os.path.isdir(os.path.join(npm, "node_modules", "@huggingface", "tokenizers"))
            or shutil.which("node") is None):
        npm = None
    os.makedirs(args.work, exist_ok=True)
    folders = all_folders()
    for folder in folders:
        write_folder(folder, args.work)
        print("wrote %s (%s)" % (folder.path, folder.note))
    weights_of = {f.name: read_folder_weights(f.path) for f in folders}
    failed_checks = self_checks(folders, weights_of, args.work, npm)
    if args.reference_only:
        print("checkpoint reference: %d folders, %d self-checks failed (%.1f s)" % (
            len(folders), failed_checks, time.monotonic() - start))
        return 1 if failed_checks else 0
    failed = 0
    for folder in folders:
        for text in TEXTS:
            problems = check_lab(args.binary, folder, weights_of[folder.name], text)
            if problems:
                failed += 1
                print("FAIL %s: %s: %s" % (folder.name, text, "; ".join(problems[:4]) +
                                           ("; and %d more" % (len(problems) - 4)
                                            if len(problems) > 4 else "")))
            else:
                print("ok   %s: %s" % (folder.name, text))
    print("checkpoint cross-check: %d folders, %d texts, %d failed (%d self-checks failed, "
          "%.1f s)" % (len(folders), len(TEXTS), failed, failed_checks,
                       time.monotonic() - start))
    return 1 if failed or failed_checks else 0


if __name__ == "__main__":
    sys.exit(main())
