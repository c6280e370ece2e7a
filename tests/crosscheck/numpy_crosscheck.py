#!/usr/bin/python3
"""Independent NumPy cross-check of the Attention Lab engine.

Why this exists: the C++ engine's own unit tests are written by the same hands
as the engine, so a misreading of the maths could show up in both.  This script
is a second, independent implementation of the attention pipeline (written from
the specification only, never from the C++ sources; reference.py next to
this file holds it, shared with the other cross-checks).  It generates random
scenarios from a fixed seed, runs ``attention-lab trace FILE --json`` on each,
recomputes every intermediate in float64 NumPy and compares them field by field.
Every variant is covered: mha, gqa (query heads share KV heads in groups), mqa
(one KV head) and mla (keys and values expanded from a shared latent, with the
"absorbed" form checked against the explicit one).  A few invalid scenario
files, each breaking one rule of the file format, must be refused.

Run:  /usr/bin/python3 numpy_crosscheck.py --binary build/app/attention-lab

Exit status: 0 all configurations agree, 1 at least one mismatch,
2 the binary cannot be run at all.

Numerical notes: the tolerance is absolute, |expected - found| <= 1e-9.
Ordinary configurations use values with three decimals in [-2, 2] (or [0, 2]
for the linear kernel, so that the normaliser Z is far from 0).  The
large-magnitude configurations use multiples of 1/4, so Q, K, V and the scores
are exact in float64 whatever the summation order; with the scale off (or
head_dim 4, where sqrt(d) = 2) the softmax inputs are then exact too, and an
absolute 1e-9 is meaningful even though the scores exceed 1e5.  The linear
kernel's edge cases (negative weights -> "signed", Z cancelling to rounding
noise -> "zero_sum") are hand-made configurations with exact inputs.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import (Checks, Mismatch, check_equal, command_line, compare,  # noqa: E402
                       context_length, probe, reference, reject_constant, used_weights, values,
                       variant_label, weight_shapes)
from trace_check import attention_errors  # noqa: E402
from trace_check import weights_used as checked_weights  # noqa: E402

SEED = 2026
N_RANDOM = 28           # mha configurations
N_VARIANT = 20          # gqa, mqa and mla configurations
MASKS = ("none", "causal", "sliding_window", "custom")
VARIANTS = ("mha", "gqa", "mqa", "mla")
VARIANT_CYCLE = ("gqa", "mla", "mqa", "mla")
GQA_SHAPES = ((4, 2), (2, 2), (6, 3), (4, 1), (6, 2))     # (heads, kv_heads)
MATRIX_FIELDS = ("q", "k", "v", "scores", "scaled", "mask", "masked", "weights", "output")
ROW_FIELDS = ("row_max", "row_sum", "entropy")
MLA_ONLY_KEYS = ("latent", "query_latent", "absorbed")


# --------------------------------------------------------------------------
# Scenario generation
# --------------------------------------------------------------------------

def random_config(i, rng):
    """mha configuration number i.  Sizes and modes cycle with co-prime periods
    so every required value is covered; the rest is drawn from rng."""
    cfg = {
        "variant": "mha",
        "heads": 1 + i % 4,
        "head_dim": 1 + i % 5,
        "d_model": 1 + i % 6,
        "n_q": 1 + i % 7,
        "mask": MASKS[i % 4],
        "kernel": "linear" if i % 3 == 2 else "softmax",
        "scale": (i // 3) % 2 == 0,
        "cross": i % 5 in (1, 3),
        "wo": (i // 2) % 2 == 0,
        "large": i in (9, 19),
        "explicit": i % 4 == 1,      # write kv_heads = heads into the file
        "latent_dim": 0, "q_latent": 0,
        "omit": {5: ("W_Q", "W_K", "W_V", "W_O"), 11: ("W_Q",),
                 17: ("W_K", "W_V"), 22: ("W_O",)}.get(i, ()),
    }
    cfg["kv_heads"] = cfg["heads"]
    if cfg["large"]:
        # Exact softmax inputs: no scaling at all, or sqrt(d) = 2.
        if cfg["scale"]:
            cfg["head_dim"] = 4
    if "W_O" in cfg["omit"]:
        cfg["wo"] = True
    # i = 11 (linear) and 19 (softmax) always get an all-masked custom row,
    # other custom masks by chance.
    draw_data(cfg, rng, empty_row=True if i % 8 == 3 else None)
    return cfg


def variant_config(i, rng):
    """gqa / mqa / mla configuration number i (same scheme as random_config)."""
    variant = VARIANT_CYCLE[i % 4]
    cfg = {
        "variant": variant,
        "head_dim": 1 + i % 3,
        "d_model": 1 + i % 5,
        "n_q": 1 + i % 6,
        "mask": MASKS[(i // 4) % 4],
        "kernel": "linear" if i % 3 == 2 else "softmax",
        "scale": i % 5 != 2,
        "cross": i % 7 in (1, 4, 5),
        "wo": i % 3 != 1,
        "large": i in (13, 16),
        "explicit": i in (6, 9, 14),  # mqa: kv_heads 1; mla: query_latent_dim 0
        "latent_dim": 0, "q_latent": 0,
    }
    if variant == "gqa":
        cfg["heads"], cfg["kv_heads"] = GQA_SHAPES[i // 4]
    elif variant == "mqa":
        cfg["heads"], cfg["kv_heads"] = 1 + (i // 4) % 4, 1
    else:
        cfg["heads"] = cfg["kv_heads"] = 1 + (i // 4) % 3
        cfg["latent_dim"] = 1 + (i // 2) % 3
        cfg["q_latent"] = 1 + (i // 4) % 2 if i % 4 == 3 else 0
    if cfg["large"] and cfg["scale"]:
        cfg["head_dim"] = 4
    omit = {0: "all", 5: ("W_Q", "W_DKV"), 7: "all", 10: ("W_K", "W_V"),
            15: ("W_UQ", "W_O")}.get(i, ())
    if "W_O" in omit:
        cfg["wo"] = True
    cfg["omit"] = tuple(used_weights(cfg)) if omit == "all" else omit
    # Only i = 15 blanks a custom row on purpose: random blanking could hide
    # every row of a small configuration (and with it its variant's maths).
    draw_data(cfg, rng, empty_row=i % 6 == 3)
    return cfg


def draw_data(cfg, rng, empty_row):
    """Context size, window, custom mask, embeddings and weights for cfg.
    empty_row: blank one custom-mask row (True), never (False), by chance (None)."""
    n_q = cfg["n_q"]
    n_kv = cfg["n_kv"] = context_length(rng, n_q, cfg["cross"])
    cfg["window"] = int(rng.integers(1, n_kv + 2))
    if cfg["mask"] == "custom":
        m = rng.integers(0, 2, size=(n_q, n_kv))
        if empty_row or (empty_row is None and rng.random() < 0.3):
            m[int(rng.integers(0, n_q))] = 0     # an all-masked row
        cfg["custom_mask"] = m
    fill_values(cfg, rng)


def fill_values(cfg, rng):
    """Embeddings and weights for cfg (positive for the linear kernel)."""
    dm = cfg["d_model"]
    if cfg["large"]:
        x_rng, w_rng, step = (-30.0, 30.0), (-2.0, 2.0), 0.25
    elif cfg["kernel"] == "linear":
        x_rng, w_rng, step = (0.0, 2.0), (0.0, 2.0), None
    else:
        x_rng, w_rng, step = (-2.0, 2.0), (-2.0, 2.0), None
    cfg["x"] = values(rng, (cfg["n_q"], dm), *x_rng, step)
    cfg["x_kv"] = values(rng, (cfg["n_kv"], dm), *x_rng, step) if cfg["cross"] else cfg["x"]
    cfg["W"] = {name: values(rng, shape, *w_rng, step)
                for name, shape in weight_shapes(cfg).items()}
    if not cfg["wo"]:
        del cfg["W"]["W_O"]


def edge_configs():
    """Hand-made mha configurations for branches random data rarely reaches.
    Values are dyadic (or, for the cancellation case, chosen decimals), so
    every quantity below is exact or its rounding is known."""
    base = {"variant": "mha", "heads": 1, "kv_heads": 1, "head_dim": 1, "d_model": 1,
            "mask": "none", "scale": True, "kernel": "linear", "cross": True, "wo": False,
            "large": False, "explicit": False, "latent_dim": 0, "q_latent": 0, "omit": (),
            "window": 1}
    one = np.array([[1.0]])
    # Linear kernel, scores [3, -1]: Z = 2, weights 1.5 and -0.5 -> signed.
    neg = dict(base, n_q=1, n_kv=2, x=one, x_kv=np.array([[3.0], [-1.0]]),
               W={"W_Q": one, "W_K": one, "W_V": np.array([[2.0]])})
    # Linear kernel, scores [s, -s]: Z == 0 exactly -> zero_sum for the first query;
    # the second sees only one key -> ok.
    zero = dict(base, n_q=2, n_kv=2, mask="custom", heads=2, kv_heads=2, head_dim=1, wo=True,
                custom_mask=np.array([[1, 1], [0, 1]]),
                x=np.array([[0.5], [1.5]]), x_kv=np.array([[2.0], [-2.0]]),
                W={"W_Q": np.array([[1.0, 1.0]]), "W_K": np.array([[1.0, -0.5]]),
                   "W_V": np.array([[1.0, 0.25]]), "W_O": np.array([[1.0], [2.0]])})
    # Linear kernel, sliding window with fewer keys than queries: queries past the
    # last key see nothing -> all_masked.
    slide = dict(base, n_q=4, n_kv=2, mask="sliding_window", window=1,
                 x=np.array([[1.0], [0.5], [0.25], [2.0]]), x_kv=np.array([[1.0], [0.75]]),
                 W={"W_Q": one, "W_K": np.array([[2.0]]), "W_V": one})
    # Linear kernel, scale off, scores 0.1, 0.2, -0.3: Z is rounding noise
    # (~5.6e-17, not 0) -> zero_sum; without the -0.3 the row is ok.
    cancel = dict(base, n_q=2, n_kv=3, mask="custom", scale=False,
                  custom_mask=np.array([[1, 1, 1], [1, 1, 0]]),
                  x=np.array([[1.0], [1.0]]), x_kv=np.array([[0.1], [0.2], [-0.3]]),
                  W={"W_Q": one, "W_K": one, "W_V": np.array([[0.5]])})
    return [neg, zero, slide, cancel, threshold_config(base), negative_z_config(base)]


def threshold_config(base):
    """The zero_sum threshold |Z| <= 64 eps sum|row| pinned from both sides and
    at equality.  Scores are pairs [a, -b] with a + b ~ 2, so the threshold is
    ~2^-45: Z = 2^-44 -> signed (weights 2^44 and 1 - 2^44, output exactly 1),
    Z = 2^-45 with sum|row| = 2 exactly -> equality -> zero_sum, Z = 2^-46 ->
    zero_sum.  The second embedding column feeds V = 1 for every key."""
    keys = [1.0, -(1.0 - 2.0 ** -44), 1.0 + 2.0 ** -46, -(1.0 - 2.0 ** -46),
            1.0, -(1.0 - 2.0 ** -46)]
    mask = np.zeros((3, 6), dtype=int)
    for r in range(3):
        mask[r, 2 * r:2 * r + 2] = 1
    return dict(base, n_q=3, n_kv=6, d_model=2, mask="custom", scale=False, custom_mask=mask,
                x=np.array([[1.0, 0.0]] * 3), x_kv=np.array([[k, 1.0] for k in keys]),
                W={"W_Q": np.array([[1.0], [0.0]]), "W_K": np.array([[1.0], [0.0]]),
                   "W_V": np.array([[0.0], [1.0]])})


def negative_z_config(base):
    """Linear kernel, self-attention, causal: every visible score negative, so
    Z < 0 but every weight >= 0 -> ok (a hidden entry gives 0 / Z = -0.0, which
    is not a negative weight)."""
    x = np.array([[1.0], [3.0]])
    return dict(base, n_q=2, n_kv=2, mask="causal", cross=False, x=x, x_kv=x,
                W={"W_Q": np.array([[1.0]]), "W_K": np.array([[-1.0]]),
                   "W_V": np.array([[0.5]])})


def scenario_json(cfg, idx):
    """The scenario file contents for cfg."""
    n_q, n_kv = cfg["n_q"], cfg["n_kv"]
    att = {"variant": cfg["variant"], "heads": cfg["heads"], "head_dim": cfg["head_dim"],
           "mask": cfg["mask"], "scale": cfg["scale"], "kernel": cfg["kernel"]}
    if cfg["variant"] == "gqa" or (cfg["explicit"] and cfg["variant"] != "mla"):
        att["kv_heads"] = cfg["kv_heads"]
    if cfg["variant"] == "mla":
        att["latent_dim"] = cfg["latent_dim"]
        if cfg["q_latent"] or cfg["explicit"]:
            att["query_latent_dim"] = cfg["q_latent"]
    if cfg["mask"] == "sliding_window":
        att["window"] = cfg["window"]
    if cfg["mask"] == "custom":
        att["custom_mask"] = cfg["custom_mask"].astype(int).tolist()
    if cfg["wo"] and "W_O" in cfg["omit"]:
        att["output_projection"] = True
    elif not cfg["wo"] and idx % 2 == 0:
        att["output_projection"] = False
    weights = {k: v.tolist() for k, v in cfg["W"].items() if k not in cfg["omit"]}
    doc = {"name": "crosscheck %d" % idx, "description": "random NumPy cross-check",
           "tokens": ["q%d" % i for i in range(n_q)], "embeddings": cfg["x"].tolist(),
           "attention": att, "weights": weights, "seed": 7 + idx}
    if cfg["cross"]:
        doc["context"] = {"tokens": ["c%d" % j for j in range(n_kv)],
                          "embeddings": cfg["x_kv"].tolist()}
    return doc


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

def weights_used(cfg, out):
    """The weights to compute with: given ones (checked to be echoed), seeded
    ones read back; the first disagreement raised."""
    chk = Checks()
    W = checked_weights(cfg, out, chk)
    if chk.errors:
        raise Mismatch(chk.errors[0])
    return W


def check_header(cfg, out):
    check_equal(["q%d" % i for i in range(cfg["n_q"])], out.get("tokens"), "tokens")
    ctx = ["c%d" % j for j in range(cfg["n_kv"])] if cfg["cross"] else \
        ["q%d" % i for i in range(cfg["n_q"])]
    check_equal(ctx, out.get("context_tokens"), "context_tokens")
    att = out.get("attention")
    if not isinstance(att, dict):
        raise Mismatch("attention: missing from the output")
    errors = attention_errors(cfg, att)     # the new keys at their defaults may be echoed
    if errors:
        raise Mismatch(errors[0])
    want_keys = mla_output_keys(cfg)
    for key in MLA_ONLY_KEYS:
        if (key in out) != (key in want_keys):
            raise Mismatch("%s: %s the output (variant %s, query_latent_dim %d)" % (
                key, "missing from" if key in want_keys else "unexpected in",
                cfg["variant"], cfg["q_latent"]))


def mla_output_keys(cfg):
    """Which of MLA_ONLY_KEYS the top level of the output must have."""
    if cfg["variant"] != "mla":
        return set()
    return {"latent", "absorbed"} | ({"query_latent"} if cfg["q_latent"] else set())


def check_kv_heads(ref, out):
    """Top-level "kv_heads": one {k, v} per KV head; return the max error."""
    found = out.get("kv_heads")
    if not isinstance(found, list) or len(found) != len(ref["kv_heads"]):
        raise Mismatch("kv_heads: expected a list of %d entries" % len(ref["kv_heads"]))
    errs = [0.0]
    for g, (rk, fk) in enumerate(zip(ref["kv_heads"], found)):
        if not isinstance(fk, dict):
            raise Mismatch("kv_heads[%d]: expected an object" % g)
        for field in ("k", "v"):
            errs.append(compare(rk[field], fk.get(field), "kv_heads[%d].%s" % (g, field)))
    return max(errs)


def check_head(cfg, rh, fh, out):
    """One entry of "heads"; return the max error."""
    h, g = rh["head"], rh["kv_head"]
    where = "heads[%d]." % h
    if not isinstance(fh, dict):
        raise Mismatch(where[:-1] + ": expected an object")
    check_equal(h, fh.get("head"), where + "head")
    check_equal(g, fh.get("kv_head"), where + "kv_head")
    errs = []
    for field in MATRIX_FIELDS + ROW_FIELDS:
        null_as = None
        if field == "masked" and cfg["kernel"] == "softmax":
            null_as = -np.inf
        elif field == "entropy":
            null_as = np.nan        # compare() then requires a signed row
        errs.append(compare(rh[field], fh.get(field), where + field, null_as))
    check_equal(rh["row_status"], fh.get("row_status"), where + "row_status")
    for field in ("k", "v"):        # the shared KV head, verbatim
        compare(out["kv_heads"][g][field], fh[field], where + field + " (vs kv_heads[%d])" % g)
    if "contribution" in rh:
        errs.append(compare(rh["contribution"], fh.get("contribution"),
                            where + "contribution"))
    elif "contribution" in fh:
        raise Mismatch(where + "contribution: present without W_O")
    return max(errs)


def check_absorbed(ref, out):
    """mla: latents and the absorbed form, against the reference and against
    the binary's own explicit path; return the max error."""
    errs = [compare(ref["latent"], out.get("latent"), "latent")]
    if "query_latent" in ref:
        errs.append(compare(ref["query_latent"], out.get("query_latent"), "query_latent"))
    ra, fa = ref["absorbed"], out.get("absorbed")
    if not isinstance(fa, dict) or not isinstance(fa.get("heads"), list) \
            or len(fa["heads"]) != len(ra["heads"]):
        raise Mismatch("absorbed: expected an object with %d heads" % len(ra["heads"]))
    for h, (rh, fh) in enumerate(zip(ra["heads"], fa["heads"])):
        where = "absorbed.heads[%d]." % h
        if not isinstance(fh, dict):
            raise Mismatch(where[:-1] + ": expected an object")
        errs.append(compare(rh["W_UQK"], fh.get("W_UQK"), where + "W_UQK"))
        errs.append(compare(rh["queries"], fh.get("queries"), where + "queries"))
        errs.append(compare(rh["scores"], fh.get("scores"), where + "scores"))
        errs.append(compare(ref["heads"][h]["scores"], fh["scores"],
                            where + "scores (vs reference explicit scores)"))
        errs.append(compare(out["heads"][h]["scores"], fh["scores"],
                            where + "scores (vs heads[%d].scores)" % h))
    for field in ("latent_output", "W_LO", "output"):
        errs.append(compare(ra[field], fa.get(field), "absorbed." + field))
    errs.append(compare(ref["output"], fa["output"], "absorbed.output (vs reference output)"))
    errs.append(compare(out["output"], fa["output"], "absorbed.output (vs output)"))
    return max(errs)


def check_output(cfg, out):
    """Compare the binary's JSON with the reference; return (max abs error, reference)."""
    check_header(cfg, out)
    errs = [compare(cfg["x"], out.get("x"), "x"), compare(cfg["x_kv"], out.get("x_kv"), "x_kv")]
    W = weights_used(cfg, out)
    ref = reference(cfg, W)
    errs.append(compare([ref["scale_factor"]], [out.get("scale_factor")], "scale_factor"))
    errs.append(check_kv_heads(ref, out))
    heads = out.get("heads")
    if not isinstance(heads, list) or len(heads) != cfg["heads"]:
        raise Mismatch("heads: expected %d entries" % cfg["heads"])
    for rh, fh in zip(ref["heads"], heads):
        errs.append(check_head(cfg, rh, fh, out))
    errs.append(compare(ref["concat"], out.get("concat"), "concat"))
    errs.append(compare(ref["output"], out.get("output"), "output"))
    if "contribution" in ref["heads"][0]:
        total = sum(np.asarray(fh["contribution"], dtype=float) for fh in heads)
        errs.append(compare(total, out["output"], "output (sum of contributions)"))
    if cfg["variant"] == "mla":
        errs.append(check_absorbed(ref, out))
    return max(errs), ref


# --------------------------------------------------------------------------
# Invalid scenario files
# --------------------------------------------------------------------------

def rejection_cases(configs):
    """(label, scenario) pairs the binary must refuse: each breaks one rule of
    the file format in an otherwise valid scenario of a checked configuration."""
    def zeros(rows, cols):
        return np.zeros((rows, cols)).tolist()

    def broken(label, pick, change):
        found = [(i, c) for i, c in enumerate(configs) if pick(c)]
        if not found:
            return label, None
        idx, cfg = found[0]
        doc = copy.deepcopy(scenario_json(cfg, idx))
        att, weights = doc["attention"], doc["weights"]
        change(cfg, att, weights)
        return "%s (from #%d)" % (label, idx), doc

    def mha(c):
        return c["variant"] == "mha" and c["heads"] > 1 and c["mask"] != "sliding_window"

    def gqa(c):
        return c["variant"] == "gqa" and c["heads"] == 4

    def mla(q_latent):
        return lambda c: c["variant"] == "mla" and bool(c["q_latent"]) == q_latent

    def hd(c):
        return c["heads"] * c["head_dim"]

    return [
        broken("window without sliding_window", mha, lambda c, a, w: a.update(window=1)),
        broken("mha kv_heads != heads", mha, lambda c, a, w: a.update(kv_heads=1)),
        broken("gqa without kv_heads", gqa, lambda c, a, w: a.pop("kv_heads")),
        broken("gqa kv_heads not dividing heads", gqa, lambda c, a, w: a.update(kv_heads=3)),
        broken("gqa kv_heads > heads", gqa, lambda c, a, w: a.update(kv_heads=8)),
        broken("mqa kv_heads 2", lambda c: c["variant"] == "mqa" and c["heads"] == 2,
               lambda c, a, w: a.update(kv_heads=2)),
        broken("gqa with latent_dim", gqa, lambda c, a, w: a.update(latent_dim=1)),
        broken("gqa with query_latent_dim", gqa,
               lambda c, a, w: a.update(query_latent_dim=1)),
        broken("gqa with W_DKV", gqa,
               lambda c, a, w: w.update(W_DKV=zeros(c["d_model"], 1))),
        broken("mla with kv_heads", mla(False),
               lambda c, a, w: a.update(kv_heads=c["heads"])),
        broken("mla without latent_dim", mla(False), lambda c, a, w: a.pop("latent_dim")),
        broken("mla latent_dim 0", mla(False), lambda c, a, w: a.update(latent_dim=0)),
        broken("mla query_latent_dim -1", mla(False),
               lambda c, a, w: a.update(query_latent_dim=-1)),
        broken("mla with W_K", mla(False),
               lambda c, a, w: w.update(W_K=zeros(c["d_model"], hd(c)))),
        broken("mla without query latent, with W_DQ", mla(False),
               lambda c, a, w: w.update(W_DQ=zeros(c["d_model"], 1))),
        broken("mla with query latent, with W_Q", mla(True),
               lambda c, a, w: w.update(W_Q=zeros(c["d_model"], hd(c)))),
    ]


def check_rejected(binary, tmpdir, n, label, doc):
    """Run one invalid scenario; return (passed, message)."""
    if doc is None:
        return False, "no valid scenario of that kind among the configurations"
    path = os.path.join(tmpdir, "invalid_%02d.json" % n)
    with open(path, "w") as f:
        json.dump(doc, f)
    code, _, stderr = run_binary(binary, path)
    first = (stderr.strip().splitlines() or ["(no message)"])[0].replace(path, "FILE")
    if code == 0:
        return False, "accepted"
    if code < 0:
        return False, "killed by signal %d" % -code
    return True, "exit %d: %s" % (code, first)


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

def run_binary(binary, path):
    """Run `binary trace path --json`; return (exit code, stdout, stderr)."""
    proc = subprocess.run([binary, "trace", path, "--json"], capture_output=True,
                          text=True, timeout=20)
    return proc.returncode, proc.stdout, proc.stderr


def describe(idx, cfg):
    return ("#%-2d %s heads=%d d=%d dm=%d nq=%d nkv=%d mask=%s kernel=%s scale=%s"
            " cross=%s wo=%s%s%s") % (
        idx, variant_label(cfg), cfg["heads"], cfg["head_dim"], cfg["d_model"],
        cfg["n_q"], cfg["n_kv"], cfg["mask"], cfg["kernel"], "on" if cfg["scale"] else "off",
        "yes" if cfg["cross"] else "no", "yes" if cfg["wo"] else "no",
        " seeded=" + ",".join(cfg["omit"]) if cfg["omit"] else "",
        " large" if cfg["large"] else "")


def check_cross_decode(binary, path, cfg, ref):
    """Cross-attention decoding (`decode --json`): the context's cache is filled once, so every step
    caches all n_kv context tokens, and step t's weights and output are row t of the reference (the
    file's mask, not a causal one). Return the max abs error."""
    proc = subprocess.run([binary, "decode", path, "--json"], capture_output=True, text=True, timeout=20)
    if proc.returncode != 0:
        raise Mismatch("decode: exit code %d: %s" % (proc.returncode, proc.stderr.strip()))
    out = json.loads(proc.stdout, parse_constant=reject_constant)
    check_equal(True, out.get("cross_attention"), "decode: cross_attention")
    steps = out.get("steps")
    if not isinstance(steps, list) or len(steps) != cfg["n_q"]:
        raise Mismatch("decode: steps: expected %d entries" % cfg["n_q"])
    errs = [0.0]
    for t, step in enumerate(steps):
        check_equal(cfg["n_kv"], step.get("cache_tokens"), "decode: steps[%d].cache_tokens" % t)
        errs.append(compare(ref["output"][t], step.get("output"), "decode: steps[%d].output" % t))
        for h, rh in enumerate(ref["heads"]):
            found = (step.get("weights") or [None] * (h + 1))[h]
            errs.append(compare(rh["weights"][t], found, "decode: steps[%d].weights[%d]" % (t, h)))
    return max(errs)


def check_one(binary, tmpdir, idx, cfg, seen):
    """Run and check one configuration; return (passed, message)."""
    path = os.path.join(tmpdir, "scenario_%02d.json" % idx)
    with open(path, "w") as f:
        json.dump(scenario_json(cfg, idx), f)
    code, stdout, stderr = run_binary(binary, path)
    if code != 0:
        return False, "exit code %d: %s" % (code, stderr.strip())
    try:
        out = json.loads(stdout, parse_constant=reject_constant)
    except ValueError as e:
        return False, "output is not JSON: %s" % e
    try:
        err, ref = check_output(cfg, out)
        if cfg["cross"]:
            err = max(err, check_cross_decode(binary, path, cfg, ref))
    except Mismatch as e:
        return False, str(e)
    note_coverage(seen, cfg, ref)
    return True, "max_err=%.1e" % err


KERNELS = ("softmax", "linear")
REQUIRED = {
    "heads": set(range(1, 5)), "head_dim": set(range(1, 6)), "d_model": set(range(1, 7)),
    "n_q": set(range(1, 8)), "n_kv": set(range(1, 8)), "mask": set(MASKS),
    "kernel": set(KERNELS), "scale": {True, False}, "cross": {True, False},
    "wo": {True, False}, "variant": set(VARIANTS),
    "variant x kernel": {"%s %s" % (v, k) for v in VARIANTS for k in KERNELS},
    "variant x mask": {"%s %s" % (v, m) for v in VARIANTS for m in MASKS},
    "feature": {"softmax all_masked", "linear all_masked", "linear zero_sum",
                "linear zero_sum with Z != 0", "linear signed", "linear ok with Z < 0",
                "custom all-zero row", "softmax score > 700", "seeded weights x3",
                "mha explicit kv_heads", "gqa 1 < G < H", "gqa G == 1", "gqa G == H",
                "mqa heads > 1", "mla without query latent", "mla with query latent",
                "mla with W_O", "mla without W_O", "variant cross-attention",
                "variant seeded weights"},
}


def note_coverage(seen, cfg, ref):
    """Record what a passing configuration exercised."""
    for key in REQUIRED:
        if key in cfg:
            seen.setdefault(key, set()).add(cfg[key])
    seen.setdefault("variant x kernel", set()).add("%s %s" % (cfg["variant"], cfg["kernel"]))
    seen.setdefault("variant x mask", set()).add("%s %s" % (cfg["variant"], cfg["mask"]))
    feats = seen.setdefault("feature", set())
    seen["seeded"] = seen.get("seeded", 0) + bool(cfg["omit"])
    if seen["seeded"] >= 3:
        feats.add("seeded weights x3")
    for head in ref["heads"]:
        for r, status in enumerate(head["row_status"]):
            feats.add("%s %s" % (cfg["kernel"], status))
            z = head["row_sum"][r]
            if cfg["kernel"] == "linear" and status == "zero_sum" and z != 0:
                feats.add("linear zero_sum with Z != 0")
            if cfg["kernel"] == "linear" and status == "ok" and z < 0:
                feats.add("linear ok with Z < 0")
        if cfg["kernel"] == "softmax" and np.abs(head["scaled"]).max() > 700:
            feats.add("softmax score > 700")
    if cfg["mask"] == "custom" and (np.asarray(cfg["custom_mask"]).sum(axis=1) == 0).any():
        feats.add("custom all-zero row")
    feats.update(variant_features(cfg))


def variant_features(cfg):
    """The variant-specific features cfg exercises."""
    H, G, v = cfg["heads"], cfg["kv_heads"], cfg["variant"]
    feats = set()
    if v == "mha":
        return {"mha explicit kv_heads"} if cfg["explicit"] else feats
    if cfg["cross"]:
        feats.add("variant cross-attention")
    if cfg["omit"]:
        feats.add("variant seeded weights")
    if v == "gqa":
        feats.add("gqa G == 1" if G == 1 else "gqa G == H" if G == H else "gqa 1 < G < H")
    if v == "mqa" and H > 1:
        feats.add("mqa heads > 1")
    if v == "mla":
        feats.add("mla with query latent" if cfg["q_latent"] else "mla without query latent")
        feats.add("mla with W_O" if cfg["wo"] else "mla without W_O")
    return feats


def coverage_gaps(seen):
    """Required values or features no passing configuration exercised."""
    return ["%s %s" % (key, sorted(need - seen.get(key, set()), key=str))
            for key, need in REQUIRED.items() if need - seen.get(key, set())]


def all_configs():
    """mha, then gqa/mqa/mla (one random stream), then the hand-made edges."""
    rng = np.random.default_rng(SEED)
    configs = [random_config(i, rng) for i in range(N_RANDOM)]
    configs += [variant_config(i, rng) for i in range(N_VARIANT)]
    return configs + edge_configs()


def main():
    parser = command_line(__doc__)
    args = parser.parse_args()
    probe(args.binary)

    configs = all_configs()
    passed = failed = 0
    seen = {}
    with tempfile.TemporaryDirectory(prefix="attn_crosscheck_") as tmpdir:
        try:
            for idx, cfg in enumerate(configs):
                ok, msg = check_one(args.binary, tmpdir, idx, cfg, seen)
                print("%s %s  %s" % ("ok  " if ok else "FAIL", describe(idx, cfg), msg))
                passed, failed = passed + ok, failed + (not ok)
            for n, (label, doc) in enumerate(rejection_cases(configs)):
                ok, msg = check_rejected(args.binary, tmpdir, n, label, doc)
                print("%s invalid: %s  %s" % ("ok  " if ok else "FAIL", label, msg))
                passed, failed = passed + ok, failed + (not ok)
        except (OSError, subprocess.SubprocessError) as e:
            print("error: cannot run the binary %r: %s" % (args.binary, e), file=sys.stderr)
            return 2
    gaps = coverage_gaps(seen)
    print("coverage: " + ("complete" if not gaps else "MISSING " + "; ".join(gaps)))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and not gaps else 1


if __name__ == "__main__":
    sys.exit(main())
