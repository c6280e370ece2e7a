#!/usr/bin/python3
"""Independent NumPy cross-check of model files (`attention-lab run MODEL`).

A second implementation, written from the specification only (never from the
C++ sources), of a small Transformer described by a model file: token
embeddings, positions (none, sinusoidal, learned, or rope inside every
attention layer, its pairs interleaved or rotate_half and its frequencies
optionally rescaled by Llama 3's rope_scaling), a stack of layers of attention
(with optional q/k/v and output biases) and a feed-forward sublayer (relu,
gelu with erf, gelu_tanh, swiglu, or none) under Pre-LN, Post-LN or no norm,
the final norm (Pre-LN) and the unembedding:

  pre:  x = x + Attn(LN1(x)); x = x + FFN(LN2(x)); at the end x = LN_final(x)
  post: x = LN1(x + Attn(x)); x = LN2(x + FFN(x))
  none: x = x + Attn(x);      x = x + FFN(x)
  logits = x unembedding (or x embedding^T with tied_unembedding),
  probabilities = softmax over the vocabulary.

LN is the model's norm_function: layer_norm (gain (x - mean) / sqrt(var + eps)
+ bias) or rms_norm (gain x / sqrt(mean(x^2) + eps)), eps its norm_eps
(default 1e-5).

Each layer's attention is a scenario whose embeddings are the (normalised)
residual stream entering it: it is computed by the attention reference of
reference.py (every variant, mask, kernel, RoPE including MLA's decoupled
RoPE, sparse attention), which is itself independent of the engine; the model
around it is reference.model_reference.

Seeded random models (fixed seed) cover every norm x ffn kind x positions kind
(48 models), the variants mha / gqa / mqa / mla (with and without a query
latent; with rope its rope_dim), the masks causal (by default and written),
none and sliding_window, the scale off, sparse attention, 1-4 layers, d_model
4-16, vocabularies of 3-12 tokens and 1 .. max_positions tokens; plus one model
with a linear-kernel layer, one with 32 tokens, and one whose attention weights
are all left to the seed (read back from `trace --layer L --json`, which must
echo exactly the weights the layer's attention uses).  Every other model file
gives every weight it uses.  `run --json` is compared
field by field: every layer's residual_in, each head's weights, the attention
output, ffn_out (null without an FFN), residual_out, then logits and
probabilities.  For some models `trace MODEL --layer L --tokens ... --json` is
checked as a whole scenario trace of that layer (its x must be the normalised
stream entering layer L), and `--scenario OUT.json` must write a scenario that
`trace OUT.json --json` traces to the same numbers.  Finally about 35 bad
model files and invocations (unknown keys, vocabulary, shapes, weights the model
does not use, scenario-only keys in a layer, the ffn block, layers, tokens,
--layer) must each exit 2 with one line on stderr naming the field path.

The model file's newer keys have seeded models of their own (FEATURE_MODELS,
numbered from #100): rms_norm under pre and post (norm_eps 1e-6 and the
default), layer_norm with norm_eps 0.01, the gelu_tanh feed-forward,
tied_unembedding, per-layer qkv_bias / output_bias (one bias left out: zeros;
output_bias on an mla layer too), model-level rope_pairing rotate_half with
rope_scaling llama3 (frequencies in all three bands; mla's decoupled part too),
head_dim with H * head_dim != d_model, and layers that differ (a sliding window
layer, then causal ones).  Each is run, about ten of their layers traced (with
--scenario OUT.json round trips), and about 17 bad files (ln1_bias / final_bias
with rms_norm, unembedding with tied_unembedding, rope_pairing / rope_scaling
inside a layer or without rope, norm_eps 0 / negative / above 1, qkv_bias on
mla, a bias without its flag or of the wrong length) must exit 2 naming the
field path.  A self-check of the reference (reference.self_check) runs first.

Run:  /usr/bin/python3 model_crosscheck.py --binary build/app/attention-lab
      [--keep DIR]  write every model file to DIR (failing ones also to DIR/fail)
      [--only-new]  only the self-check and the feature models

Exit status: 0 all agree, 1 any mismatch (or a coverage gap), 2 the binary
cannot be run.  Tolerance: |expected - found| <= 1e-9 (1 + |expected|).
"""

import copy
import json
import math
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import (BIASES, Binary, Checks, Mismatch, as_array, cannot_run,  # noqa: E402
                       command_line, error_lines, inv_freq, model_reference, normal, probe,
                       rope_bands, self_check, sparse_label, sublayer_weights, weight_shapes,
                       work_folder)
from trace_check import check_trace  # noqa: E402

SEED = 20260
TOL = 1e-9                # absolute + relative
NORMS = ("none", "pre", "post")
FFNS = ("none", "relu", "gelu", "swiglu")
POSITIONS = ("none", "sinusoidal", "learned", "rope")
KINDS = ("mha", "gqa", "mqa", "mla", "mla_q")     # mla_q: mla with a query latent
MASKS = ("default", "causal", "none", "sliding_window")   # default: no "mask" key (causal)
GQA_SHAPES = ((2, 1), (4, 2), (3, 1), (4, 1), (2, 2), (6, 3))
ROPE_BASES = (None, 100, 10000, 10.0, 2.5)
VOCAB_NAMES = ("<bos>", "a", "b", "c", "the", "cat", "sat", "on", "mat", "猫", "dog.", "x_1")


# --------------------------------------------------------------------------
# Random models
# --------------------------------------------------------------------------

def make_layer(model, li, counter, rng, kernel="softmax", positive=False, spec=None):
    """Layer li of model: its attention configuration (a scenario configuration,
    for reference.reference) and every weight it uses.  counter numbers the
    layers of all models, so variants, masks, sparse and scale cycle over them.
    spec: what the layer's configuration is instead (a feature model's layer:
    kind, heads, head_dim, mask, qkv_bias, ...; "omit": biases the file leaves
    out, zeros)."""
    dm, N = model["d_model"], model["n"]
    rope = model["positions"] == "rope"
    kind = KINDS[counter % len(KINDS)]
    variant = "mla" if kind.startswith("mla") else kind
    mask = MASKS[counter % len(MASKS)]
    a = {"idx": model["idx"] * 10 + li, "kind": kind, "variant": variant,
         "positions": "rope" if rope else "none",
         "rope_base": model["rope_base"] if rope else None, "max_positions": None,
         "offset": 0, "offset_written": False, "cross": False, "wo": True, "omit": (),
         "latent_dim": 0, "q_latent": 0, "rope_dim": 0, "sparse": None,
         "kernel": kernel, "scale": counter % 7 != 3,
         "mask": "causal" if mask == "default" else mask, "mask_written": mask != "default",
         "window": int(rng.integers(1, N + 2)), "n_q": N, "n_kv": N, "d_model": dm}
    if rope and variant != "mla":
        a["head_dim"] = (2, 4)[counter % 2]
    else:
        a["head_dim"] = 1 + counter % 4
    if variant == "mha":
        a["heads"] = a["kv_heads"] = 1 + counter % 3
    elif variant == "gqa":
        a["heads"], a["kv_heads"] = GQA_SHAPES[counter % len(GQA_SHAPES)]
    elif variant == "mqa":
        a["heads"], a["kv_heads"] = 1 + (counter // 5) % 3, 1
    else:
        a["heads"] = a["kv_heads"] = 1 + counter % 3
        a["latent_dim"] = 1 + (counter // 5) % 4
        if kind == "mla_q":
            a["q_latent"] = 1 + (counter // 5) % 2
        if rope:
            a["rope_dim"] = (2, 4)[(counter // 5) % 2]
    if counter % 3 == 2 and kernel == "softmax":
        a["sparse"] = {"top_k": int(rng.integers(1, N + 2)),
                       "indexer_heads": None if counter % 4 == 0 else 1 + counter % 3,
                       "indexer_dim": None if counter % 5 == 1 else 1 + (counter // 3) % 3}
    if spec is not None:
        feature_layer(model, a, spec)
    W = {}
    for name, shape in weight_shapes(a).items():
        if name in a["omit"]:
            W[name] = np.zeros(shape)       # a bias the file leaves out
        elif positive and name in ("W_Q", "W_K"):
            W[name] = rng.uniform(0.0, 1.0, shape) / math.sqrt(shape[0])
        else:
            W[name] = normal(rng, shape, 0.3 if name in BIASES else 1.0 / math.sqrt(shape[0]))
    a["W"] = W
    layer = {"att": a, "W": dict(W), "counter": counter}
    W.update(sublayer_weights(rng, dm, model["norm"], model["ffn"], model["d_ff"], bias=0.1,
                              norm_bias=model.get("norm_function") != "rms_norm"))
    layer["all_W"] = W
    return layer


def feature_layer(model, a, spec):
    """a (make_layer's configuration) as spec says: the defaults of a plain
    causal softmax layer, then spec; the model's rope_pairing / rope_scaling."""
    spec = dict(spec)
    kind = spec.pop("kind", "mha")
    a.update(kind=kind, variant="mla" if kind.startswith("mla") else kind, sparse=None,
             scale=True, mask="causal", mask_written=False, latent_dim=0, q_latent=0,
             rope_dim=0, kernel="softmax", omit=tuple(spec.pop("omit", ())))
    if "mask" in spec:
        a["mask_written"] = True
    a.update(spec)
    if a["variant"] != "gqa":
        a["kv_heads"] = {"mqa": 1}.get(a["variant"], a["heads"])
    if model["positions"] == "rope":
        a["rope_pairing"] = model.get("rope_pairing")
        a["rope_scaling"] = model.get("rope_scaling")


def make_model(idx, norm, ffn, pos, rng, counter, n_layers=None, n=None, extra=None,
               linear=False, seeded=False, spec=None):
    """Model number idx; counter is the number of layers made before it.
    seeded: the file leaves out every attention weight (drawn from the seed).
    spec: a feature model's settings (d_model, vocab_size, d_ff, rope_base,
    norm_function, norm_eps, tied, rope_pairing, rope_scaling) and "layers",
    one make_layer spec a layer."""
    m = {"idx": idx, "norm": norm, "ffn": ffn, "positions": pos, "seeded": seeded,
         "d_model": 4 + (idx * 5) % 13, "vocab_size": 3 + (idx * 7) % 10,
         "rope_base": ROPE_BASES[idx % len(ROPE_BASES)] if pos in ("sinusoidal", "rope") else None,
         "d_ff": 2 + (idx * 3) % 23 if ffn != "none" else 0,
         "norm_function": None, "norm_eps": None, "tied": False, "rope_pairing": None,
         "rope_scaling": None, "label": ""}
    layer_specs = None
    if spec is not None:
        spec = copy.deepcopy(spec)
        layer_specs = spec.pop("layers")
        n_layers = len(layer_specs)
        m.update(spec)
    if n is None:
        n = {0: 1, 3: 1}.get(idx % 8, int(rng.integers(2, 9)))
    m["n"] = n
    if extra is None:
        extra = 0 if idx % 8 in (1, 3, 6) else int(rng.integers(1, 5))
    m["max_positions"] = n + extra
    m["vocab"] = list(VOCAB_NAMES[:m["vocab_size"]])
    m["tokens"] = [int(t) for t in rng.integers(0, m["vocab_size"], size=n)]
    dm, V = m["d_model"], m["vocab_size"]
    if n_layers is None:
        n_layers = 1 + (idx + idx // 4) % 4
    m["layers"] = []
    for li in range(n_layers):
        lin = linear and li == 0
        m["layers"].append(make_layer(m, li, counter + li, rng, "linear" if lin else "softmax",
                                      positive=lin,
                                      spec=layer_specs[li] if layer_specs else None))
    if linear:       # positive inputs and positive W_Q, W_K: every linear-kernel score > 0
        m["embedding"] = rng.uniform(0.5, 1.5, (V, dm))
        m["W_P"] = rng.uniform(0.0, 0.5, (m["max_positions"], dm)) if pos == "learned" else None
    else:
        m["embedding"] = normal(rng, (V, dm))
        m["W_P"] = normal(rng, (m["max_positions"], dm), 0.5) if pos == "learned" else None
    if norm == "pre":
        m["final_gain"] = 1.0 + normal(rng, dm, 0.2)
        if m["norm_function"] != "rms_norm":
            m["final_bias"] = normal(rng, dm, 0.2)
    m["unembedding"] = None if m["tied"] else normal(rng, (dm, V), 1.0 / math.sqrt(dm))
    return m


def all_models(seed=SEED):
    rng = np.random.default_rng(seed)
    models, counter = [], 0
    for idx in range(len(NORMS) * len(FFNS) * len(POSITIONS)):
        norm = NORMS[idx % 3]
        ffn = FFNS[(idx // 3) % 4]
        pos = POSITIONS[(idx // 12) % 4]
        models.append(make_model(idx, norm, ffn, pos, rng, counter))
        counter += len(models[-1]["layers"])
    idx = len(models)
    # The linear kernel: one layer on positive inputs (no norm, so they stay positive).
    models.append(make_model(idx, "none", "relu", "learned", rng, counter, n_layers=2,
                             n=5, extra=1, linear=True))
    counter += 2
    # A long input: max_positions 32, all of it used (like assets/models/tiny.json).
    models.append(make_model(idx + 1, "pre", "gelu", "learned", rng, counter, n_layers=2,
                             n=32, extra=0))
    counter += 2
    # Attention weights drawn from the seed, read back from `trace --layer L`.
    models.append(make_model(idx + 2, "none", "none", "rope", rng, counter, n_layers=3,
                             n=6, extra=2, seeded=True))
    return models


FEATURE_SEED = 31337
FEATURE_IDX = 100       # the feature models are numbered from here


def llama3(factor, lo, hi, l0):
    return {"type": "llama3", "factor": factor, "low_freq_factor": lo, "high_freq_factor": hi,
            "original_max_positions": l0}


# (norm, ffn, positions, tokens, max_positions, spec): models of the model
# file's newer keys.  Layers are "kind" (mha, gqa, mqa, mla), heads, head_dim
# (H * head_dim need not be d_model), mask, qkv_bias / output_bias and "omit"
# (biases the file leaves out, zeros).  rope_scaling's frequencies fall in all
# three of Llama 3's bands at the RoPE width 6 (checked by the coverage).
FEATURE_MODELS = (
    ("pre", "gelu_tanh", "learned", 6, 8,
     dict(label="rms_norm eps 1e-6, gelu_tanh", d_model=6, vocab_size=7, d_ff=9,
          norm_function="rms_norm", norm_eps=1e-6,
          layers=[dict(kind="mha", heads=2, head_dim=3),
                  dict(kind="gqa", heads=4, kv_heads=2, head_dim=2, mask="sliding_window",
                       window=3)])),
    ("post", "swiglu", "sinusoidal", 5, 5,
     dict(label="rms_norm (default eps), post", d_model=5, vocab_size=6, d_ff=7, rope_base=None,
          norm_function="rms_norm",
          layers=[dict(kind="mqa", heads=2, head_dim=2),
                  dict(kind="mla", heads=2, head_dim=2, latent_dim=3)])),
    ("pre", "gelu_tanh", "none", 7, 9,
     dict(label="layer_norm eps 0.01, tied unembedding", d_model=8, vocab_size=9, d_ff=6,
          norm_function="layer_norm", norm_eps=0.01, tied=True,
          layers=[dict(kind="mha", heads=2, head_dim=4), dict(kind="mha", heads=3, head_dim=2)])),
    ("pre", "relu", "rope", 6, 7,
     dict(label="per-layer biases, rope", d_model=6, vocab_size=8, d_ff=5, rope_base=100,
          layers=[dict(kind="mha", heads=2, head_dim=4, qkv_bias=True, output_bias=True),
                  dict(kind="gqa", heads=4, kv_heads=2, head_dim=2, qkv_bias=True,
                       omit=("b_V",)),
                  dict(kind="mqa", heads=2, head_dim=4, output_bias=True),
                  dict(kind="mla", heads=2, head_dim=2, latent_dim=3, rope_dim=2,
                       output_bias=True)])),
    ("pre", "relu", "rope", 8, 12,
     dict(label="rotate_half + llama3 at the model level, H*d != d_model", d_model=8,
          vocab_size=10, d_ff=6, rope_base=None, rope_pairing="rotate_half",
          rope_scaling=llama3(8, 1, 4, 256),
          layers=[dict(kind="mha", heads=2, head_dim=6),
                  dict(kind="gqa", heads=4, kv_heads=2, head_dim=6, qkv_bias=True),
                  dict(kind="mla", heads=2, head_dim=3, latent_dim=4, q_latent=2,
                       rope_dim=6)])),
    ("post", "gelu", "none", 7, 7,
     dict(label="layers differ (sliding window, causal)", d_model=7, vocab_size=9, d_ff=8,
          layers=[dict(kind="mha", heads=2, head_dim=5, mask="sliding_window", window=2),
                  dict(kind="mqa", heads=3, head_dim=3, mask="causal"),
                  dict(kind="gqa", heads=2, kv_heads=1, head_dim=4)])),
    ("pre", "gelu_tanh", "rope", 6, 6,
     dict(label="rms_norm + rotate_half + tied + biases", d_model=6, vocab_size=5, d_ff=4,
          rope_base=500, norm_function="rms_norm", norm_eps=1e-6, tied=True,
          rope_pairing="rotate_half",
          layers=[dict(kind="mha", heads=2, head_dim=4, qkv_bias=True, output_bias=True),
                  dict(kind="mqa", heads=1, head_dim=6, qkv_bias=True, omit=("b_Q",))])),
)


def feature_models():
    """The models of FEATURE_MODELS, from a random stream of their own."""
    rng = np.random.default_rng(FEATURE_SEED)
    return [make_model(FEATURE_IDX + i, norm, ffn, pos, rng, 0, n=n, extra=mp - n, spec=spec)
            for i, (norm, ffn, pos, n, mp, spec) in enumerate(FEATURE_MODELS)]


def attention_block(a, idx):
    """The layer's "attention" object as written to the model file."""
    att = {"variant": a["variant"], "heads": a["heads"], "head_dim": a["head_dim"]}
    if a["variant"] == "gqa" or (a["variant"] == "mqa" and idx % 2):
        att["kv_heads"] = a["kv_heads"]
    if a["variant"] == "mla":
        att["latent_dim"] = a["latent_dim"]
        if a["q_latent"] or idx % 2:
            att["query_latent_dim"] = a["q_latent"]
    if a["rope_dim"]:
        att["rope_dim"] = a["rope_dim"]
    if a["mask_written"]:
        att["mask"] = a["mask"]
    if a["mask"] == "sliding_window":
        att["window"] = a["window"]
    if not a["scale"] or idx % 3 == 0:
        att["scale"] = a["scale"]
    if a["kernel"] != "softmax" or idx % 4 == 1:
        att["kernel"] = a["kernel"]
    if a["sparse"]:
        att["sparse"] = {k: v for k, v in a["sparse"].items() if v is not None}
    for key in ("qkv_bias", "output_bias"):
        if a.get(key):
            att[key] = True
    return att


def tolist(v):
    return np.asarray(v, float).tolist()


def model_json(m):
    """The model file for m (every used weight given; optional keys written or
    left to their defaults depending on the model number)."""
    idx = m["idx"]
    doc = {"name": "model crosscheck %d" % idx, "description": "random NumPy cross-check",
           "vocab": m["vocab"], "d_model": m["d_model"], "max_positions": m["max_positions"]}
    if m["positions"] != "none" or idx % 2:
        doc["positions"] = m["positions"]
    if m["rope_base"] is not None:
        doc["rope_base"] = m["rope_base"]
    for key in ("rope_pairing", "rope_scaling", "norm_function", "norm_eps"):
        if m.get(key) is not None:
            doc[key] = copy.deepcopy(m[key])
    if m.get("tied"):
        doc["tied_unembedding"] = True
    if m["norm"] != "pre" or idx % 2:
        doc["norm"] = m["norm"]
    if m["ffn"] != "none":
        doc["ffn"] = {"kind": m["ffn"], "d_ff": m["d_ff"]}
    elif idx % 2:
        doc["ffn"] = {"kind": "none"}
    doc["layers"] = []
    for i, L in enumerate(m["layers"]):
        layer = {"attention": attention_block(L["att"], idx + i)}
        weights = {k: tolist(v) for k, v in L["all_W"].items()
                   if not (m["seeded"] and k in L["W"]) and k not in L["att"]["omit"]}
        if weights or i % 2:
            layer["weights"] = weights
        doc["layers"].append(layer)
    doc["embedding"] = tolist(m["embedding"])
    if m["W_P"] is not None:
        doc["W_P"] = tolist(m["W_P"])
    if m["norm"] == "pre":
        doc["final_gain"] = tolist(m["final_gain"])
        if "final_bias" in m:
            doc["final_bias"] = tolist(m["final_bias"])
    if not m.get("tied"):
        doc["unembedding"] = tolist(m["unembedding"])
    doc["seed"] = 3 + idx
    return doc


def token_string(m, tokens=None):
    return " ".join(m["vocab"][t] for t in (m["tokens"] if tokens is None else tokens))


def describe(m):
    layers = []
    for L in m["layers"]:
        a = L["att"]
        v = {"mha": "mha", "mqa": "mqa", "gqa": "gqa%d/%d" % (a["heads"], a["kv_heads"]),
             "mla": "mla(dc=%d,dq=%d%s)" % (a["latent_dim"], a["q_latent"],
                                             ",dR=%d" % a["rope_dim"] if a["rope_dim"] else "")
             }[a["variant"]]
        s = "%s H=%d d=%d %s%s" % (v, a["heads"], a["head_dim"],
                                   a["mask"] + ("" if a["mask_written"] else "(default)"),
                                   "(w=%d)" % a["window"] if a["mask"] == "sliding_window" else "")
        if a["kernel"] != "softmax":
            s += " linear"
        if not a["scale"]:
            s += " noscale"
        if a["sparse"]:
            s += " " + sparse_label(a["sparse"])
        for key in ("qkv_bias", "output_bias"):
            if a.get(key):
                s += " " + key
        if a["omit"]:
            s += " (left out: %s)" % ",".join(a["omit"])
        layers.append(s)
    pos = m["positions"]
    if m["rope_base"] is not None:
        pos += "(base=%s)" % m["rope_base"]
    if m.get("rope_pairing"):
        pos += " " + m["rope_pairing"]
    if m.get("rope_scaling"):
        sc = m["rope_scaling"]
        pos += " llama3(F=%s,lo=%s,hi=%s,L0=%s)" % (sc["factor"], sc["low_freq_factor"],
                                                    sc["high_freq_factor"],
                                                    sc["original_max_positions"])
    norm = m["norm"]
    if m.get("norm_function") or m.get("norm_eps") is not None:
        norm += "(%s%s)" % (m.get("norm_function") or "layer_norm",
                            "" if m.get("norm_eps") is None else ",eps=%g" % m["norm_eps"])
    return "#%-2d %snorm=%s ffn=%s%s pos=%s dm=%d V=%d N=%d maxp=%d%s layers=[%s]" % (
        m["idx"], "seeded-attention " if m["seeded"] else "", norm, m["ffn"],
        "(d_ff=%d)" % m["d_ff"] if m["d_ff"] else "", pos, m["d_model"], m["vocab_size"],
        m["n"], m["max_positions"], " tied" if m.get("tied") else "", "; ".join(layers))


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

class Report(Checks):
    """Mismatches of one check, each naming field, layer, row and column: reference.Checks with a
    tolerance relative to each expected value (a model's logits grow with its depth)."""

    def cmp(self, expected, found, field, layer=None):
        where = field if layer is None else "layer %d %s" % (layer, field)
        exp = np.asarray(expected, float)
        try:
            got = as_array(found, where)
        except Mismatch as e:
            self.fail(str(e))
            return False
        if exp.ndim == 2 and exp.shape[0] == 0 and got.size == 0:
            return True
        if got.shape != exp.shape:
            self.fail("%s: shape %s, expected %s" % (where, got.shape, exp.shape))
            return False
        diff = np.abs(got - exp)
        bad = ~(diff <= TOL * (1.0 + np.abs(exp)))
        if exp.size:
            self.max_err = max(self.max_err, float(np.max(diff / (1.0 + np.abs(exp)))))
        if bad.any():
            pos = tuple(np.argwhere(bad)[0])
            rc = ("row %d col %d" % pos) if len(pos) == 2 else "index %d" % pos[0]
            self.fail("%s %s: expected %.17g, found %.17g (|diff| %.2e; %d of %d cells differ)"
                      % (where, rc, exp[pos], got[pos], diff[pos], int(bad.sum()), bad.size))
            return False
        return True


def binary_selection(att, found_heads):
    """The top-k selection the binary's head weights show (nonzero = selected)."""
    w = as_array(found_heads[0].get("weights"), "weights")
    return ((w != 0) & (att["base_mask"] == 1)).astype(float)


def follow_near_ties(m, ref, out, rep):
    """A sparse layer whose indexer scores have near-ties (within 1e-9, not
    exactly equal) may select either key under another summation order: if the
    binary's selection (read from its head weights) is a top-k of the
    reference's scores to that tolerance, follow it.  Returns the new reference."""
    follow = {}
    for li, lr in enumerate(ref["layers"]):
        info = lr["att"].get("topk_info")
        if not info or not info["near"]:
            continue
        try:
            fl = out["layers"][li]["attention"]["heads"]
            sel = binary_selection(lr["att"], fl)
        except (Mismatch, KeyError, IndexError, TypeError):
            continue
        I = lr["att"]["indexer"]["I"]
        k = lr["acfg"]["sparse"]["top_k"]
        ok = True
        for i in range(I.shape[0]):
            vis = lr["att"]["base_mask"][i] == 1
            s_in, s_out = I[i][vis & (sel[i] == 1)], I[i][vis & (sel[i] == 0)]
            if len(s_in) != min(k, int(vis.sum())) or (
                    len(s_out) and s_in.min() < s_out.max() - 1e-9 * max(1.0, abs(s_in.min()))):
                ok = False
        if ok and not np.array_equal(sel, lr["att"]["indexer"]["selected"]):
            follow[li] = sel
    if not follow:
        return ref
    rep.note = " [near-tie in layer(s) %s: binary's selection followed]" % sorted(follow)
    return model_reference(m, selected=follow)


def check_run(m, out, rep):
    """Compare `run --json` with the reference; return the reference."""
    ref = model_reference(m)
    if not isinstance(out, dict):
        rep.fail("output: expected an object")
        return ref
    ref = follow_near_ties(m, ref, out, rep)
    rep.eq([m["vocab"][t] for t in m["tokens"]], out.get("tokens"), "tokens")
    layers = out.get("layers")
    if not isinstance(layers, list) or len(layers) != len(m["layers"]):
        rep.fail("layers: expected a list of %d, found %r" % (
            len(m["layers"]), type(layers).__name__ if not isinstance(layers, list)
            else len(layers)))
        layers = []
    for li, (lr, fl) in enumerate(zip(ref["layers"], layers)):
        if not isinstance(fl, dict):
            rep.fail("layer %d: expected an object" % li)
            continue
        rep.cmp(lr["residual_in"], fl.get("residual_in"), "residual_in", li)
        fa = fl.get("attention")
        if not isinstance(fa, dict):
            rep.fail("layer %d attention: expected an object" % li)
        else:
            heads = fa.get("heads")
            rh = lr["att"]["heads"]
            if not isinstance(heads, list) or len(heads) != len(rh):
                rep.fail("layer %d attention.heads: expected %d entries" % (li, len(rh)))
            else:
                for h, (r, f) in enumerate(zip(rh, heads)):
                    rep.cmp(r["weights"], (f or {}).get("weights") if isinstance(f, dict)
                            else None, "attention.heads[%d].weights" % h, li)
            rep.cmp(lr["att"]["output"], fa.get("output"), "attention.output", li)
        if lr["ffn_out"] is None:
            if "ffn_out" not in fl or fl["ffn_out"] is not None:
                rep.fail("layer %d ffn_out: expected null (no FFN), found %s" % (
                    li, "no key" if "ffn_out" not in fl else "a value"))
        else:
            rep.cmp(lr["ffn_out"], fl.get("ffn_out"), "ffn_out", li)
        rep.cmp(lr["residual_out"], fl.get("residual_out"), "residual_out", li)
    rep.cmp(ref["logits"], out.get("logits"), "logits")
    rep.cmp(ref["probabilities"], out.get("probabilities"), "probabilities")
    return ref


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

class Runner(Binary):
    """The binary, counting outcomes."""

    def __init__(self, binary, folder, keep):
        super().__init__(binary, folder, timeout=30)
        self.keep = keep
        self.failed = 0
        self.passed = 0

    def tally(self, ok, line, rep=None, doc=None, name=None):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        if rep is not None and not ok:
            line += error_lines(rep.errors, 8)
        print("%s %s" % ("ok  " if ok else "FAIL", line))
        if not ok and doc is not None and self.keep:
            fail = os.path.join(self.keep, "fail")
            os.makedirs(fail, exist_ok=True)
            with open(os.path.join(fail, name), "w") as f:
                json.dump(doc, f, ensure_ascii=False)


def run_models(runner, models, seen, features=False):
    """`run --json` of every model against the reference; {idx: reference} of the
    agreeing ones.  features: feature models (their own coverage)."""
    refs = {}
    for m in models:
        doc = model_json(m)
        name = "model_%02d.json" % m["idx"]
        path = runner.write(name, doc)
        rep = Report()
        rep.note = ""
        ref = None
        try:
            if m["seeded"]:
                read_seeded_weights(runner, m, path)
            out = runner.json("run", path, "--tokens", token_string(m), "--json")
            seen.setdefault("accepted", set()).add(m["idx"])
            ref = check_run(m, out, rep)
        except Mismatch as e:
            rep.fail(str(e))
        ok = not rep.errors
        runner.tally(ok, "run   %s%s%s  --tokens %r" % (
            describe(m), rep.note, "  max_err=%.1e" % rep.max_err if ok else "",
            token_string(m)), rep, doc, name)
        if ok:
            (note_feature_coverage if features else note_coverage)(seen, m)
            refs[m["idx"]] = ref
    return refs


def read_seeded_weights(runner, m, path):
    """A model whose file leaves the attention weights to the seed: read each
    layer's back from `trace MODEL --layer L --json` (which echoes every weight
    the layer's attention uses, and nothing else) into the model's weights."""
    for li, L in enumerate(m["layers"]):
        out = runner.json("trace", path, "--layer", li, "--tokens", token_string(m), "--json")
        echoed = out.get("weights")
        shapes = weight_shapes(L["att"])
        if not isinstance(echoed, dict) or sorted(echoed) != sorted(shapes):
            raise Mismatch("trace --layer %d: weights: expected %s, found %s" % (
                li, sorted(shapes), sorted(echoed) if isinstance(echoed, dict) else echoed))
        for name, shape in shapes.items():
            W = as_array(echoed[name], "trace --layer %d: weights.%s" % (li, name))
            if W.shape != shape:
                raise Mismatch("trace --layer %d: weights.%s: seeded shape %s, expected %s"
                               % (li, name, W.shape, shape))
            L["W"][name] = L["att"]["W"][name] = L["all_W"][name] = W


def trace_targets(models):
    """(model, layer) pairs for the `trace --layer` check: every seventh model (so
    norms and positions kinds cycle) at a layer that cycles, plus the first
    pre-LN rope mla layer, post-LN sparse layer, no-norm rope gqa layer and
    the linear-kernel layer."""
    picks = [(m, m["idx"] % len(m["layers"])) for m in models if m["idx"] % 7 == 5]

    def first(pred):
        for m in models:
            for li, L in enumerate(m["layers"]):
                if pred(m, L["att"]) and (m, li) not in picks:
                    return m, li
        return None
    for pred in (lambda m, a: a["variant"] == "mla" and a["rope_dim"] and m["norm"] == "pre",
                 lambda m, a: a["sparse"] is not None and m["norm"] == "post",
                 lambda m, a: (a["variant"] == "gqa" and m["positions"] == "rope"
                               and m["norm"] == "none"),
                 lambda m, a: a["kernel"] == "linear"):
        p = first(pred)
        if p:
            picks.append(p)
    return picks


def run_traces(runner, models, refs, seen, targets=None):
    """`trace MODEL --layer L` (and its --scenario OUT.json) of each target
    (model, layer); default trace_targets(models).  With targets: feature
    models (their own coverage)."""
    for m, li in trace_targets(models) if targets is None else targets:
        if m["idx"] not in refs:
            runner.tally(False, "trace #%d --layer %d: skipped, `run` of that model failed"
                         % (m["idx"], li))
            continue
        ref = refs[m["idx"]]
        lr = ref["layers"][li]
        doc = model_json(m)
        name = "model_%02d.json" % m["idx"]
        path = runner.write(name, doc)
        out_path = os.path.join(runner.folder, "layer_%02d_%d.json" % (m["idx"], li))
        if os.path.exists(out_path):
            os.remove(out_path)
        rep = Report()
        chk = Checks()
        names = [m["vocab"][t] for t in m["tokens"]]
        label = "trace #%d --layer %d (norm=%s pos=%s %s)" % (
            m["idx"], li, m["norm"], m["positions"], describe(m).split("layers=[")[1]
            .split("; ")[li].rstrip("]"))
        out2 = None
        try:
            out = runner.json("trace", path, "--layer", li, "--tokens", token_string(m),
                              "--json", "--scenario", out_path)
            check_layer_trace(m, li, lr, out, names, rep, chk)
            if not os.path.isfile(out_path):
                rep.fail("--scenario %s: no file written" % out_path)
            else:
                out2 = runner.json("trace", out_path, "--json")
                check_layer_trace(m, li, lr, out2, names, rep, Checks(), "OUT.json: ")
                for key in ("x", "output", "concat"):
                    rep.cmp(np.asarray(as_array(out.get(key), key)), out2.get(key),
                            "trace OUT.json --json: %s (vs trace MODEL --layer)" % key)
        except Mismatch as e:
            rep.fail(str(e))
        ok = not rep.errors
        runner.tally(ok, label + ("  max_err=%.1e" % max(rep.max_err, chk.max_err) if ok else ""),
                     rep, doc, name)
        if ok and targets is not None:
            note_feature_trace(seen, m, lr["acfg"])
        elif ok:
            feats = seen.setdefault("trace", set())
            a = lr["acfg"]
            feats.update({"norm " + m["norm"], a["variant"], "model positions " + m["positions"]})
            if a["sparse"]:
                feats.add("sparse")
            if li > 0:
                feats.add("layer > 0")


def check_layer_trace(m, li, lr, out, names, rep, chk, prefix=""):
    """The trace of layer li as the scenario the reference's layer computed:
    x is the normalised stream entering it, every intermediate as
    reference.reference has it, output = the layer's attention output."""
    rep.eq(names, out.get("tokens"), prefix + "tokens")
    rep.eq(names, out.get("context_tokens"), prefix + "context_tokens")
    acfg = dict(lr["acfg"])
    shown = dict(out)
    shown["tokens"] = ["q%d" % i for i in range(acfg["n_q"])]
    shown["context_tokens"] = list(shown["tokens"])
    check_trace(acfg, shown, chk)
    rep.errors += [prefix + e for e in chk.errors]
    rep.cmp(lr["attn_in"], out.get("x"), prefix + "x (normalised stream entering the layer)", li)
    rep.cmp(lr["att"]["output"], out.get("output"), prefix + "output (the layer's attention output)",
            li)


# --------------------------------------------------------------------------
# Bad model files and invocations
# --------------------------------------------------------------------------

def case_adder(models, cases):
    """add(label, pred, change, paths, words=(), args=None): the model file of the
    first model pred accepts, changed by change(m, doc), as a case of `cases`
    (label, doc, args after the file, paths: the message must contain ": PATH"
    for one of them, words: and each of these); args None = run --tokens (the
    model's), and the number of the model it breaks."""
    def add(label, pred, change, paths, words=(), args=None):
        m = next((m for m in models if pred(m)), None)
        if m is None:
            cases.append((label, None, None, paths, words, None))
            return
        doc = copy.deepcopy(model_json(m))
        change(m, doc)          # edits doc in place
        a = args(m) if args else ["run", "--tokens", token_string(m), "--json"]
        cases.append(("%s (from #%d)" % (label, m["idx"]), doc, a, paths, words, m["idx"]))
    return add


def invalid_cases(models):
    """The cases of case_adder: bad model files and invocations."""
    cases = []
    add = case_adder(models, cases)

    def two_layers(m):
        return len(m["layers"]) >= 2 and m["ffn"] in ("relu", "gelu") and m["norm"] != "none"

    def set_(d, k, v):
        d[k] = v

    add("unknown top-level key", lambda m: True, lambda m, d: set_(d, "colour", "red"),
        ("colour",), ("colour",))
    add("unknown key in a layer", two_layers,
        lambda m, d: set_(d["layers"][1], "dropout", 0.1),
        ("layers[1].dropout", "layers[1]"), ("dropout",))
    add("unknown key in a layer's attention", lambda m: True,
        lambda m, d: set_(d["layers"][0]["attention"], "temperature", 2),
        ("layers[0].attention.temperature", "layers[0].attention"), ("temperature",))
    add("unknown weight name", lambda m: True,
        lambda m, d: set_(d["layers"][0]["weights"], "W_X", [[0.0]]),
        ("layers[0].weights.W_X", "layers[0].weights"), ("W_X",))
    add("duplicate vocab token", lambda m: m["vocab_size"] >= 4,
        lambda m, d: set_(d["vocab"], 3, d["vocab"][1]), ("vocab[3]",))
    add("empty vocab", lambda m: True, lambda m, d: set_(d, "vocab", []), ("vocab",))
    add("no vocab", lambda m: True, lambda m, d: d.pop("vocab"), ("vocab",))
    add("W_1 one row short", two_layers,
        lambda m, d: d["layers"][1]["weights"]["W_1"].pop(), ("layers[1].weights.W_1",))
    add("ln1_gain one number short", lambda m: m["norm"] != "none",
        lambda m, d: d["layers"][0]["weights"]["ln1_gain"].pop(), ("layers[0].weights.ln1_gain",))
    add("ln1_gain a matrix", lambda m: m["norm"] != "none",
        lambda m, d: set_(d["layers"][0]["weights"], "ln1_gain",
                          [d["layers"][0]["weights"]["ln1_gain"]]),
        ("layers[0].weights.ln1_gain",))
    add("embedding one row short", lambda m: True, lambda m, d: d["embedding"].pop(),
        ("embedding",))
    add("embedding one column short", lambda m: True, lambda m, d: d["embedding"][0].pop(),
        ("embedding", "embedding[0]"))
    add("unembedding one column short", lambda m: True,
        lambda m, d: [r.pop() for r in d["unembedding"]], ("unembedding", "unembedding[0]"))
    add("unembedding transposed", lambda m: m["d_model"] != m["vocab_size"],
        lambda m, d: set_(d, "unembedding", np.asarray(d["unembedding"]).T.tolist()),
        ("unembedding",))
    add("b_1 with swiglu", lambda m: m["ffn"] == "swiglu",
        lambda m, d: set_(d["layers"][0]["weights"], "b_1", [0.0] * m["d_ff"]),
        ("layers[0].weights.b_1",))
    add("W_3 with gelu", lambda m: m["ffn"] == "gelu",
        lambda m, d: set_(d["layers"][0]["weights"], "W_3",
                          np.zeros((m["d_model"], m["d_ff"])).tolist()),
        ("layers[0].weights.W_3",))
    add("W_P without learned positions", lambda m: m["positions"] == "sinusoidal",
        lambda m, d: set_(d, "W_P", np.zeros((m["max_positions"], m["d_model"])).tolist()),
        ("W_P",))
    add("final_gain with post", lambda m: m["norm"] == "post",
        lambda m, d: set_(d, "final_gain", [1.0] * m["d_model"]), ("final_gain",))
    add("ln1_gain with norm none", lambda m: m["norm"] == "none",
        lambda m, d: set_(d["layers"][0]["weights"], "ln1_gain", [1.0] * m["d_model"]),
        ("layers[0].weights.ln1_gain",))
    add("ln2_bias without an ffn", lambda m: m["norm"] == "pre" and m["ffn"] == "none",
        lambda m, d: set_(d["layers"][0]["weights"], "ln2_bias", [0.0] * m["d_model"]),
        ("layers[0].weights.ln2_bias",))
    add("positions inside a layer's attention", lambda m: True,
        lambda m, d: set_(d["layers"][0]["attention"], "positions", "rope"),
        ("layers[0].attention.positions",))
    add("rope_base inside a layer's attention", lambda m: m["positions"] == "rope",
        lambda m, d: set_(d["layers"][0]["attention"], "rope_base", 100),
        ("layers[0].attention.rope_base",))
    add("position_offset inside a layer's attention", lambda m: True,
        lambda m, d: set_(d["layers"][0]["attention"], "position_offset", 1),
        ("layers[0].attention.position_offset",))
    add("custom mask", lambda m: True,
        lambda m, d: d["layers"][0]["attention"].update(
            mask="custom", custom_mask=np.tril(np.ones((m["n"], m["n"]), int)).tolist()),
        ("layers[0].attention.mask", "layers[0].attention.custom_mask"))
    add("d_ff with ffn kind none", lambda m: m["ffn"] == "none",
        lambda m, d: set_(d, "ffn", {"kind": "none", "d_ff": 8}), ("ffn.d_ff",))
    add("missing d_ff", lambda m: m["ffn"] == "relu",
        lambda m, d: d["ffn"].pop("d_ff"), ("ffn.d_ff", "ffn"))
    add("unknown ffn kind", lambda m: m["ffn"] == "none" and m["norm"] == "none",
        lambda m, d: set_(d, "ffn", {"kind": "tanh", "d_ff": 4}), ("ffn.kind",))
    add("rope_base with learned positions", lambda m: m["positions"] == "learned",
        lambda m, d: set_(d, "rope_base", 100), ("rope_base",))
    add("unknown positions kind", lambda m: m["positions"] == "none",
        lambda m, d: set_(d, "positions", "alibi"), ("positions",))
    add("unknown norm", lambda m: m["norm"] == "none",
        lambda m, d: set_(d, "norm", "rms"), ("norm",))
    add("0 layers", lambda m: True, lambda m, d: set_(d, "layers", []), ("layers",))
    add("too many tokens for max_positions", lambda m: True, lambda m, d: None,
        ("tokens", "--tokens", "max_positions"), (),
        args=lambda m: ["run", "--tokens", token_string(m, [0] * (m["max_positions"] + 1)),
                        "--json"])
    add("no tokens", lambda m: True, lambda m, d: None, ("tokens", "--tokens"), (),
        args=lambda m: ["run", "--tokens", " ", "--json"])
    add("unknown token", lambda m: m["n"] >= 2, lambda m, d: None,
        ("--tokens",), ('word 3, "zz"',),
        args=lambda m: ["run", "--tokens", token_string(m, m["tokens"][:2]) + " zz", "--json"])
    add("trace --layer past the last layer", lambda m: True, lambda m, d: None,
        ("--layer",), (),
        args=lambda m: ["trace", "--layer", len(m["layers"]), "--tokens", token_string(m),
                        "--json"])
    return cases


def feature_invalid_cases(models):
    """Model files breaking a rule of the newer keys (norm_function, norm_eps,
    tied_unembedding, model-level rope_pairing / rope_scaling, layer biases)."""
    cases = []
    add = case_adder(models, cases)

    def set_(d, k, v):
        d[k] = v

    def rms(m):
        return m["norm_function"] == "rms_norm" and m["norm"] == "pre"

    def layer_weights_(li, name, value):
        return lambda m, d: set_(d["layers"][li]["weights"], name, value(m))

    def rope_model(m):
        return m["positions"] == "rope" and m["rope_scaling"] is not None

    add("ln1_bias with rms_norm", rms,
        layer_weights_(0, "ln1_bias", lambda m: [0.0] * m["d_model"]),
        ("layers[0].weights.ln1_bias",))
    add("ln2_bias with rms_norm", lambda m: rms(m) and m["ffn"] != "none",
        layer_weights_(0, "ln2_bias", lambda m: [0.0] * m["d_model"]),
        ("layers[0].weights.ln2_bias",))
    add("final_bias with rms_norm", rms, lambda m, d: set_(d, "final_bias", [0.0] * m["d_model"]),
        ("final_bias",))
    add("unembedding with tied_unembedding true", lambda m: m["tied"],
        lambda m, d: set_(d, "unembedding",
                          np.zeros((m["d_model"], m["vocab_size"])).tolist()),
        ("unembedding", "tied_unembedding"))
    add("tied_unembedding not a boolean", lambda m: m["tied"],
        lambda m, d: set_(d, "tied_unembedding", 1), ("tied_unembedding",))
    add("norm_eps 0", lambda m: m["norm_eps"] is not None,
        lambda m, d: set_(d, "norm_eps", 0), ("norm_eps",))
    add("norm_eps -1e-5", lambda m: m["norm_function"] == "layer_norm",
        lambda m, d: set_(d, "norm_eps", -1e-5), ("norm_eps",))
    add("norm_eps 1.5", lambda m: m["norm_function"] == "rms_norm",
        lambda m, d: set_(d, "norm_eps", 1.5), ("norm_eps",))
    add("unknown norm_function", lambda m: m["norm_function"] is not None,
        lambda m, d: set_(d, "norm_function", "batch_norm"), ("norm_function",))
    add("rope_pairing inside a layer's attention", rope_model,
        lambda m, d: set_(d["layers"][0]["attention"], "rope_pairing", "rotate_half"),
        ("layers[0].attention.rope_pairing",))
    add("rope_scaling inside a layer's attention", rope_model,
        lambda m, d: set_(d["layers"][0]["attention"], "rope_scaling", llama3(8, 1, 4, 32)),
        ("layers[0].attention.rope_scaling",))
    add("rope_pairing with learned positions", lambda m: m["positions"] == "learned",
        lambda m, d: set_(d, "rope_pairing", "rotate_half"), ("rope_pairing",))
    add("rope_scaling with positions none", lambda m: m["positions"] == "none",
        lambda m, d: set_(d, "rope_scaling", llama3(8, 1, 4, 32)), ("rope_scaling",))
    add("rope_scaling of an unknown type", rope_model,
        lambda m, d: d["rope_scaling"].update(type="linear"), ("rope_scaling",))
    add("b_Q in a layer without qkv_bias", lambda m: m["label"].startswith("layers differ"),
        layer_weights_(0, "b_Q", lambda m: [0.0] * (m["layers"][0]["att"]["heads"] *
                                                    m["layers"][0]["att"]["head_dim"])),
        ("layers[0].weights.b_Q",))
    add("b_O one number short", lambda m: m["layers"][0]["att"].get("output_bias"),
        lambda m, d: d["layers"][0]["weights"]["b_O"].pop(), ("layers[0].weights.b_O",))
    return cases


def run_invalid(runner, models, cases=None, accepted=None):
    """Each bad model file (default invalid_cases(models)) must exit 2 with one
    line naming its field.  accepted: the numbers of the models `run` accepted;
    given, the model a case breaks must be among them (else a binary that does
    not know a key at all passes by refusing it as unknown)."""
    for n, (label, doc, args, paths, words, base) in enumerate(
            invalid_cases(models) if cases is None else cases):
        if doc is None:
            runner.tally(False, "invalid %s: no model of that kind" % label)
            continue
        name = "invalid_%02d.json" % n if cases is None else "features_invalid_%02d.json" % n
        path = runner.write(name, doc)
        cmd = [args[0], path] + list(args[1:])
        code, _, err = runner.call(*cmd)
        lines = err.strip().splitlines()
        msg = (lines or ["(no message)"])[0].replace(path, "FILE")
        named = [p for p in paths if (": " + p) in err or err.startswith(p)]
        missing = [w for w in words if w not in err]
        ok = code == 2 and bool(named) and not missing and len(lines) == 1
        why = "" if ok else "  [expected exit 2 and one line naming %s%s]" % (
            " or ".join(paths), " with " + ", ".join(words) if words else "")
        if accepted is not None and base not in accepted:
            ok = False
            why += "  [the valid #%d it breaks was refused: no evidence]" % base
        runner.tally(ok, "invalid %s -> exit %d: %s%s" % (label, code, msg, why), None, doc, name)


# --------------------------------------------------------------------------
# Coverage
# --------------------------------------------------------------------------

REQUIRED = {
    "norm x ffn x positions": {"%s %s %s" % (n, f, p) for n in NORMS for f in FFNS
                               for p in POSITIONS},
    "kind": set(KINDS),
    "kind x rope": {"%s rope" % k for k in KINDS},
    "mask": set(MASKS),
    "feature": {"linear kernel", "scale off", "sparse", "sparse with rope", "sparse mla",
                "N = 1", "N = max_positions", "N < max_positions", "1 layer", "2 layers",
                "3 layers", "4 layers", "defaults written out", "defaults left out",
                "rope_base default", "rope_base given", "N = 32", "seeded attention weights"},
    "d_model": set(range(4, 17)),
    "vocab": set(range(3, 13)),
}


def note_coverage(seen, m):
    seen.setdefault("norm x ffn x positions", set()).add(
        "%s %s %s" % (m["norm"], m["ffn"], m["positions"]))
    feats = seen.setdefault("feature", set())
    for L in m["layers"]:
        a = L["att"]
        seen.setdefault("kind", set()).add(a["kind"])
        if m["positions"] == "rope":
            seen.setdefault("kind x rope", set()).add("%s rope" % a["kind"])
        seen.setdefault("mask", set()).add("default" if not a["mask_written"] else a["mask"])
        if a["kernel"] == "linear":
            feats.add("linear kernel")
        if not a["scale"]:
            feats.add("scale off")
        if a["sparse"]:
            feats.add("sparse")
            if m["positions"] == "rope":
                feats.add("sparse with rope")
            if a["variant"] == "mla":
                feats.add("sparse mla")
    n, mp = m["n"], m["max_positions"]
    feats.add("N = 1" if n == 1 else "N = 32" if n == 32 else "N > 1")
    feats.add("N = max_positions" if n == mp else "N < max_positions")
    feats.add("%d layer%s" % (len(m["layers"]), "" if len(m["layers"]) == 1 else "s"))
    feats.add("defaults written out" if m["idx"] % 2 else "defaults left out")
    if m["positions"] in ("sinusoidal", "rope"):
        feats.add("rope_base default" if m["rope_base"] is None else "rope_base given")
    if m["seeded"]:
        feats.add("seeded attention weights")
    seen.setdefault("d_model", set()).add(m["d_model"])
    seen.setdefault("vocab", set()).add(m["vocab_size"])


TRACE_REQUIRED = {"norm pre", "norm post", "norm none", "mha", "gqa", "mqa", "mla",
                  "sparse", "layer > 0"} | {"model positions " + p for p in POSITIONS}


FEATURE_REQUIRED = {
    "rms_norm pre", "rms_norm post", "norm_eps given", "norm_eps default", "layer_norm norm_eps",
    "gelu_tanh", "tied_unembedding", "qkv_bias", "output_bias", "bias left out (zeros)",
    "mla output_bias", "rope_pairing rotate_half", "mla rotate_half", "llama3 band high",
    "llama3 band mid", "llama3 band low", "H*head_dim != d_model", "layers differ in mask",
    "trace rms_norm", "trace qkv_bias", "trace output_bias", "trace rotate_half",
    "trace llama3", "trace mla rotate_half", "trace sliding_window", "trace H*head_dim != d_model",
}


def note_feature_coverage(seen, m):
    feats = seen.setdefault("features", set())
    nf = m["norm_function"] or "layer_norm"
    if nf == "rms_norm":
        feats.add("rms_norm " + m["norm"])
    if m["norm_eps"] is not None:
        feats.add("norm_eps given")
        if nf == "layer_norm":
            feats.add("layer_norm norm_eps")
    elif m["norm"] != "none":
        feats.add("norm_eps default")
    if m["ffn"] == "gelu_tanh":
        feats.add("gelu_tanh")
    if m["tied"]:
        feats.add("tied_unembedding")
    masks = set()
    for L in m["layers"]:
        a = L["att"]
        masks.add((a["mask"], a.get("window") if a["mask"] == "sliding_window" else None))
        for key in ("qkv_bias", "output_bias"):
            if a.get(key):
                feats.add(key)
        if a.get("output_bias") and a["variant"] == "mla":
            feats.add("mla output_bias")
        if a["omit"]:
            feats.add("bias left out (zeros)")
        if a["heads"] * a["head_dim"] != m["d_model"]:
            feats.add("H*head_dim != d_model")
        if m["positions"] == "rope" and m["rope_pairing"] == "rotate_half":
            feats.add("rope_pairing rotate_half")
            if a["variant"] == "mla":
                feats.add("mla rotate_half")
        if m["positions"] == "rope" and m["rope_scaling"]:
            width = a["rope_dim"] if a["variant"] == "mla" else a["head_dim"]
            base = 10000.0 if m["rope_base"] is None else float(m["rope_base"])
            feats.update("llama3 band " + b for b in
                         rope_bands(inv_freq(width, base), m["rope_scaling"]))
    if len({mk for mk, _ in masks}) > 1:
        feats.add("layers differ in mask")


def feature_trace_targets(models):
    """(model, layer) for `trace --layer` of the feature models: each model's
    first layer with a bias, rotate_half / llama3 (an mla layer too), a sliding
    window, or rms_norm."""
    picks = []
    for m in models:
        for li, L in enumerate(m["layers"]):
            a = L["att"]
            if a.get("qkv_bias") or a.get("output_bias") or a["variant"] == "mla" and \
                    m["rope_pairing"] or a["mask"] == "sliding_window" or \
                    (m["norm_function"] == "rms_norm" and li == len(m["layers"]) - 1):
                if a["variant"] == "mla" and a.get("output_bias"):
                    continue        # the absorbed form's b_O: not pinned by the format
                picks.append((m, li))
    return picks


def note_feature_trace(seen, m, a):
    feats = seen.setdefault("features", set())
    if m["norm_function"] == "rms_norm":
        feats.add("trace rms_norm")
    for key in ("qkv_bias", "output_bias"):
        if a.get(key):
            feats.add("trace " + key)
    if a.get("rope_pairing") == "rotate_half":
        feats.add("trace mla rotate_half" if a["variant"] == "mla" else "trace rotate_half")
    if a.get("rope_scaling"):
        feats.add("trace llama3")
    if a["mask"] == "sliding_window":
        feats.add("trace sliding_window")
    if a["heads"] * a["head_dim"] != m["d_model"]:
        feats.add("trace H*head_dim != d_model")


def coverage_gaps(seen):
    gaps = ["%s %s" % (k, sorted(need - seen.get(k, set()), key=str))
            for k, need in REQUIRED.items() if need - seen.get(k, set())]
    if TRACE_REQUIRED - seen.get("trace", set()):
        gaps.append("trace %s" % sorted(TRACE_REQUIRED - seen.get("trace", set())))
    return gaps


def main():
    parser = command_line(
        __doc__, keep="write the model files here (failing ones also to KEEP/fail)")
    parser.add_argument("--only-new", action="store_true",
                        help="only the reference self-check and the feature models (norm_function, "
                             "norm_eps, gelu_tanh, tied_unembedding, biases, rope_pairing, "
                             "rope_scaling, free head_dim)")
    args = parser.parse_args()
    probe(args.binary)

    models = [] if args.only_new else all_models()
    features = feature_models()
    with work_folder(args.keep, "model_crosscheck_") as folder:
        runner = Runner(args.binary, folder, args.keep)
        fails = self_check()
        runner.tally(not fails, "reference self-check (rotate_half, llama3, biases, norms)"
                     + ("" if not fails else error_lines(fails, 8)))
        seen = {}
        try:
            if models:
                refs = run_models(runner, models, seen)
                run_traces(runner, models, refs, seen)
                run_invalid(runner, models)
            refs = run_models(runner, features, seen, features=True)
            run_traces(runner, features, refs, seen, feature_trace_targets(features))
            run_invalid(runner, features, feature_invalid_cases(features),
                        seen.get("accepted", set()))
        except (OSError, subprocess.SubprocessError) as e:
            return cannot_run(args.binary, e)
    gaps = [] if args.only_new else coverage_gaps(seen)
    if FEATURE_REQUIRED - seen.get("features", set()):
        gaps.append("features %s" % sorted(FEATURE_REQUIRED - seen.get("features", set())))
    print("coverage: " + ("complete" if not gaps else "MISSING " + "; ".join(gaps)))
    print("%d models (%d feature models), %d passed, %d failed, %d binary runs" % (
        len(models) + len(features), len(features), runner.passed, runner.failed, runner.runs))
    return 0 if runner.failed == 0 and not gaps else 1


if __name__ == "__main__":
    sys.exit(main())
