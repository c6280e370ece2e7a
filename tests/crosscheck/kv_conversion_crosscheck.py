#!/usr/bin/python3
"""Independent NumPy reference for KV-cache conversion (`attention-lab convert`) and `eval`.

Why this exists: `convert` claims to shrink a real model's KV cache (fewer key/value heads, or a
low-rank latent) using nothing but the model's own weights, and to say honestly what that costs
(relative weight error, loss, top-1 agreement, KL).  Those numbers are only worth reading if the
conversion is the one described and the evaluation is done on the right tokens.  This script
writes the tiny Hugging Face checkpoints of checkpoint_crosscheck.py (imported: its folders,
tokenizer and float64 forward pass, written from the formulas), converts their weights itself in
NumPy from the spec, never from the C++ sources:

  W_K, W_V: each layer's key and value projections as x W, (d_model, G0 d) (GPT-2: the K and V
          column blocks of c_attn.weight; Llama family: k_proj.weight^T, v_proj.weight^T).
  GQA to G (G divides G0): each original KV head's block of W_K, W_V, b_K, b_V is replaced by the
          mean over its group of G0/G consecutive heads (= G new heads, query head j reading new
          head floor(j / (H/G))).
  MLA to C: A = [W_K | W_V] = U S V^T (numpy.linalg.svd, full_matrices=False); W_K, W_V are
          replaced by the K and V columns of U[:, :C] S[:C] V^T[:C] (biases unchanged; RoPE turns
          the keys as before).  C <= min(d_model, 2 G0 d).
  k_error = ||W_K' - W_K||_F / ||W_K||_F, v_error likewise (0 for a layer left alone);
  kv_bytes_per_token = 2 bytes x sum over layers of 2 (KV heads) d, or C for an MLA layer.

and evaluates both models on the text the way `eval` does: the ids of `tokenize` in windows of
W = min(n_positions | max_position_embeddings, 1024) tokens, each from position 0, window k
starting at the last id of window k-1 (ids[k (W-1) : k (W-1) + W], until a window reaches the
last id), so that every id after the first is predicted by exactly one window;
loss = mean over positions i = 0..len-2 of every window of -log softmax(logits[i])[ids[i+1]],
perplexity = e^loss; top1_agreement = share of positions whose argmax (lowest index on a tie) is
the same; kl = mean over positions of max(0, sum_v p_o (log p_o - log p_c)).

Cases: every folder (GPT-2 MHA 2 and 3 heads, Llama GQA 4/2, Llama head_dim 12 with biases,
Qwen2 MQA with q/k/v biases, Mistral with a sliding window, and one made here with the same
functions: Qwen2 GQA 8/4 with q/k/v biases and 4 layers, whose G = 2 pools pairs), every divisor
G of G0, MLA at C = 1, a middle C and full rank, each with --eval on a text of 129 tokens
(windows of 64, 64 and 3, predicting 63 + 63 + 2 = 128); --layers on one layer for each target
(and "0-1", "0,1", "0-1,3", "1,3" and no --eval on some); `eval` alone on a short text and on
128 and 129 tokens for each tokenizer style.  Every number the lab prints must equal the
reference's to 1e-9 (absolute, relative where |expected| > 1), the counts exactly.  Beyond the
reference: G = G0 and full-rank MLA must reproduce the original (losses equal, kl < 1e-9, top-1
agreement 1, errors < 1e-9), and the lab's MLA errors must obey Eckart-Young:
(k_error ||W_K||)^2 + (v_error ||W_V||)^2 = sum of S[C:]^2.  Bad inputs (a G that does not
divide, C out of range or over the rank, bad --layers, a missing or misplaced option, an unknown
target, a text of one token) exit 2 with nothing on stdout and the exact message.

The ladder, `convert FOLDER --ladder --eval FILE [--layers LIST] --json`: one JSON line
{"original": {"kv_bytes_per_token", "loss", "perplexity"}, "points": [...]}, the points GQA at
every divisor G < G0 in decreasing G ({"to": "gqa", "kv_heads": G, ...}), then MLA
({"to": "mla", "latent_dim": C, ...}) at floor(r f) for f = 1, 3/4, 1/2, 3/8, 1/4, 1/8, 1/16,
1/32, each at least 1 and kept only the first time it appears, r = min over the converted layers
of min(d_model, 2 G0 d).  Each point has the "kv_bytes_per_token", "loss", "perplexity",
"top1_agreement", "kl" of `convert --to` at that point (its "converted") and its "layers"; the
"original" is that command's.  Checked on gpt2 (gqa 1, C = 16 .. 1), gpt2_prefixed (G0 3: gqa 1,
C = 24, 18, 12, 9, 6, 3, 1), qwen2_grouped (G0 4: gqa 2, 1, C = 32 .. 1) on all layers and on
"1,3", and the RoPE folders llama_tied_headdim (r = d_model 16, not 2 G0 d = 48) on "1" and
qwen2 (MQA, so no GQA point; r = 2 G0 d = 8) on "0": the names of the points in order exactly,
every number against the reference's conversion at that point to the tolerance above, and on
each point the identity (full-rank MLA) and Eckart-Young checks.  --ladder without --eval, or
with --to, --kv-heads or --latent-dim, and convert with neither --to nor --ladder exit 2 with
the exact message.  Self-checks: the widths for r = 32, 24, 16, 8, 5, 1 as worked by hand, the
points of qwen2_grouped and qwen2, and the ladder comparison flags a swapped pair of points, a
missing one and a perturbed error.

Self-checks of the reference, run always (alone with --reference-only): pooling at G = G0 is the
identity; the rank-C reconstruction at full rank is A, and its error obeys Eckart-Young; pooling
to G < G0 and a small C change the logits; the window split covers the ids; the comparison flags
a perturbed lab number.

Run:  /usr/bin/python3 kv_conversion_crosscheck.py --binary build/app/attention-lab \\
          --work build/tests/kv_conversion_crosscheck [--reference-only]

Exit status: 0 all agree, 1 a mismatch (the lab's or a self-check's), 2 the binary cannot be run.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import torch

import checkpoint_crosscheck as ck

TOLERANCE = ck.TOLERANCE          # |expected - found| <= TOLERANCE * max(1, |expected|)
SELF_TOLERANCE = ck.SELF_TOLERANCE
LAB_TIMEOUT = ck.LAB_TIMEOUT
MAX_WINDOW = 1024
SENTENCE = "the cat sat on the mat, and then the dog ran."
SHORT = "the cat sat on the mat, and then the dog ran."
ONE_TOKEN = "the"  # one token for GPT-2 (no BOS)

# ---------------------------------------------------------------------------------------------
# Texts of a chosen length.


def text_of_length(style, n):
    """A text that the `style` tokenizer makes exactly n ids: sentences, then " the" (one token
    each) to fill up."""
    tok = ck.tokenizer_json(style)
    sentences = []
    while len(ck.hand_bpe(" ".join(sentences + [SENTENCE]), tok)) <= n:
        sentences.append(SENTENCE)
    text = " ".join(sentences)
    while len(ck.hand_bpe(text, tok)) < n:
        text += " the"
    assert len(ck.hand_bpe(text, tok)) == n, (style, n)
    return text


def qwen2_grouped_folder(seed):
    """One folder more, made with checkpoint_crosscheck's functions: Qwen2 with 8 query heads on
    4 KV heads (so G = 2 pools pairs of consecutive heads, which G = 1 and G = G0 cannot tell from
    other groupings), q/k/v biases (pooled too) and 4 layers (for a --layers mix such as 0-1,3)."""
    rng = np.random.default_rng(seed)
    vocab = len(ck.tokenizer_json("qwen2")["model"]["vocab"])
    t = ck.llama_tensors(rng, 32, 8, 4, 4, 48, vocab, 4, ("q", "k", "v"), tied=True)
    config = ck.llama_config("qwen2", 32, 8, 4, 48, vocab, 4, 1e-6, 10000.0, True, "float32",
                             use_sliding_window=False, bos_token_id=vocab - 1,
                             eos_token_id=vocab - 1)
    return ck.Folder("qwen2_grouped", config, {k: (v, "F32") for k, v in t.items()}, "qwen2",
                     note="F32, GQA 8 heads / 4 kv, hd 4, q/k/v biases, 4 layers, tied")


# ---------------------------------------------------------------------------------------------
# The model's shape and its key/value projections.


class Shape:
    def __init__(self, config):
        if config["model_type"] == "gpt2":
            self.layers, self.heads = config["n_layer"], config["n_head"]
            self.kv_heads, self.d_model = config["n_head"], config["n_embd"]
            self.head_dim = config["n_embd"] // config["n_head"]
            positions = config["n_positions"]
        else:
            self.layers, self.heads = config["num_hidden_layers"], config["num_attention_heads"]
            self.kv_heads = config.get("num_key_value_heads") or self.heads
            self.d_model, self.head_dim = config["hidden_size"], ck.head_dim_of(config)
            positions = config["max_position_embeddings"]
        self.window = min(positions, MAX_WINDOW)
        self.full_rank = min(self.d_model, 2 * self.kv_heads * self.head_dim)


def divisors(n):
    return [g for g in range(1, n + 1) if n % g == 0]


def kv_names(config, weights, layer):
    """The names of (W_K, W_V, b_K, b_V) of a layer: GPT-2's c_attn weight and bias (sliced),
    the Llama family's k_proj / v_proj weight and bias (None when absent)."""
    if config["model_type"] == "gpt2":
        prefix = "transformer." if "transformer.wte.weight" in weights else ""
        p = prefix + "h.%d.attn.c_attn." % layer
        return p + "weight", p + "weight", p + "bias", p + "bias"
    p = "model.layers.%d.self_attn." % layer
    names = [p + "k_proj.weight", p + "v_proj.weight", p + "k_proj.bias", p + "v_proj.bias"]
    return [n if n in weights else None for n in names]


def get_kv(config, weights, layer):
    """(W_K, W_V, b_K, b_V) as NumPy float64, W as x W (d_model, G0 d), b (G0 d,) or None."""
    wk, wv, bk, bv = kv_names(config, weights, layer)
    if config["model_type"] == "gpt2":
        e = config["n_embd"]
        w, b = weights[wk].numpy(), weights[bk].numpy()
        return w[:, e:2 * e].copy(), w[:, 2 * e:].copy(), b[e:2 * e].copy(), b[2 * e:].copy()
    return (weights[wk].numpy().T.copy(), weights[wv].numpy().T.copy(),
            None if bk is None else weights[bk].numpy().copy(),
            None if bv is None else weights[bv].numpy().copy())


def set_kv(config, weights, layer, w_k, w_v, b_k, b_v):
    """A new weights dict with the layer's W_K, W_V, b_K, b_V replaced (the others shared)."""
    out = dict(weights)
    wk, wv, bk, bv = kv_names(config, weights, layer)
    if config["model_type"] == "gpt2":
        e = config["n_embd"]
        w, b = weights[wk].clone(), weights[bk].clone()
        w[:, e:2 * e], w[:, 2 * e:] = torch.from_numpy(w_k), torch.from_numpy(w_v)
        b[e:2 * e], b[2 * e:] = torch.from_numpy(b_k), torch.from_numpy(b_v)
        out[wk], out[bk] = w, b
        return out
    out[wk], out[wv] = torch.from_numpy(w_k.T.copy()), torch.from_numpy(w_v.T.copy())
    if bk is not None:
        out[bk] = torch.from_numpy(b_k.copy())
    if bv is not None:
        out[bv] = torch.from_numpy(b_v.copy())
    return out


# ---------------------------------------------------------------------------------------------
# The conversions.


def pool_columns(w, kv_heads, head_dim, groups):
    """w (..., G0 d): each head's block of d columns replaced by the mean over its group of
    G0/G consecutive heads. None stays None."""
    if w is None:
        return None
    size = kv_heads // groups
    blocks = w.reshape(w.shape[:-1] + (groups, size, head_dim))
    mean = blocks.mean(axis=-2, keepdims=True)
    return np.broadcast_to(mean, blocks.shape).reshape(w.shape).copy()


def low_rank(w_k, w_v, latent):
    """The K and V columns of the rank-C approximation of A = [W_K | W_V] built as the spec says
    (W_DKV = U[:, :C] S[:C], [W_UK | W_UV] = V^T[:C]), and S."""
    a = np.hstack([w_k, w_v])
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    down = u[:, :latent] * s[:latent]
    up = vt[:latent, :]
    approx = down @ up
    n = w_k.shape[1]
    return approx[:, :n], approx[:, n:], s


def rel_error(new, old):
    return float(np.linalg.norm(new - old) / np.linalg.norm(old))


class Conversion:
    """The reference's converted weights, per-layer errors and KV bytes per token."""

    def __init__(self, config, weights, target, amount, layers):
        shape = Shape(config)
        self.weights = weights
        self.errors = []
        self.singular = {}     # layer -> S of [W_K | W_V] (MLA)
        self.norms = {}        # layer -> (||W_K||, ||W_V||)
        self.bytes_original = 2 * shape.layers * 2 * shape.kv_heads * shape.head_dim
        self.bytes_converted = 0
        for n in range(shape.layers):
            w_k, w_v, b_k, b_v = get_kv(config, weights, n)
            self.norms[n] = (float(np.linalg.norm(w_k)), float(np.linalg.norm(w_v)))
            if n not in layers:
                self.errors.append((0.0, 0.0))
                self.bytes_converted += 2 * 2 * shape.kv_heads * shape.head_dim
                continue
            if target == "gqa":
                args = (shape.kv_heads, shape.head_dim, amount)
                nk, nv = pool_columns(w_k, *args), pool_columns(w_v, *args)
                nbk, nbv = pool_columns(b_k, *args), pool_columns(b_v, *args)
                self.bytes_converted += 2 * 2 * amount * shape.head_dim
            else:
                nk, nv, s = low_rank(w_k, w_v, amount)
                self.singular[n] = s
                nbk, nbv = b_k, b_v
                self.bytes_converted += 2 * amount
            self.errors.append((rel_error(nk, w_k), rel_error(nv, w_v)))
            self.weights = set_kv(config, self.weights, n, nk, nv, nbk, nbv)


# ---------------------------------------------------------------------------------------------
# Evaluation over windows.


def windows_of(ids, size):
    """Windows of `size` ids, each after the first starting at the last id of the one before."""
    return [ids[i:i + size] for i in range(0, max(len(ids) - 1, 1), size - 1)]


def log_softmax(logits):
    m = logits.max(axis=-1, keepdims=True)
    z = logits - m
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def window_logits(config, weights, ids):
    """[(logits of the predicting positions (len-1, V), next ids)] per window."""
    out = []
    for window in windows_of(ids, Shape(config).window):
        logits, _ = ck.forward(config, weights, window)
        out.append((logits.numpy()[:-1], np.array(window[1:], dtype=np.int64)))
    return out


def evaluate(original, converted=None):
    """{"loss", "perplexity", "predicted"} of the original windows, and with converted also
    {"loss", "perplexity", "top1_agreement", "kl"} of the converted model against it."""
    losses, losses_c, agree, kls = [], [], [], []
    for n, (logits, nxt) in enumerate(original):
        if len(nxt) == 0:
            continue
        lp = log_softmax(logits)
        losses.extend((-lp[np.arange(len(nxt)), nxt]).tolist())
        if converted is not None:
            logits_c, nxt_c = converted[n]
            assert np.array_equal(nxt, nxt_c)
            lc = log_softmax(logits_c)
            losses_c.extend((-lc[np.arange(len(nxt)), nxt]).tolist())
            agree.extend((np.argmax(logits, axis=-1) == np.argmax(logits_c, axis=-1)).tolist())
            kl = (np.exp(lp) * (lp - lc)).sum(axis=-1)
            kls.extend(np.maximum(kl, 0.0).tolist())
    loss = math.fsum(losses) / len(losses)
    result = {"loss": loss, "perplexity": math.exp(loss), "predicted": len(losses)}
    if converted is None:
        return result, None
    loss_c = math.fsum(losses_c) / len(losses_c)
    return result, {"loss": loss_c, "perplexity": math.exp(loss_c),
                    "top1_agreement": sum(agree) / len(agree), "kl": math.fsum(kls) / len(kls)}


# ---------------------------------------------------------------------------------------------
# Comparison.


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def compare_tree(label, expected, found, problems):
    """Append to problems every difference between found (parsed JSON) and expected: dicts key
    by key (the same keys), lists item by item, ints exactly, floats within TOLERANCE."""
    if isinstance(expected, dict):
        if not isinstance(found, dict):
            problems.append("%s: expected an object, found %r" % (label, found))
            return
        for key in expected:
            if key not in found:
                problems.append("%s.%s: missing (expected %r)" % (label, key, expected[key]))
            else:
                compare_tree("%s.%s" % (label, key), expected[key], found[key], problems)
        extra = sorted(set(found) - set(expected))
        if extra:
            problems.append("%s: unexpected keys %s" % (label, extra))
    elif isinstance(expected, list):
        if not isinstance(found, list) or len(found) != len(expected):
            problems.append("%s: expected %d items, found %r" % (label, len(expected), found))
            return
        for i, (e, f) in enumerate(zip(expected, found)):
            compare_tree("%s[%d]" % (label, i), e, f, problems)
    elif isinstance(expected, str):
        if found != expected:
            problems.append("%s: expected %r, found %r" % (label, expected, found))
    elif isinstance(expected, int) and not isinstance(expected, bool):
        if not isinstance(found, int) or isinstance(found, bool) or found != expected:
            problems.append("%s: expected %d, found %r" % (label, expected, found))
    else:
        if not is_number(found) or not math.isfinite(found):
            problems.append("%s: expected %.17g, found %r" % (label, expected, found))
        elif abs(found - expected) > TOLERANCE * max(1.0, abs(expected)):
            problems.append("%s: expected %.17g, found %.17g (diff %.3g)" % (
                label, expected, found, abs(found - expected)))


def expected_convert(conv, evaluation):
    """The JSON `convert --json` must print, from a Conversion and evaluate()'s pair or None."""
    original = {"kv_bytes_per_token": conv.bytes_original}
    converted = {"kv_bytes_per_token": conv.bytes_converted}
    if evaluation is not None:
        o, c = evaluation
        original.update(loss=o["loss"], perplexity=o["perplexity"])
        converted.update(c)
    return {"original": original, "converted": converted,
            "layers": [{"k_error": k, "v_error": v} for k, v in conv.errors]}


# ---------------------------------------------------------------------------------------------
# Self-checks of the reference.


Report = ck.Report  # counts failed self-checks and prints each


def self_checks(folders, weights_of):
    report = Report()
    for folder in folders:
        config, weights = folder.config, weights_of[folder.name]
        shape = Shape(config)
        ids = ck.hand_bpe(SHORT, ck.tokenizer_json(folder.style))
        base, _ = ck.forward(config, weights, ids)
        # Pooling at G = G0 is the identity (bit for bit), and so is the conversion as a whole.
        same = True
        for n in range(shape.layers):
            for w in get_kv(config, weights, n):
                if w is not None:
                    same &= np.array_equal(pool_columns(w, shape.kv_heads, shape.head_dim,
                                                        shape.kv_heads), w)
        conv = Conversion(config, weights, "gqa", shape.kv_heads, range(shape.layers))
        same &= all(torch.equal(conv.weights[k], weights[k]) for k in weights)
        same &= conv.errors == [(0.0, 0.0)] * shape.layers
        same &= conv.bytes_converted == conv.bytes_original
        report.check(same, "%s: GQA pooling at G = G0 = %d is the identity" % (
            folder.name, shape.kv_heads))
        # Pooling to fewer heads changes the logits (the conversion is not a no-op).
        if shape.kv_heads > 1:
            conv = Conversion(config, weights, "gqa", 1, range(shape.layers))
            pooled = get_kv(config, conv.weights, 0)[0]
            blocks = pooled.reshape(shape.d_model, shape.kv_heads, shape.head_dim)
            logits, _ = ck.forward(config, conv.weights, ids)
            report.check(bool(np.all(blocks == blocks[:, :1])) and
                         float((logits - base).abs().max()) > 1e-3,
                         "%s: pooling to 1 head makes every head's W_K equal and changes the "
                         "logits" % folder.name)
        # Full-rank reconstruction is A; Eckart-Young holds at every C for the reference too.
        worst, young = 0.0, 0.0
        for n in range(shape.layers):
            w_k, w_v, _, _ = get_kv(config, weights, n)
            a = np.hstack([w_k, w_v])
            nk, nv, s = low_rank(w_k, w_v, shape.full_rank)
            worst = max(worst, float(np.abs(np.hstack([nk, nv]) - a).max() / np.abs(a).max()))
            for c in range(1, shape.full_rank + 1):
                nk, nv, s = low_rank(w_k, w_v, c)
                lhs = math.hypot(np.linalg.norm(nk - w_k), np.linalg.norm(nv - w_v))
                rhs = math.sqrt(float(np.sum(s[c:] ** 2)))
                young = max(young, abs(lhs - rhs) / np.linalg.norm(a))
        report.check(worst <= SELF_TOLERANCE and young <= SELF_TOLERANCE,
                     "%s: rank-%d reconstruction = A (%.2g), Eckart-Young at every C (%.2g)" % (
                         folder.name, shape.full_rank, worst, young))
        conv = Conversion(config, weights, "mla", 1, range(shape.layers))
        logits, _ = ck.forward(config, conv.weights, ids)
        report.check(float((logits - base).abs().max()) > 1e-3 and conv.bytes_converted ==
                     2 * shape.layers, "%s: MLA at C = 1 changes the logits, caches 1 number a "
                     "layer" % folder.name)
    # Windows cover the ids in order, each after the first starting at the last id of the one
    # before, the last one short; every id after the first is predicted once.
    ids = list(range(129))
    split = windows_of(ids, 64)
    joined = split[0] + sum((w[1:] for w in split[1:]), [])
    report.check([len(w) for w in split] == [64, 64, 3] and joined == ids and
                 all(a[-1] == b[0] for a, b in zip(split, split[1:])) and
                 sum(len(w) - 1 for w in split) == 128 and
                 [len(w) for w in windows_of(list(range(128)), 64)] == [64, 64, 2] and
                 [len(w) for w in windows_of(list(range(64)), 64)] == [64],
                 "129 ids in windows of 64, 64 and 3 sharing their boundary ids")
    # evaluate(): identical models give kl 0, agreement 1, equal losses; a 1-token window
    # predicts nothing.
    gpt2 = folders[0]
    ids = ck.hand_bpe(text_of_length("gpt2", 65), ck.tokenizer_json("gpt2"))
    wl = window_logits(gpt2.config, weights_of[gpt2.name], ids)
    o, c = evaluate(wl, wl)
    report.check(o["predicted"] == 64 and c["kl"] == 0 and c["top1_agreement"] == 1 and
                 c["loss"] == o["loss"], "65 tokens: 64 predicted; a model against itself has "
                 "kl 0, agreement 1")
    # The ladder's points: the widths by hand, G0 = 4 gives gqa 2, 1 first, G0 = 1 no GQA point.
    hand = {32: [32, 24, 16, 12, 8, 4, 2, 1], 24: [24, 18, 12, 9, 6, 3, 1],
            16: [16, 12, 8, 6, 4, 2, 1], 8: [8, 6, 4, 3, 2, 1], 5: [5, 3, 2, 1], 1: [1]}
    report.check(all(ladder_widths(r) == w for r, w in hand.items()),
                 "ladder widths of r = 32, 24, 16, 8, 5, 1 as worked by hand",
                 str({r: ladder_widths(r) for r in hand}))
    by_name = {f.name: f for f in folders}
    grouped = ladder_points(Shape(by_name["qwen2_grouped"].config), range(4))
    mqa = ladder_points(Shape(by_name["qwen2"].config), {0})
    report.check(grouped == [("gqa", 2), ("gqa", 1)] + [("mla", c) for c in hand[32]] and
                 mqa == [("mla", c) for c in hand[8]],
                 "ladder points: qwen2_grouped (G0 4) gqa 2, 1 then r = 32; qwen2 (G0 1) MLA at "
                 "r = 8 only", str((grouped, mqa)))
    # compare_ladder passes its own expectation and flags a swapped pair, a missing point and a
    # perturbed number once each.
    fake = {"original": {"kv_bytes_per_token": 128, "loss": 2.5, "perplexity": math.exp(2.5)},
            "points": [{"to": t, AMOUNT_KEY[t]: a, "kv_bytes_per_token": 8 * a, "loss": 2.0 + a,
                        "perplexity": 1.5, "top1_agreement": 0.5, "kl": 0.25,
                        "layers": [{"k_error": 0.5, "v_error": 0.25}]}
                       for t, a in [("gqa", 1), ("mla", 16), ("mla", 12), ("mla", 8)]]}
    problems = []
    compare_ladder(fake, json.loads(json.dumps(fake)), problems)
    found = json.loads(json.dumps(fake))
    found["points"][1], found["points"][2] = found["points"][2], found["points"][1]
    del found["points"][3]
    found["points"][0]["layers"][0]["k_error"] += 2e-9
    bad = []
    compare_ladder(fake, found, bad)
    report.check(problems == [] and len(bad) == 2 and bad[0].startswith(
        "ladder.points: expected ['gqa 1', 'mla 16', 'mla 12', 'mla 8'], found ['gqa 1', "
        "'mla 12', 'mla 16']") and bad[1].startswith("ladder.points[gqa 1].layers[0].k_error:"),
        "ladder comparison flags a swapped pair, a missing point and a perturbed error",
        str(problems + bad))
    # The comparison passes the reference's own numbers and flags perturbed ones.
    conv = Conversion(gpt2.config, weights_of[gpt2.name], "mla", 3, {0, 1})
    expected = expected_convert(conv, evaluate(wl, window_logits(gpt2.config, conv.weights,
                                                                 ids)))
    found = json.loads(json.dumps(expected))
    problems = []
    compare_tree("convert", expected, found, problems)
    report.check(problems == [], "comparison passes the reference's own numbers", str(problems))
    found["converted"]["kl"] *= 1 + 1e-8
    found["layers"][1]["v_error"] += 2e-9
    found["original"]["kv_bytes_per_token"] += 1
    del found["converted"]["top1_agreement"]
    found["converted"]["extra"] = 1
    problems = []
    compare_tree("convert", expected, found, problems)
    flagged = ["convert.original.kv_bytes_per_token:", "convert.converted.kl:",
               "convert.converted.top1_agreement: missing", "convert.converted: unexpected",
               "convert.layers[1].v_error:"]
    report.check(len(problems) == len(flagged) and all(
        any(p.startswith(f) for p in problems) for f in flagged),
        "comparison flags a perturbed kl, v_error, byte count, a missing and an extra key",
        str(problems))
    return report.failed


# ---------------------------------------------------------------------------------------------
# The lab.


def run_lab(binary, args):
    """(returncode, stdout, stderr) as text; returncode None when it timed out or could not be
    started."""
    try:
        out = subprocess.run([binary] + args, capture_output=True, timeout=LAB_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % LAB_TIMEOUT
    except OSError as e:
        return None, "", "could not be started: %s" % e
    return (out.returncode, out.stdout.decode("utf-8", "replace"),
            out.stderr.decode("utf-8", "replace"))


def lab_json(binary, args):
    """(parsed JSON, None) or (None, what went wrong)."""
    code, stdout, stderr = run_lab(binary, args)
    if code != 0:
        lines = stderr.strip().splitlines()
        return None, "%s exited %s: %s" % (" ".join(args[:1]), code, lines[0] if lines else "")
    try:
        return json.loads(stdout), None
    except ValueError as e:
        return None, "%s printed no JSON object: %s" % (args[0], e)


class Lab:
    """Counts and prints results."""

    def __init__(self, binary):
        self.binary, self.failed, self.runs = binary, 0, 0

    def result(self, label, problems):
        self.runs += 1
        if problems:
            self.failed += 1
            print("FAIL %s" % label)
            for p in problems:
                print("       %s" % p)
        else:
            print("ok   %s" % label)


def lab_ids(lab, folder, text, problems):
    """The lab's ids for text, checked against the hand BPE; None when tokenize fails."""
    tokenized, error = lab_json(lab.binary, ["tokenize", folder.path, "--text", text, "--json"])
    if error:
        problems.append(error)
        return None
    ids = tokenized.get("ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, int) for i in ids):
        problems.append("tokenize printed no ids")
        return None
    hand = ck.hand_bpe(text, ck.tokenizer_json(folder.style))
    if ids != hand:
        problems.append("tokenize: expected the hand BPE's %d ids, found %d (%s...)" % (
            len(hand), len(ids), ids[:8]))
    return ids


def check_eval(lab, folder, weights, text, text_file):
    problems = []
    ids = lab_ids(lab, folder, text, problems)
    if ids is not None:
        shape = Shape(folder.config)
        o, _ = evaluate(window_logits(folder.config, weights, ids))
        expected = {"tokens": len(ids),
                    "windows": len(windows_of(ids, shape.window)), "predicted": o["predicted"],
                    "loss": o["loss"], "perplexity": o["perplexity"]}
        found, error = lab_json(lab.binary, ["eval", folder.path, "--text-file", text_file,
                                             "--json"])
        if error:
            problems.append(error)
        else:
            # "model" names the model; the spec does not say how, so only its presence counts.
            model = found.pop("model", None) if isinstance(found, dict) else None
            if not isinstance(model, str) or not model:
                problems.append("eval.model: expected the model's name, found %r" % model)
            compare_tree("eval", expected, found, problems)
        label_tail = "%d tokens, windows %s" % (len(ids), [len(w) for w in windows_of(
            ids, shape.window)])
    else:
        label_tail = "tokenize failed"
    lab.result("%s: eval %s (%s)" % (folder.name, os.path.basename(text_file), label_tail),
               problems)


def layer_list(listing, count):
    """The layers of a --layers LIST (a valid one; the refusals are the lab's to make)."""
    if listing is None:
        return set(range(count))
    out = set()
    for part in listing.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def beyond_reference(shape, target, amount, conv, fl, found_original, found_converted,
                     with_eval, prefix, problems):
    """The checks that need no reference: G = G0 and full-rank MLA reproduce the original (errors
    < 1e-9, and with --eval equal losses, kl < 1e-9, top-1 agreement 1); the lab's MLA errors obey
    Eckart-Young. fl: the lab's "layers" list; prefix starts every message."""
    identity = (target == "gqa" and amount == shape.kv_heads) or (
        target == "mla" and amount == shape.full_rank)
    if identity:
        errors = [e.get(k) for e in fl if isinstance(e, dict) for k in ("k_error", "v_error")]
        if not all(is_number(e) and abs(e) < 1e-9 for e in errors):
            problems.append("%sidentity: expected every k_error, v_error < 1e-9, found %s"
                            % (prefix, errors))
        if with_eval:
            oc = found_original if isinstance(found_original, dict) else {}
            cc = found_converted if isinstance(found_converted, dict) else {}
            lo, lc = oc.get("loss"), cc.get("loss")
            if not (is_number(lo) and is_number(lc) and abs(lo - lc) <= TOLERANCE * max(
                    1.0, abs(lo))):
                problems.append("%sidentity: expected converted loss = original loss %r, found "
                                "%r" % (prefix, lo, lc))
            if not (is_number(cc.get("kl")) and abs(cc["kl"]) < 1e-9):
                problems.append("%sidentity: expected kl < 1e-9, found %r" % (prefix,
                                                                             cc.get("kl")))
            if cc.get("top1_agreement") != 1:
                problems.append("%sidentity: expected top1_agreement 1, found %r"
                                % (prefix, cc.get("top1_agreement")))
    # Eckart-Young on the lab's own errors.
    if target == "mla":
        for n, s in conv.singular.items():
            e = fl[n] if n < len(fl) and isinstance(fl[n], dict) else {}
            ke, ve = e.get("k_error"), e.get("v_error")
            if not (is_number(ke) and is_number(ve)):
                continue  # compare_tree has reported it
            nk, nv = conv.norms[n]
            lhs = math.hypot(ke * nk, ve * nv)
            rhs = math.sqrt(float(np.sum(s[amount:] ** 2)))
            scale = math.hypot(nk, nv)
            if abs(lhs - rhs) > TOLERANCE * scale:
                problems.append("%sEckart-Young layer %d: expected sqrt((k_error ||W_K||)^2 + "
                                "(v_error ||W_V||)^2) = sqrt(sum S[%d:]^2) = %.17g, found %.17g"
                                % (prefix, n, amount, rhs, lhs))


def check_convert(lab, folder, weights, target, amount, listing, ids, text_file, original):
    """One `convert` run against the reference; original: window_logits of the original on ids
    (with --eval) or None (without)."""
    config = folder.config
    shape = Shape(config)
    layers = layer_list(listing, shape.layers)
    args = ["convert", folder.path, "--to", target,
            "--kv-heads" if target == "gqa" else "--latent-dim", str(amount)]
    if listing is not None:
        args += ["--layers", listing]
    if original is not None:
        args += ["--eval", text_file]
    args.append("--json")
    label = "%s: %s" % (folder.name, " ".join(args[2:-1]).replace(os.path.dirname(text_file) +
                                                                  os.sep, ""))
    conv = Conversion(config, weights, target, amount, layers)
    evaluation = None
    if original is not None:
        evaluation = evaluate(original, window_logits(config, conv.weights, ids))
    expected = expected_convert(conv, evaluation)
    problems = []
    found, error = lab_json(lab.binary, args)
    if error:
        lab.result(label, [error])
        return
    compare_tree("convert", expected, found, problems)
    fl = found.get("layers") if isinstance(found.get("layers"), list) else []
    beyond_reference(shape, target, amount, conv, fl, found.get("original"),
                     found.get("converted"), original is not None, "", problems)
    lab.result(label, problems)


# ---------------------------------------------------------------------------------------------
# The ladder: every conversion of a model in one run.

LADDER_FRACTIONS = [(1, 1), (3, 4), (1, 2), (3, 8), (1, 4), (1, 8), (1, 16), (1, 32)]
AMOUNT_KEY = {"gqa": "kv_heads", "mla": "latent_dim"}


def ladder_widths(rank):
    """floor(r x f) for the fractions of the ladder, each at least 1, a width kept only the first
    time it appears."""
    widths = []
    for num, den in LADDER_FRACTIONS:
        c = max(1, rank * num // den)
        if c not in widths:
            widths.append(c)
    return widths


def ladder_points(shape, layers):
    """[(target, amount)] of `convert --ladder`: GQA at every divisor G < G0 in decreasing order,
    then MLA at the widths of r = min over the converted layers of min(d_model, 2 G0 d) (every
    layer of these folders has the same shape, so the same bound)."""
    points = [("gqa", g) for g in sorted(divisors(shape.kv_heads), reverse=True)
              if g < shape.kv_heads]
    rank = min(shape.full_rank for _ in sorted(layers))
    return points + [("mla", c) for c in ladder_widths(rank)]


def point_name(point):
    """(to, amount) of a point of the lab's JSON, or its repr when it is not one."""
    if not isinstance(point, dict) or point.get("to") not in AMOUNT_KEY:
        return repr(point)[:80]
    return "%s %s" % (point["to"], point.get(AMOUNT_KEY[point["to"]]))


def compare_ladder(expected, found, problems):
    """compare_tree for a ladder, with the list of points checked first as a list of names (in
    order), then each expected point against the found point of the same name (so one point
    missing or out of place is told once, not as a flood of number mismatches)."""
    if not isinstance(found, dict):
        problems.append("ladder: expected an object, found %r" % (found,))
        return
    compare_tree("ladder.original", expected["original"], found.get("original"), problems)
    extra = sorted(set(found) - {"original", "points"})
    if extra:
        problems.append("ladder: unexpected keys %s" % extra)
    points = found.get("points")
    if not isinstance(points, list):
        problems.append("ladder.points: expected a list, found %r" % (points,))
        return
    want = [point_name(p) for p in expected["points"]]
    got = [point_name(p) for p in points]
    if got != want:
        problems.append("ladder.points: expected %s, found %s" % (want, got))
    by_name = {}
    for p in points:
        by_name.setdefault(point_name(p), p)
    for name, e in zip(want, expected["points"]):
        if name in by_name:
            compare_tree("ladder.points[%s]" % name, e, by_name[name], problems)


def check_ladder(lab, folder, weights, listing, ids, text_file, original):
    """One `convert --ladder --eval` run: the list of points, every number of every point against
    the reference's conversion at that point (as check_convert would expect of `convert --to`),
    "original" as there, and the identity and Eckart-Young checks on each point."""
    config = folder.config
    shape = Shape(config)
    layers = layer_list(listing, shape.layers)
    args = ["convert", folder.path, "--ladder", "--eval", text_file]
    if listing is not None:
        args += ["--layers", listing]
    args.append("--json")
    label = "%s: %s" % (folder.name, " ".join(args[2:-1]).replace(os.path.dirname(text_file) +
                                                                  os.sep, ""))
    expected, convs = {"points": []}, []
    for target, amount in ladder_points(shape, layers):
        conv = Conversion(config, weights, target, amount, layers)
        one = expected_convert(conv, evaluate(original, window_logits(config, conv.weights,
                                                                      ids)))
        point = {"to": target, AMOUNT_KEY[target]: amount}
        point.update(one["converted"])
        point["layers"] = one["layers"]
        expected["points"].append(point)
        expected["original"] = one["original"]
        convs.append((target, amount, conv))
    label += " (%d points)" % len(convs)
    found, error = lab_json(lab.binary, args)
    if error:
        lab.result(label, [error])
        return
    problems = []
    compare_ladder(expected, found, problems)
    points = found.get("points") if isinstance(found.get("points"), list) else []
    by_name = {}
    for p in points:
        by_name.setdefault(point_name(p), p)
    for target, amount, conv in convs:
        p = by_name.get("%s %s" % (target, amount))
        if not isinstance(p, dict):
            continue  # compare_ladder has reported it
        fl = p.get("layers") if isinstance(p.get("layers"), list) else []
        beyond_reference(shape, target, amount, conv, fl, found.get("original"), p, True,
                         "ladder.points[%s %s]: " % (target, amount), problems)
    lab.result(label, problems)


def check_refusal(lab, args, expected_line, prefix=False):
    code, stdout, stderr = run_lab(lab.binary, args)
    problems = []
    if code != 2:
        problems.append("exit status: expected 2, found %s" % code)
    if stdout != "":
        problems.append("stdout: expected nothing, found %r" % stdout[:200])
    got = stderr.rstrip("\n")
    if prefix:
        if not got.startswith(expected_line):
            problems.append("stderr: expected a line starting %r, found %r" % (expected_line,
                                                                               got))
    elif got != expected_line:
        problems.append("stderr: expected %r, found %r" % (expected_line, got))
    lab.result("refuses %s" % " ".join(args[2:]), problems)


def refusals(lab, gpt2, text_files):
    f = gpt2.path
    cases = [
        (["--to", "gqa", "--kv-heads", "3"], "attention-lab: %s: --kv-heads: must divide the 2 "
         "key/value heads of layer 0 (1, 2) but found 3" % f),
        (["--to", "mla", "--latent-dim", "0"],
         "attention-lab: --latent-dim: must be between 1 and 8192 (found 0)"),
        (["--to", "mla", "--latent-dim", "17"], "attention-lab: %s: --latent-dim: must be at "
         "most 16, the rank of layer 0's [W_K | W_V] (at most min(d_model 16, 2 x 2 key/value "
         "heads x head_dim 8)) but found 17" % f),
        (["--to", "gqa", "--kv-heads", "1", "--layers", "5"],
         "attention-lab: %s: --layers: the model has layers 0..1 but found 5" % f),
        (["--to", "gqa", "--kv-heads", "1", "--layers", "1-0"],
         "attention-lab: %s: --layers: the range 1-0 runs backwards (write 0-1)" % f),
        (["--to", "gqa", "--kv-heads", "1", "--layers", "0,0"],
         "attention-lab: %s: --layers: layer 0 is given twice" % f),
        (["--to", "gqa", "--kv-heads", "1", "--layers", "-1"],
         "attention-lab: %s: --layers: expected a layer or a range such as 0-5 but found \"-1\""
         % f),
        (["--to", "gqa"], "attention-lab: convert: --to gqa needs --kv-heads G"),
        (["--to", "mla", "--kv-heads", "2"], "attention-lab: convert: --kv-heads is for --to gqa"),
        (["--to", "xla"], "attention-lab: --to: must be gqa | mla (found \"xla\")"),
    ]
    text = text_files["gpt2_129"]
    one = ("attention-lab: convert: --ladder makes every conversion; --to, --kv-heads and "
           "--latent-dim are for one")
    cases += [
        ([], "attention-lab: convert: missing --to gqa | mla (or --ladder)"),
        (["--ladder"], "attention-lab: convert: --ladder measures on a text: give --eval FILE"),
        (["--ladder", "--layers", "1"],
         "attention-lab: convert: --ladder measures on a text: give --eval FILE"),
        (["--ladder", "--to", "gqa", "--eval", text], one),
        (["--ladder", "--to", "mla", "--latent-dim", "2", "--eval", text], one),
        (["--to", "gqa", "--kv-heads", "1", "--ladder", "--eval", text], one),
        (["--ladder", "--kv-heads", "1", "--eval", text], one),
        (["--ladder", "--latent-dim", "2", "--eval", text], one),
    ]
    for extra, line in cases:
        check_refusal(lab, ["convert", f] + extra + ["--json"], line)
    check_refusal(lab, ["eval", f, "--text-file", text_files["one_token"], "--json"],
                  "attention-lab: %s: --text-file: makes one token" % f, prefix=True)


# ---------------------------------------------------------------------------------------------


# `convert --ladder` runs: folder -> the --layers of each run (None: all layers).
LADDERS = {"gpt2": [None], "gpt2_prefixed": [None], "qwen2_grouped": [None, "1,3"],
           "llama_tied_headdim": ["1"], "qwen2": ["0"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", help="the attention-lab executable")
    parser.add_argument("--work", required=True, help="folder for the model folders and texts")
    parser.add_argument("--reference-only", action="store_true",
                        help="build the folders and run the self-checks without the lab")
    args = parser.parse_args()
    start = time.monotonic()
    torch.set_num_threads(1)
    if not args.reference_only:
        runnable = bool(args.binary) and os.access(args.binary, os.X_OK)
        if runnable:
            try:
                subprocess.run([args.binary, "--help"], capture_output=True, timeout=LAB_TIMEOUT)
            except (OSError, subprocess.SubprocessError):
                runnable = False
        if not runnable:
            print("kv conversion cross-check: cannot run the binary %r" % args.binary)
            return 2
    os.makedirs(args.work, exist_ok=True)
    folders = ck.all_folders() + [qwen2_grouped_folder(17)]
    for folder in folders:
        ck.write_folder(folder, args.work)
    weights_of = {f.name: ck.read_folder_weights(f.path) for f in folders}
    failed_checks = self_checks(folders, weights_of)
    if args.reference_only:
        print("kv conversion reference: %d folders, %d self-checks failed (%.1f s)" % (
            len(folders), failed_checks, time.monotonic() - start))
        return 1 if failed_checks else 0

    # Texts: per tokenizer style, 128 and 129 ids (windows of 64 sharing a boundary id: 64+64+2
    # and 64+64+3).
    texts = {"short": SHORT, "one_token": ONE_TOKEN}
    for style in ("gpt2", "llama"):
        for n in (128, 129):
            texts["%s_%d" % (style, n)] = text_of_length(style, n)
    text_dir = os.path.join(args.work, "texts")
    os.makedirs(text_dir, exist_ok=True)
    text_files = {}
    for name, text in texts.items():
        text_files[name] = os.path.join(text_dir, name + ".txt")
        with open(text_files[name], "w", encoding="utf-8") as f:
            f.write(text)

    lab = Lab(args.binary)
    for folder in folders:
        assert Shape(folder.config).window == 64, folder.name
        for name in ("short", "gpt2_128", "gpt2_129", "llama_128", "llama_129"):
            check_eval(lab, folder, weights_of[folder.name], texts[name], text_files[name])

    for folder in folders:
        weights, shape = weights_of[folder.name], Shape(folder.config)
        # The text of 129 ids in this folder's tokenizer: windows of 64, 64 and 3.
        name = "%s_129" % ("llama" if folder.style == "llama" else "gpt2")
        problems = []
        ids = lab_ids(lab, folder, texts[name], problems)
        if ids is None:
            lab.result("%s: tokenize %s" % (folder.name, name), problems)
            continue
        original = window_logits(folder.config, weights, ids)
        cases = [("gqa", g, None, True) for g in divisors(shape.kv_heads)]
        cases += [("mla", c, None, True) for c in sorted({1, shape.full_rank // 2,
                                                          shape.full_rank})]
        cases += [("gqa", 1, "1", True), ("mla", shape.full_rank // 2, "0", True),
                  ("mla", 1, None, False)]
        if folder.name == "gpt2":
            cases += [("gqa", 1, "0-1", True), ("mla", 2, "0,1", True), ("mla", 3, "1", False),
                      ("gqa", 1, "0", False)]
        if folder.name == "qwen2_grouped":
            cases += [("gqa", 2, "0-1,3", True), ("mla", 5, "1,3", True), ("gqa", 2, "2", False)]
        for target, amount, listing, with_eval in cases:
            check_convert(lab, folder, weights, target, amount, listing, ids, text_files[name],
                          original if with_eval else None)
        for listing in LADDERS.get(folder.name, []):
            check_ladder(lab, folder, weights, listing, ids, text_files[name], original)

    refusals(lab, folders[0], text_files)
    print("kv conversion cross-check: %d lab checks, %d failed (%d self-checks failed, %.1f s)"
          % (lab.runs, lab.failed, failed_checks, time.monotonic() - start))
    return 1 if lab.failed or failed_checks else 0


if __name__ == "__main__":
    sys.exit(main())
