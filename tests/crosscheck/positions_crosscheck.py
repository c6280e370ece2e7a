#!/usr/bin/python3
"""Independent NumPy cross-check of positions, sparse attention and online softmax.

A second implementation, written from the specification only (never from the
C++ sources), of what Attention Lab adds to plain attention:
  * positions: sinusoidal and learned (added to the embeddings), RoPE (each
    head's q and k rotated pair by pair) and, for mla, DeepSeek-V2's decoupled
    RoPE (a rotated q_R / k_R part concatenated to the content part, with the
    absorbed form checked too);
  * DeepSeek Sparse Attention: the lightning indexer I = sum_h w ReLU(q^I k^I)
    and the per-query top-k selection that is ANDed into every head's mask;
  * the position shift attention.position_offset C: every row p of either side
    (queries, keys, a cross-attention context) sits at position C + p, so the
    PE / W_P rows used are C .. C+N-1, RoPE's angles are (C + p) base^(-2i/d),
    decode's step t is at C + t, a learned max_positions defaults to C + the
    longer side (or a given W_P's rows) and the trace shows position_offset;
    a share of the random scenarios get a C (1..9, and 1000 .. 2^20 for rope /
    sinusoidal, 10..199 for learned), and a shift-invariance check runs the same
    scenario at C = 0 and C: RoPE's scores (every variant, mla's decoupled part,
    absorbed form and decode outputs too) agree to 1e-9 relative, sinusoidal and
    learned ones move (by more than 1e-6), as the reference says.  Angles are
    computed in extended precision; for C >= 1000 the binary's PE rows and
    rotated vectors are checked to angle rounding (about an ulp of C + p) and
    then followed downstream (see follow_far_positions);
  * `decode --json` of all of it (rotated cache, indexer cache, per-step
    indexer scores and selections, elements per token);
  * the command-line overrides --positions, --rope-base, --rope-dim, --top-k,
    --indexer-heads, --indexer-dim and --position-offset;
  * `online` (blockwise online softmax, Milakov & Gimelshein 2018) for every
    block size, checked step by step and against the dense output;
  * invalid scenarios and options, which must exit 2 naming the field;
  * the attention object's newer keys, in hand-made seeded cases
    (FEATURE_CASES, numbered from #900, trace and decode each): qkv_bias
    (b_Q, b_K, b_V added to Q, K, V before RoPE turns q and k; a bias left out
    is zeros) with mha, gqa and mqa under positions none, learned and rope,
    also cross-attention and sparse; output_bias (concat W_O + b_O); rope_pairing
    "rotate_half" (pairs (i, i + w/2)) at head_dim 12 and on mla's decoupled
    part at rope_dim 6; rope_scaling llama3 with parameters that put the
    frequencies in all three bands, with either pairing and on mla; and about
    20 refusals of them (output_bias without the output
    projection, a bias given while its flag is off or of the wrong length,
    rope_pairing / rope_scaling without rope, bad rope_scaling objects), which
    must exit 2 naming the field path (the wording is free).  The header must
    echo the new keys when they are set; at their defaults it may echo them or
    not.  A self-check of the reference (reference.self_check: rotate_half =
    interleaved RoPE on permuted columns, llama3 with factor 1 = no scaling,
    biases = a column of ones, ...) runs first.

Seeded random scenarios (fixed seed) cover every variant (mha, gqa, mqa, mla
without and with a query latent) x positions (none, sinusoidal, learned, rope)
x sparse (off, on), twice, across masks, kernels, cross-attention, W_O, given
and seeded weights and repeated tokens (exact ties in the top-k selection).

Run:  /usr/bin/python3 positions_crosscheck.py --binary build/app/attention-lab
      [--plain-only]  only positions none / sparse off, for a binary without the
                      new features (the "positions" header key is then optional)
      [--only-new]    only the self-check and the cases of qkv_bias, output_bias,
                      rope_pairing and rope_scaling (and their refusals)
      [--keep DIR]    write every scenario file to DIR, and failing ones to
                      DIR/fail, instead of a temporary folder
      [--seed S] [--reps R]  another random draw / more rounds (a longer soak)
      [--save-failures DIR]  copy the failing scenario files to DIR (file names
                      carry the configuration number and any options used)

Exit status: 0 all agree, 1 any mismatch (or a coverage gap), 2 the binary
cannot be run.  Tolerance: absolute 1e-9 (exact for selected / mask; 1e-12
between online's output and the dense output; for C >= 1000 the PE rows and
rotated vectors to 1e-9 + 16 ulp(C + N) times their size).

The reference (reference.reference: positions, RoPE, sparse attention and
every variant on top of the softmax / linear rows, their statuses and the
entropy) is reference.py next to this file; the checks of one trace are
trace_check.py, which model_crosscheck.py uses too.
"""

import copy
import json
import math
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import (Binary, Checks, Mismatch, cannot_run, causal, command_line,  # noqa: E402
                       context_length, error_lines, inv_freq, mask_matrix, online_reference, probe,
                       reference, resolved, rope_bands, rope_of, rotate, self_check, sparse_label,
                       used_weights, values, variant_label, weight_shapes, work_folder)
from trace_check import check_trace, weights_used  # noqa: E402

SEED = 1414
REPS = 2
ONLINE_TOL = 1e-12
MASKS = ("none", "causal", "sliding_window", "custom")
POSITIONS = ("none", "sinusoidal", "learned", "rope")
KINDS = ("mha", "gqa", "mqa", "mla", "mla_q")      # mla_q: mla with query_latent_dim > 0
NEW_WEIGHTS = ("W_P", "W_QR", "W_KR", "W_QI", "W_KI", "W_wI")
GQA_SHAPES = ((4, 2), (2, 1), (4, 1), (3, 1), (4, 4), (2, 2))
ROPE_BASES = (None, 100, 10.0, 10000, 2.5, 1000)
OFFSET_MAX = 1048576            # attention.position_offset: 0..OFFSET_MAX
LEARNED_OFFSET_MAX = 4095       # ... and at most this with learned positions
LARGE_OFFSETS = (1000, 100000, OFFSET_MAX, 4093, 65536)   # rope / sinusoidal
SHIFT_TOL = 1e-12               # rope scores at C and at 0: relative / absolute (the shift is turned once, shared)
SHIFT_MIN_DIFF = 1e-6           # sinusoidal / learned scores must move more than this


# --------------------------------------------------------------------------
# Scenario generation
# --------------------------------------------------------------------------

def make_config(idx, rep, kind_i, pos_i, sparse, rng, offset=0, offset_written=False):
    """Configuration number idx: variant kind, positions kind and sparse given;
    the other modes cycle over (kind, positions, sparse, rep) so that every
    pair of them meets; sizes cycle with idx; values come from rng.  offset is
    the position shift C (written to the file when nonzero or offset_written)."""
    k, p, s = kind_i, pos_i, int(sparse)
    kind, pos = KINDS[k], POSITIONS[p]
    variant = "mla" if kind.startswith("mla") else kind
    rope = pos == "rope"
    cfg = {
        "idx": idx, "kind": kind, "variant": variant, "positions": pos,
        "offset": offset, "offset_written": bool(offset or offset_written),
        "mask": MASKS[(k + p + s + 2 * rep) % 4],
        "kernel": "linear" if (k + p + 2 * s + rep) % 3 == 2 else "softmax",
        "cross": (k + 2 * p + s + 3 * rep) % 4 == 1,
        "wo": (k + p + s + rep) % 3 != 0,
        "scale": (2 * k + p + s + rep) % 5 != 4,
        "n_q": 1 + (idx * 3) % 7,
        "d_model": 1 + (idx * 5) % 6,
        "latent_dim": 0, "q_latent": 0, "rope_dim": 0,
        "rope_base": None, "max_positions": None, "sparse": None,
    }
    omit_mode = (k + 3 * p + s + rep) % 4    # 0 all given, 1 all seeded, 2 new seeded, 3 old seeded
    if rope and variant != "mla":
        cfg["head_dim"] = (2, 4)[(idx // 3) % 2]
    else:
        cfg["head_dim"] = 1 + (idx // 3 + rep) % 4
    spin = idx + idx // 8
    if variant == "mha":
        cfg["heads"] = 1 + spin % 4
        cfg["kv_heads"] = cfg["heads"]
    elif variant == "gqa":
        cfg["heads"], cfg["kv_heads"] = GQA_SHAPES[spin % len(GQA_SHAPES)]
    elif variant == "mqa":
        cfg["heads"], cfg["kv_heads"] = 1 + spin % 4, 1
    else:
        cfg["heads"] = cfg["kv_heads"] = 1 + spin % 3
        cfg["latent_dim"] = 1 + (idx // 2) % 3
        if kind == "mla_q":
            cfg["q_latent"] = 1 + (idx // 4) % 2
        if rope:
            cfg["rope_dim"] = (2, 4)[(idx + idx // 8) % 2]
    if pos in ("sinusoidal", "rope"):      # the binary refuses rope_base with learned
        cfg["rope_base"] = ROPE_BASES[idx % len(ROPE_BASES)]
    n_q = cfg["n_q"]
    n_kv = cfg["n_kv"] = context_length(rng, n_q, cfg["cross"])
    if pos == "learned" and idx % 2 == 1:
        cfg["max_positions"] = offset + max(n_q, n_kv) + (idx // 2) % 3
    if sparse:
        cfg["sparse"] = {"top_k": n_kv + 1 if idx % 7 == 3 else int(rng.integers(1, n_kv + 2)),
                         "indexer_heads": None if idx % 5 == 0 else 1 + idx % 3,
                         "indexer_dim": None if idx % 4 == 0 else 1 + (idx // 2) % 3}
    cfg["window"] = int(rng.integers(1, n_kv + 2))
    if cfg["mask"] == "custom":
        m = rng.integers(0, 2, size=(n_q, n_kv))
        if idx % 6 == 3:
            m[int(rng.integers(0, n_q))] = 0
        cfg["custom_mask"] = m
    fill_values(cfg, rng, repeat=idx % 3 != 2)
    names = used_weights(cfg)
    new = [n for n in names if n in NEW_WEIGHTS]
    old = [n for n in names if n not in NEW_WEIGHTS]
    cfg["omit"] = tuple({0: [], 1: names, 2: new, 3: old}[omit_mode])
    return cfg


def fill_values(cfg, rng, repeat):
    """Embeddings (some rows repeated, for exact ties) and every weight."""
    dm = cfg["d_model"]
    if cfg["kernel"] == "linear":
        # Non-negative inputs keep Z away from 0; sinusoidal rows lie in [-1, 1],
        # so those embeddings start at 1.
        lo = 1.0 if cfg["positions"] == "sinusoidal" else 0.0
        x_rng, w_rng = (lo, lo + 2.0), (0.0, 2.0)
    else:
        x_rng, w_rng = (-2.0, 2.0), (-2.0, 2.0)
    cfg["x"] = values(rng, (cfg["n_q"], dm), *x_rng)
    cfg["x_kv"] = values(rng, (cfg["n_kv"], dm), *x_rng) if cfg["cross"] else cfg["x"]
    if repeat:
        for key in ("x", "x_kv") if cfg["cross"] else ("x",):
            m = cfg[key]
            if m.shape[0] >= 2:
                a, b = sorted(rng.choice(m.shape[0], size=2, replace=False))
                m[b] = m[a]
    cfg["W"] = {}
    for name, shape in weight_shapes(cfg).items():
        # The indexer may see negative values in any kernel (ReLU zeros: ties).
        rngs = (-2.0, 2.0) if name in ("W_QI", "W_KI", "W_wI") else w_rng
        C = cfg.get("offset", 0)
        if name == "W_P" and C:
            # The rows from C on are drawn from rng as without the shift (so every
            # later value is the same); the C rows before them from a stream of their own.
            used = values(rng, (shape[0] - C, shape[1]), *rngs)
            before = values(np.random.default_rng([cfg["idx"], C, 0xB0F]), (C, shape[1]), *rngs)
            cfg["W"][name] = np.vstack([before, used])
        else:
            cfg["W"][name] = values(rng, shape, *rngs)
    if not cfg["wo"]:
        del cfg["W"]["W_O"]


def pick_offset(idx, rep, k, p, s, off_rng):
    """(C, write an explicit 0?) for one configuration.  Across (kind, sparse,
    rep) every kind meets all four modes: 0, small, small, large (for learned a
    medium C, so that max_positions stays far below 4096).  off_rng is a
    stream of its own, so the other values are those drawn without the shift."""
    small = int(off_rng.integers(1, 10))
    medium = int(off_rng.integers(10, 200))
    large = LARGE_OFFSETS[int(off_rng.integers(0, len(LARGE_OFFSETS)))]
    if POSITIONS[p] == "none":
        return 0, False
    mode = (3 * k + 2 * s + rep) % 4
    if mode == 0:
        return 0, idx % 3 == 0
    if mode in (1, 2):
        return small, False
    return (medium if POSITIONS[p] == "learned" else large), False


def all_configs(seed=SEED, reps=REPS):
    rng = np.random.default_rng(seed)
    off_rng = np.random.default_rng([seed, 0xC0FF5E7])
    configs = []
    for rep in range(reps):
        for k in range(len(KINDS)):
            for p in range(len(POSITIONS)):
                for s in (False, True):
                    c, written = pick_offset(len(configs), rep, k, p, int(s), off_rng)
                    configs.append(make_config(len(configs), rep, k, p, s, rng, c, written))
    return configs


LEGACY = False      # --plain-only: never write the new keys


def scenario_json(cfg):
    """The scenario file for cfg."""
    idx = cfg["idx"]
    att = {"variant": cfg["variant"], "heads": cfg["heads"], "head_dim": cfg["head_dim"],
           "mask": cfg["mask"], "scale": cfg["scale"], "kernel": cfg["kernel"]}
    if cfg["variant"] in ("gqa", "mqa") and (cfg["variant"] == "gqa" or idx % 2):
        att["kv_heads"] = cfg["kv_heads"]
    if cfg["variant"] == "mla":
        att["latent_dim"] = cfg["latent_dim"]
        if cfg["q_latent"] or idx % 3 == 0:
            att["query_latent_dim"] = cfg["q_latent"]
    if cfg["mask"] == "sliding_window":
        att["window"] = cfg["window"]
    if cfg["mask"] == "custom":
        att["custom_mask"] = np.asarray(cfg["custom_mask"]).astype(int).tolist()
    if cfg["wo"] and "W_O" in cfg["omit"]:
        att["output_projection"] = True
    elif not cfg["wo"] and idx % 2 == 0:
        att["output_projection"] = False
    if cfg["positions"] != "none" or ((idx // 8) % 2 == 1 and not LEGACY):
        att["positions"] = cfg["positions"]
    if cfg["rope_base"] is not None:
        att["rope_base"] = cfg["rope_base"]
    if cfg["max_positions"] is not None:
        att["max_positions"] = cfg["max_positions"]
    if cfg["rope_dim"]:
        att["rope_dim"] = cfg["rope_dim"]
    if cfg.get("offset_written") and not LEGACY:
        att["position_offset"] = cfg["offset"]
    if cfg["sparse"]:
        att["sparse"] = {k: v for k, v in cfg["sparse"].items() if v is not None}
    for key in ("qkv_bias", "output_bias"):         # written when on, or when asked to
        if cfg.get(key) or key in cfg.get("written", ()):
            att[key] = bool(cfg.get(key))
    for key in ("rope_pairing", "rope_scaling"):
        if cfg.get(key) is not None:
            att[key] = copy.deepcopy(cfg[key])
    weights = {k: v.tolist() for k, v in cfg["W"].items() if k not in cfg["omit"]}
    doc = {"name": "positions crosscheck %d" % idx, "description": "random NumPy cross-check",
           "tokens": ["q%d" % i for i in range(cfg["n_q"])], "embeddings": cfg["x"].tolist(),
           "attention": att, "weights": weights, "seed": 11 + idx}
    if cfg["cross"]:
        doc["context"] = {"tokens": ["c%d" % j for j in range(cfg["n_kv"])],
                          "embeddings": cfg["x_kv"].tolist()}
    return doc


def describe(cfg):
    v = variant_label(cfg)
    pos = cfg["positions"]
    if pos != "none":
        pos += "(base=%s" % ("default" if cfg["rope_base"] is None else cfg["rope_base"])
        if cfg["rope_dim"]:
            pos += ",dR=%d" % cfg["rope_dim"]
        if cfg["positions"] == "learned":
            pos += ",maxp=%s" % cfg["max_positions"]
        if cfg.get("offset") or cfg.get("offset_written"):
            pos += ",C=%d" % cfg["offset"]
        pos += ")"
    sp = " " + sparse_label(cfg["sparse"]) if cfg["sparse"] else ""
    sp += feature_label(cfg)
    return ("#%-3d %s H=%d d=%d dm=%d nq=%d nkv=%d %s mask=%s %s%s%s%s pos=%s%s%s" % (
        cfg["idx"], v, cfg["heads"], cfg["head_dim"], cfg["d_model"], cfg["n_q"], cfg["n_kv"],
        cfg["kernel"], cfg["mask"], "scale" if cfg["scale"] else "noscale",
        " cross" if cfg["cross"] else "", " W_O" if cfg["wo"] else "",
        " seeded=" + ",".join(cfg["omit"]) if cfg["omit"] else "", pos, sp,
        cfg.get("note", "")))


# --------------------------------------------------------------------------
# decode
# --------------------------------------------------------------------------

def feature_label(cfg):
    """ qkv_bias, output_bias, rope_pairing and rope_scaling where set."""
    out = ""
    for key in ("qkv_bias", "output_bias"):
        if cfg.get(key) or key in cfg.get("written", ()):
            out += " %s=%s" % (key, "true" if cfg.get(key) else "false")
    if cfg.get("rope_pairing"):
        out += " " + cfg["rope_pairing"]
    sc = cfg.get("rope_scaling")
    if sc:
        out += " llama3(F=%s,lo=%s,hi=%s,L0=%s)" % (sc["factor"], sc["low_freq_factor"],
                                                    sc["high_freq_factor"],
                                                    sc["original_max_positions"])
    return out


def elements_per_token(cfg):
    _, _, _, di = resolved(cfg)
    if cfg["variant"] == "mla":
        n = cfg["latent_dim"] + cfg["rope_dim"]
    else:
        n = 2 * cfg["kv_heads"] * cfg["head_dim"]
    return n + (di if cfg["sparse"] else 0)


def check_decode(cfg, W, out, chk, follow=None):
    """`decode --json` against the reference with mask AND causal (self) / as-is (cross).
    follow: the trace's far-position values (see follow_far_positions)."""
    if cfg["cross"]:
        ref = reference(cfg, W, follow=follow)
    else:
        ref = reference(cfg, W, base_mask=mask_matrix(cfg) * causal(cfg["n_q"], cfg["n_kv"]),
                        follow=follow)
    if ref.get("topk_info", {}).get("near"):
        cfg["note"] = cfg.get("note", "") + " [decode near-tie rows %s]" % ref["topk_info"]["near"]
    chk.eq(cfg["cross"], out.get("cross_attention"), "decode: cross_attention")
    ept = elements_per_token(cfg)
    chk.eq(ept, out.get("elements_per_token"), "decode: elements_per_token")
    steps = out.get("steps")
    if not isinstance(steps, list) or len(steps) != cfg["n_q"]:
        chk.fail("decode: steps: expected %d entries" % cfg["n_q"])
        return
    for t, step in enumerate(steps):
        w = "decode: steps[%d]." % t
        if not isinstance(step, dict):
            chk.fail(w[:-1] + ": not an object")
            continue
        L = cfg["n_kv"] if cfg["cross"] else t + 1
        chk.eq(t, step.get("t"), w + "t")
        chk.eq(L, step.get("cache_tokens"), w + "cache_tokens")
        chk.eq(L * ept, step.get("cache_elements"), w + "cache_elements")
        chk.cmp(ref["output"][t], step.get("output"), w + "output")
        fw = step.get("weights")
        if not isinstance(fw, list) or len(fw) != cfg["heads"]:
            chk.fail(w + "weights: expected %d heads" % cfg["heads"])
        else:
            for h, rh in enumerate(ref["heads"]):
                chk.cmp(rh["weights"][t][:L], fw[h], w + "weights[%d]" % h)
        chk.eq([rh["row_status"][t] for rh in ref["heads"]], step.get("row_status"),
               w + "row_status")
        if cfg["sparse"]:
            ri = ref["indexer"]
            chk.cmp(ri["scores"][t][:L], step.get("indexer_scores"), w + "indexer_scores",
                    null_as=np.nan)
            chk.exact(ri["selected"][t][:L], step.get("selected"), w + "selected")
        else:
            for f in ("indexer_scores", "selected"):
                if f in step:
                    chk.fail(w + f + ": present without sparse")
    cache = out.get("cache")
    if not isinstance(cache, dict):
        chk.fail("decode: cache: missing")
        return
    if cfg["variant"] == "mla":
        chk.cmp(ref["latent"], cache.get("latent"), "decode: cache.latent")
    else:
        kvh = cache.get("kv_heads")
        if not isinstance(kvh, list) or len(kvh) != cfg["kv_heads"]:
            chk.fail("decode: cache.kv_heads: expected %d entries" % cfg["kv_heads"])
        else:
            rope = cfg["positions"] == "rope"
            base = resolved(cfg)[0]
            per_group = cfg["heads"] // cfg["kv_heads"]
            for g, (rk, fk) in enumerate(zip(ref["kv_heads"], kvh)):
                # cache row j (step j's key, or context row j) sits at C + j
                if rope and "k_rope" in (follow or {}):
                    k = follow["k_rope"][g * per_group]
                else:
                    k = rotate(rk["k"], base, cfg.get("offset", 0), **rope_of(cfg)) if rope \
                        else rk["k"]
                chk.cmp(k, (fk or {}).get("k"), "decode: cache.kv_heads[%d].k%s"
                        % (g, " (stored rotated)" if rope else ""))
                chk.cmp(rk["v"], (fk or {}).get("v"), "decode: cache.kv_heads[%d].v" % g)
    if "k_r" in ref:
        chk.cmp(ref["k_r"], cache.get("k_rope"), "decode: cache.k_rope")
    elif "k_rope" in cache:
        chk.fail("decode: cache.k_rope: present without mla + rope")
    if cfg["sparse"]:
        chk.cmp(ref["indexer"]["k"], cache.get("indexer_k"), "decode: cache.indexer_k")
    elif "indexer_k" in cache:
        chk.fail("decode: cache.indexer_k: present without sparse")
    if isinstance(out.get("weights"), dict):
        for name, value in W.items():
            chk.cmp(value, out["weights"].get(name), "decode: weights." + name)


# --------------------------------------------------------------------------
# Running the binary
# --------------------------------------------------------------------------

class Tally:
    def __init__(self, fail_dir):
        self.groups = {}
        self.fail_dir = fail_dir
        self.configs = 0

    def add(self, group, ok, line, doc=None, name=None):
        g = self.groups.setdefault(group, [0, 0])
        g[0 if ok else 1] += 1
        print("%s %s" % ("ok  " if ok else "FAIL", line))
        if not ok and doc is not None and self.fail_dir:
            os.makedirs(self.fail_dir, exist_ok=True)
            with open(os.path.join(self.fail_dir, name), "w") as f:
                json.dump(doc, f, indent=1)

    def failed(self):
        return sum(g[1] for g in self.groups.values())


def run_configs(runner, tally, configs, seen, plain_only, features=False):
    """trace + decode of every configuration; return {idx: (W, ref)} of the agreeing ones.
    features: the cases of feature_configs (their own groups and coverage)."""
    refs = {}
    group = "features " if features else ""
    for cfg in configs:
        doc = scenario_json(cfg)
        name = "scenario_%03d.json" % cfg["idx"]
        path = runner.write(name, doc)
        chk = Checks()
        ref = W = None
        try:
            out = runner.json("trace", path, "--json")
            seen.setdefault("accepted", set()).add(cfg["idx"])
            W = weights_used(cfg, out, Checks())
            ref = check_trace(cfg, out, chk, plain_only)
        except Mismatch as e:
            chk.fail(str(e))
        tally.configs += 1
        ok = not chk.errors
        tally.add(group + "trace", ok, "trace  " + describe(cfg) +
                  ("  max_err=%.1e" % chk.max_err if ok else error_lines(chk.errors, 6)), doc, name)
        if features:
            if ok:
                note_feature_coverage(seen, cfg)
        elif ref is not None:
            note_coverage(seen, cfg, ref)
            refs[cfg["idx"]] = (W, ref)
        if W is None:
            continue
        dchk = Checks()
        try:
            check_decode(cfg, W, runner.json("decode", path, "--json"), dchk,
                         ref["follow"] if ref is not None else None)
        except Mismatch as e:
            dchk.fail(str(e))
        ok = not dchk.errors
        if ok and features:
            seen.setdefault("features", set()).add("decode")
        tally.add(group + "decode", ok, "decode " + describe(cfg) +
                  ("  max_err=%.1e" % dchk.max_err if ok else error_lines(dchk.errors, 6)), doc, name)
    return refs


# --------------------------------------------------------------------------
# Biases, rope_pairing and rope_scaling
# --------------------------------------------------------------------------

FEATURE_SEED = 4242
FEATURE_IDX = 900           # the feature cases are numbered from here (stable with --reps)


def llama3(factor, lo, hi, l0):
    return {"type": "llama3", "factor": factor, "low_freq_factor": lo, "high_freq_factor": hi,
            "original_max_positions": l0}


# (label, what differs from feature_config's defaults).  RoPE widths of 12
# (rope_dim 6 for mla): with 4 a wrong rotate_half permutation could still
# pair the right columns.  Each rope_scaling puts the frequencies in all three
# of Llama 3's bands (checked by the coverage).
FEATURE_CASES = (
    ("qkv + output bias, mha, positions none",
     dict(kind="mha", heads=2, head_dim=3, d_model=5, n_q=4, qkv_bias=True, output_bias=True,
          wo=True)),
    ("qkv bias, gqa, learned, cross, C=2, b_V left out (zeros)",
     dict(kind="gqa", heads=4, kv_heads=2, head_dim=2, d_model=4, n_q=3, cross=True, n_kv=5,
          mask="none", positions="learned", offset=2, qkv_bias=True, wo=True, omit=("b_V",))),
    ("qkv + output bias, mqa, rope (interleaved written), W_Q seeded",
     dict(kind="mqa", heads=3, head_dim=4, d_model=6, n_q=5, mask="sliding_window", window=3,
          positions="rope", rope_base=100, rope_pairing="interleaved", qkv_bias=True,
          output_bias=True, wo=True, omit=("W_Q",))),
    ("output bias alone, sinusoidal, qkv_bias false written, W_O seeded",
     dict(kind="mha", heads=1, head_dim=4, d_model=4, n_q=3, positions="sinusoidal",
          output_bias=True, written=("qkv_bias",), wo=True, omit=("W_O",))),
    ("rotate_half, mha, head_dim 12, C=3",
     dict(kind="mha", heads=2, head_dim=12, d_model=6, n_q=6, positions="rope",
          rope_pairing="rotate_half", offset=3)),
    ("rotate_half + qkv bias, gqa, head_dim 12, cross, no W_O",
     dict(kind="gqa", heads=4, kv_heads=2, head_dim=12, d_model=5, n_q=4, cross=True, n_kv=6,
          mask="none", positions="rope", rope_base=500, rope_pairing="rotate_half",
          qkv_bias=True, written=("output_bias",))),
    ("llama3 scaling (interleaved), mha, head_dim 12, C=20",
     dict(kind="mha", heads=2, head_dim=12, d_model=8, n_q=7, positions="rope", rope_base=10000,
          rope_scaling=llama3(8, 1, 4, 32), offset=20)),
    ("llama3 scaling + rotate_half + output bias, mqa, head_dim 12",
     dict(kind="mqa", heads=2, head_dim=12, d_model=4, n_q=5, positions="rope", rope_base=500,
          rope_pairing="rotate_half", rope_scaling=llama3(4, 0.5, 2, 16), output_bias=True,
          wo=True)),
    ("rotate_half, mla, rope_dim 6",
     dict(kind="mla", heads=2, head_dim=3, latent_dim=4, d_model=5, n_q=5, positions="rope",
          rope_dim=6, rope_pairing="rotate_half", wo=True)),
    ("rotate_half + llama3, mla with a query latent, rope_dim 6, cross, C=4",
     dict(kind="mla_q", heads=2, head_dim=2, latent_dim=3, q_latent=2, d_model=4, n_q=4,
          cross=True, n_kv=5, mask="none", positions="rope", rope_dim=6,
          rope_pairing="rotate_half", rope_scaling=llama3(8, 1, 4, 256), offset=4)),
    ("qkv + output bias + rotate_half, gqa, sparse",
     dict(kind="gqa", heads=2, kv_heads=1, head_dim=4, d_model=4, n_q=6, positions="rope",
          rope_pairing="rotate_half", qkv_bias=True, output_bias=True, wo=True,
          sparse={"top_k": 2, "indexer_heads": None, "indexer_dim": None})),
)


def feature_config(idx, label, spec, rng):
    """A configuration of make_config's form from a FEATURE_CASES entry, its
    values drawn from rng; spec["written"]: keys written at their default."""
    cfg = {"idx": idx, "kind": "mha", "positions": "none", "offset": 0, "mask": "causal",
           "kernel": "softmax", "cross": False, "wo": False, "scale": True, "latent_dim": 0,
           "q_latent": 0, "rope_dim": 0, "rope_base": None, "max_positions": None,
           "sparse": None, "qkv_bias": False, "output_bias": False, "rope_pairing": None,
           "rope_scaling": None, "written": (), "window": 2, "omit": (), "note": ""}
    cfg.update(copy.deepcopy(spec))
    cfg["label"] = label
    cfg["variant"] = "mla" if cfg["kind"].startswith("mla") else cfg["kind"]
    cfg.setdefault("kv_heads", {"mqa": 1}.get(cfg["variant"], cfg["heads"]))
    cfg["n_kv"] = cfg["n_kv"] if cfg["cross"] else cfg["n_q"]
    cfg["offset_written"] = cfg["offset"] > 0
    fill_values(cfg, rng, repeat=False)
    cfg["omit"] = tuple(cfg["omit"])
    return cfg


def feature_configs():
    rng = np.random.default_rng(FEATURE_SEED)
    return [feature_config(FEATURE_IDX + n, label, spec, rng)
            for n, (label, spec) in enumerate(FEATURE_CASES)]


def feature_invalid_cases(features):
    """(label, fields (one of which the message must name), scenario doc), each
    breaking one rule of the new keys in a valid feature case."""
    cases = []

    def add(label, fields, pred, change):
        cases.append(broken_case(features, label, fields, pred, change))

    def no_bias_rope(c):
        return c["positions"] == "rope" and not c["qkv_bias"] and c["variant"] != "mla"

    def with_scaling(c):
        return c["rope_scaling"] is not None and c["variant"] != "mla"

    def scaling(**change):
        def f(c, a, w):
            for k, v in change.items():
                if v is None:
                    a["rope_scaling"].pop(k)
                else:
                    a["rope_scaling"][k] = v
        return f

    qkv, ob, rp, rs = ("attention.qkv_bias", "attention.output_bias", "attention.rope_pairing",
                       "attention.rope_scaling")
    add("qkv_bias not a boolean", qkv, lambda c: c["qkv_bias"],
        lambda c, a, w: a.update(qkv_bias="yes"))
    add("output_bias with output_projection false", (ob, "attention.output_projection"),
        lambda c: not c["wo"],
        lambda c, a, w: a.update(output_bias=True, output_projection=False))
    add("output_bias without output_projection (no W_O, so off)",
        (ob, "attention.output_projection"), lambda c: not c["wo"],
        lambda c, a, w: (a.pop("output_projection", None), a.update(output_bias=True)))
    add("b_Q given, qkv_bias left out (false)", "weights.b_Q", no_bias_rope,
        lambda c, a, w: w.update(b_Q=[0.5] * (c["heads"] * c["head_dim"])))
    add("b_Q given, qkv_bias written false", "weights.b_Q",
        lambda c: "qkv_bias" in c["written"],
        lambda c, a, w: w.update(b_Q=[0.5] * (c["heads"] * c["head_dim"])))
    add("b_O given, output_bias false", "weights.b_O",
        lambda c: c["wo"] and not c["output_bias"],
        lambda c, a, w: w.update(b_O=[0.5] * c["d_model"]))
    add("b_K one number short", "weights.b_K", lambda c: c["qkv_bias"] and "b_K" not in c["omit"],
        lambda c, a, w: w["b_K"].pop())
    add("b_V one number too many", "weights.b_V",
        lambda c: c["qkv_bias"] and "b_V" not in c["omit"],
        lambda c, a, w: w["b_V"].append(0.5))
    add("b_O one number short", "weights.b_O",
        lambda c: c["output_bias"] and "b_O" not in c["omit"], lambda c, a, w: w["b_O"].pop())
    add("rope_pairing with positions none", rp, lambda c: c["positions"] == "none",
        lambda c, a, w: a.update(rope_pairing="rotate_half"))
    add("rope_pairing with sinusoidal", rp, lambda c: c["positions"] == "sinusoidal",
        lambda c, a, w: a.update(rope_pairing="rotate_half"))
    add("rope_pairing unknown", rp, lambda c: c["rope_pairing"] == "rotate_half",
        lambda c, a, w: a.update(rope_pairing="neox"))
    add("rope_scaling with positions none", rs, lambda c: c["positions"] == "none",
        lambda c, a, w: a.update(rope_scaling=llama3(8, 1, 4, 32)))
    add("rope_scaling with learned", rs, lambda c: c["positions"] == "learned",
        lambda c, a, w: a.update(rope_scaling=llama3(8, 1, 4, 32)))
    add("rope_scaling of an unknown type", rs, with_scaling, scaling(type="yarn"))
    add("rope_scaling without a type", rs, with_scaling, scaling(type=None))
    add("rope_scaling without factor", rs, with_scaling, scaling(factor=None))
    add("rope_scaling without original_max_positions", rs, with_scaling,
        scaling(original_max_positions=None))
    add("rope_scaling factor 0.5", rs, with_scaling, scaling(factor=0.5))
    add("rope_scaling low_freq_factor 0", rs, with_scaling, scaling(low_freq_factor=0))
    add("rope_scaling low_freq_factor >= high_freq_factor", rs, with_scaling,
        scaling(low_freq_factor=4, high_freq_factor=4))
    add("rope_scaling original_max_positions 0", rs, with_scaling,
        scaling(original_max_positions=0))
    return cases


def run_feature_invalid(runner, tally, features, accepted):
    """Each case must exit 2 naming its field; and the valid case it breaks
    must have been accepted (its idx in accepted), or a binary that does not
    know the key at all would pass by refusing it as unknown."""
    for n, (label, field, doc) in enumerate(feature_invalid_cases(features)):
        if doc is None:
            tally.add("features invalid", False, "invalid %s: no scenario of that kind" % label)
            continue
        name = "features_invalid_%02d.json" % n
        path = runner.write(name, doc)
        code, _, err = runner.call("trace", path, "--json")
        fields = (field,) if isinstance(field, str) else field
        named = [f for f in fields if f in err]
        base = int(label.rsplit("#", 1)[1].rstrip(")"))
        ok = code == 2 and bool(named) and base in accepted
        tally.add("features invalid", ok, "invalid %s -> exit %d, names %s: %s%s" % (
            label, code, named[0] if named else "NOT " + " / ".join(fields),
            first_line(err, path), "" if base in accepted else
            "  [the valid #%d it breaks was refused: no evidence]" % base), doc, name)


FEATURE_REQUIRED = {
    "qkv_bias mha", "qkv_bias gqa", "qkv_bias mqa", "qkv_bias positions none",
    "qkv_bias learned", "qkv_bias rope", "qkv_bias cross", "qkv_bias sparse", "output_bias",
    "output_bias without qkv_bias", "bias left out (zeros)", "bias with seeded weights",
    "rotate_half head_dim 12", "rotate_half mla rope_dim 6", "rotate_half with qkv_bias",
    "rope_pairing interleaved written", "llama3 band high", "llama3 band mid", "llama3 band low",
    "llama3 interleaved", "llama3 rotate_half", "llama3 mla", "decode",
}


def note_feature_coverage(seen, cfg):
    feats = seen.setdefault("features", set())
    v = cfg["variant"]
    if cfg["qkv_bias"]:
        feats.update({"qkv_bias " + v, "qkv_bias " + ("positions none" if cfg["positions"] == "none"
                                                       else cfg["positions"])})
        if cfg["cross"]:
            feats.add("qkv_bias cross")
        if cfg["sparse"]:
            feats.add("qkv_bias sparse")
        if cfg["rope_pairing"] == "rotate_half":
            feats.add("rotate_half with qkv_bias")
    if cfg["output_bias"]:
        feats.add("output_bias")
        if not cfg["qkv_bias"]:
            feats.add("output_bias without qkv_bias")
    if any(b in cfg["omit"] for b in ("b_Q", "b_K", "b_V", "b_O")):
        feats.add("bias left out (zeros)")
    if (cfg["qkv_bias"] or cfg["output_bias"]) and any(n.startswith("W_") for n in cfg["omit"]):
        feats.add("bias with seeded weights")
    width = cfg["rope_dim"] if v == "mla" else cfg["head_dim"]
    if cfg["rope_pairing"] == "rotate_half":
        feats.add("rotate_half mla rope_dim %d" % width if v == "mla"
                  else "rotate_half head_dim %d" % width)
    if cfg["rope_pairing"] == "interleaved":
        feats.add("rope_pairing interleaved written")
    sc = cfg["rope_scaling"]
    if sc:
        base = resolved(cfg)[0]
        feats.update("llama3 band " + b for b in rope_bands(inv_freq(width, base), sc))
        feats.add("llama3 " + (cfg["rope_pairing"] or "interleaved"))
        if v == "mla":
            feats.add("llama3 mla")


# --------------------------------------------------------------------------
# Overrides
# --------------------------------------------------------------------------

def apply_overrides(cfg, opts):
    """The configuration the options describe (weights that no longer fit are seeded)."""
    new = copy.deepcopy(cfg)
    new.pop("note", None)
    it = iter(opts)
    rope_dim_given = positions_given = False
    for opt in it:
        val = next(it)
        if opt == "--positions":
            new["positions"] = val
            positions_given = True
        elif opt == "--rope-base":
            new["rope_base"] = float(val)
        elif opt == "--rope-dim":
            new["rope_dim"] = int(val)
            rope_dim_given = True
        elif opt == "--top-k":
            if int(val) == 0:
                new["sparse"] = None
            else:
                new["sparse"] = dict(new["sparse"] or {"indexer_heads": None, "indexer_dim": None},
                                     top_k=int(val))
        elif opt == "--indexer-heads":
            new["sparse"]["indexer_heads"] = int(val)
        elif opt == "--indexer-dim":
            new["sparse"]["indexer_dim"] = int(val)
        elif opt == "--position-offset":
            new["offset"] = int(val)
        else:
            raise ValueError(opt)
    if rope_dim_given and not positions_given:
        new["positions"] = "rope"
    if new["positions"] != "rope" or new["variant"] != "mla":
        new["rope_dim"] = 0
    if new["positions"] == "none":
        new["rope_base"] = None
    if new["positions"] != "learned":
        new["max_positions"] = None
    file_w = {k: v for k, v in cfg["W"].items() if k not in cfg["omit"]}
    if new["positions"] == "learned" and new["max_positions"] is None and "W_P" in file_w:
        new["wp_rows"] = file_w["W_P"].shape[0]    # max_positions: the given W_P's rows
    # Which of the file's weights still fit; the rest come from the seed.
    shapes = weight_shapes(new)
    new["W"] = {k: v for k, v in file_w.items() if k in shapes and v.shape == shapes[k]}
    new["omit"] = tuple(n for n in used_weights(new) if n not in new["W"])
    return new


def override_cases(configs):
    """(label, base config, options, also decode?, also online?) on files of the right kind."""
    def first(pred):
        for c in configs:
            if pred(c):
                return c
        return None

    def plain(c):
        return c["positions"] == "none" and not c["sparse"]

    def even(c):
        return c["head_dim"] % 2 == 0

    cases = [
        ("sinusoidal base 100 on a plain mha file",
         first(lambda c: plain(c) and c["variant"] == "mha" and c["kernel"] == "softmax"),
         ["--positions", "sinusoidal", "--rope-base", "100"], True),
        ("learned on a plain gqa file",
         first(lambda c: plain(c) and c["variant"] == "gqa"),
         ["--positions", "learned"], True),
        ("rope on a plain file",
         first(lambda c: plain(c) and c["variant"] != "mla" and even(c) and c["n_q"] > 2),
         ["--positions", "rope"], False),
        ("rope base 50 on a plain cross file",
         first(lambda c: plain(c) and c["variant"] != "mla" and even(c) and c["cross"]),
         ["--positions", "rope", "--rope-base", "50"], True),
        ("--rope-dim alone on a plain mla file",
         first(lambda c: plain(c) and c["kind"] == "mla"),
         ["--rope-dim", "2"], True),
        ("--rope-dim 4 --rope-base 20 on mla with query latent",
         first(lambda c: plain(c) and c["kind"] == "mla_q"),
         ["--rope-dim", "4", "--rope-base", "20"], False),
        ("--top-k alone on a plain file",
         first(lambda c: plain(c) and c["n_kv"] > 2 and c["variant"] == "mqa"),
         ["--top-k", "2"], True),
        ("--top-k --indexer-heads --indexer-dim on a plain mla file",
         first(lambda c: plain(c) and c["variant"] == "mla" and c["n_kv"] > 2),
         ["--top-k", "1", "--indexer-heads", "3", "--indexer-dim", "2"], False),
        ("--top-k 0 on a sparse file",
         first(lambda c: c["sparse"] and c["positions"] == "none"),
         ["--top-k", "0"], False),
        ("--indexer-heads on a sparse file",
         first(lambda c: c["sparse"] and c["n_kv"] > 3),
         ["--indexer-heads", "2"], True),
        ("--indexer-dim on a sparse file",
         first(lambda c: c["sparse"] and c["positions"] == "sinusoidal"),
         ["--indexer-dim", "1"], False),
        ("--top-k on a sparse rope file",
         first(lambda c: c["sparse"] and c["positions"] == "rope" and c["n_kv"] > 2),
         ["--top-k", "3", "--rope-base", "7"], True),
        ("--positions none on a sinusoidal file",
         first(lambda c: c["positions"] == "sinusoidal" and not c["sparse"]
               and not c["offset_written"]),
         ["--positions", "none"], False),
        ("--positions sinusoidal on a rope (not mla) file",
         first(lambda c: c["positions"] == "rope" and c["variant"] != "mla"),
         ["--positions", "sinusoidal"], False),
        ("--rope-base on a rope mla file",
         first(lambda c: c["positions"] == "rope" and c["variant"] == "mla"),
         ["--rope-base", "3"], False),
        ("--positions learned on a sparse cross file",
         first(lambda c: c["sparse"] and c["cross"] and c["positions"] == "none"),
         ["--positions", "learned", "--top-k", "2"], True),
        ("--rope-dim changing an mla rope file's rope_dim (W_QR, W_KR no longer fit)",
         first(lambda c: c["rope_dim"] == 2 and "W_QR" not in c["omit"]),
         ["--rope-dim", "4"], True),
        ("--positions sinusoidal --top-k on a learned file",
         first(lambda c: c["positions"] == "learned" and not c["sparse"]
               and "W_P" in c["omit"]),
         ["--positions", "sinusoidal", "--top-k", "1", "--indexer-dim", "3"], True),
        # the position shift
        ("--position-offset 5 on a sinusoidal file",
         first(lambda c: c["positions"] == "sinusoidal" and not c["offset_written"]
               and c["kernel"] == "softmax"),
         ["--position-offset", "5"], True),
        ("--position-offset 100000 on a rope file",
         first(lambda c: c["positions"] == "rope" and c["variant"] != "mla"
               and not c["offset_written"] and c["n_q"] > 2),
         ["--position-offset", "100000"], True),
        ("--position-offset 1000 on an mla rope file",
         first(lambda c: c["positions"] == "rope" and c["variant"] == "mla"
               and c["kernel"] == "softmax"),
         ["--position-offset", "1000"], True),
        ("--position-offset 3 on a learned file (seeded W_P, no max_positions)",
         first(lambda c: c["positions"] == "learned" and "W_P" in c["omit"]
               and c["max_positions"] is None),
         ["--position-offset", "3"], True),
        ("--position-offset 0 on a shifted file",
         first(lambda c: c["positions"] in ("rope", "sinusoidal") and c["offset"] > 0),
         ["--position-offset", "0"], True),
        ("--position-offset 0 on a shifted learned file with a given W_P",
         first(lambda c: c["positions"] == "learned" and c["offset"] > 0
               and "W_P" not in c["omit"] and c["max_positions"] is None),
         ["--position-offset", "0"], True),
        ("--positions rope --position-offset 7 on a plain file",
         first(lambda c: plain(c) and c["variant"] != "mla" and even(c) and c["n_q"] > 3),
         ["--positions", "rope", "--position-offset", "7"], True),
        ("--rope-dim 2 --position-offset 65536 on a plain mla file",
         first(lambda c: plain(c) and c["kind"] == "mla_q"),
         ["--rope-dim", "2", "--position-offset", "65536"], True),
        ("--positions sinusoidal --position-offset 1048576 on a plain file",
         first(lambda c: plain(c) and c["cross"]),
         ["--positions", "sinusoidal", "--position-offset", str(OFFSET_MAX)], True),
        ("--positions learned --position-offset 4096 - tokens (max_positions 4096)",
         first(lambda c: plain(c) and c["variant"] == "gqa" and c["kernel"] == "linear"),
         ["--positions", "learned", "--position-offset", "4096-N"], True),
    ]
    for i, (label, base, opts, dec) in enumerate(cases):
        if base is not None and "4096-N" in opts:
            opts = [str(4096 - max(base["n_q"], base["n_kv"])) if o == "4096-N" else o
                    for o in opts]
            cases[i] = (label, base, opts, dec)
    # decode every overridden configuration too; `online` (blockwise, many runs)
    # only on the first two --position-offset ones: run_online already goes
    # through the shifted scenario files
    shift_online = {n for n, (_, _, opts, _) in enumerate(cases)
                    if "--position-offset" in opts}
    shift_online = set(sorted(shift_online)[:2])
    return [(label, base, opts, True, "--position-offset" not in opts or n in shift_online)
            for n, (label, base, opts, _) in enumerate(cases)]


def run_overrides(runner, tally, configs, seen):
    for n, (label, base, opts, with_decode, with_online) in enumerate(override_cases(configs)):
        if base is None:
            tally.add("overrides", False, "override %s: no scenario of that kind" % label)
            continue
        cfg = apply_overrides(base, opts)
        doc = scenario_json(base)
        name = "override_%02d_from_%03d.json" % (n, base["idx"])
        path = runner.write(name, doc)
        chk = Checks()
        line = "override %s (#%d %s)" % (label, base["idx"], " ".join(opts))
        try:
            out = runner.json("trace", path, "--json", *opts)
            ref = check_trace(cfg, out, chk, lenient_names=True)
            note_coverage(seen, cfg, ref, override=True)
            if "--position-offset" in opts:
                seen.setdefault("position_offset", set()).add("override")
            if with_decode and not chk.errors:
                W = weights_used(cfg, out, Checks(), lenient_names=True)
                check_decode(cfg, W, runner.json("decode", path, "--json", *opts), chk,
                             ref["follow"])
            if cfg["kernel"] == "softmax" and with_online and not chk.errors:
                # `online` takes the same overrides (its --help says so)
                h, i = cfg["heads"] - 1, cfg["n_q"] - 1
                for block in range(1, cfg["n_kv"] + 2):
                    where = "online head %d row %d block %d: " % (h, i, block)
                    got = runner.json("online", path, "--head", h, "--row", i, "--block", block,
                                      "--json", *opts)
                    check_online(got, online_reference(ref["heads"][h]["masked"][i],
                                                       ref["heads"][h]["v"], block),
                                 ref["heads"][h]["output"][i], h, i, block, chk, where)
        except Mismatch as e:
            chk.fail(str(e))
        tally.configs += 1
        ok = not chk.errors
        if not ok:
            name = name.replace(".json", "__%s.json" % "_".join(o.strip("-") for o in opts))
        tally.add("overrides", ok, line + ("  max_err=%.1e" % chk.max_err if ok
                                           else "\n       config: " + describe(cfg) +
                                           error_lines(chk.errors, 6)), doc, name)


# --------------------------------------------------------------------------
# Shift invariance
# --------------------------------------------------------------------------

def shifted(base, C, rows_for):
    """base at position shift C with every weight given, so that the runs at two
    shifts use the very same values; a learned W_P gets (at least) rows_for rows
    and no max_positions (it is then the W_P's row count at either shift)."""
    new = copy.deepcopy(base)
    new.pop("note", None)
    new["offset"], new["offset_written"] = C, True
    new["omit"] = ()
    if new["positions"] == "learned":
        wp = new["W"]["W_P"]
        if wp.shape[0] < rows_for:
            extra = values(np.random.default_rng([base["idx"], rows_for, 0x5F]),
                           (rows_for - wp.shape[0], wp.shape[1]), -2.0, 2.0)
            wp = np.vstack([wp, extra])
        new["W"]["W_P"] = wp
        new["max_positions"], new["wp_rows"] = None, wp.shape[0]
    return new


def shift_cases(configs):
    """(label, base config, C): rope in every variant (mla: decoupled rope), and
    sinusoidal and learned, self- and cross-attention."""
    def first(pred):
        return next((c for c in configs if pred(c)), None)
    def width(c):       # the rotated width: 4 has a frequency below 1 (inexact angles)
        return c["rope_dim"] if c["variant"] == "mla" else c["head_dim"]

    rope_c = {"mha": OFFSET_MAX, "gqa": 7, "mqa": 100000, "mla": 1000, "mla_q": OFFSET_MAX}
    cases = [("rope %s" % k, first(lambda c, k=k: c["positions"] == "rope" and c["kind"] == k
                                   and c["n_q"] > 1 and width(c) == 4)
              or first(lambda c, k=k: c["positions"] == "rope" and c["kind"] == k), C)
             for k, C in rope_c.items()]
    cases.append(("rope cross", first(lambda c: c["positions"] == "rope" and c["cross"]
                                      and c["variant"] != "mla"), 3))
    cases.append(("sinusoidal", first(lambda c: c["positions"] == "sinusoidal"
                                      and not c["cross"] and c["n_q"] > 1), 5))
    cases.append(("sinusoidal cross", first(lambda c: c["positions"] == "sinusoidal"
                                            and c["cross"]), 100000))
    cases.append(("learned", first(lambda c: c["positions"] == "learned"
                                   and not c["cross"] and c["n_q"] > 1), 4))
    cases.append(("learned cross", first(lambda c: c["positions"] == "learned"
                                         and c["cross"]), 9))
    return cases


def score_gap(a_heads, b_heads, key="scores"):
    """max over heads of |a - b| / max(1, |a|, |b|) of the heads' `key` matrices
    (inf when they cannot be compared)."""
    gap = 0.0
    if len(a_heads) != len(b_heads):
        return math.inf
    for a, b in zip(a_heads, b_heads):
        try:
            a, b = np.asarray(a[key], float), np.asarray(b[key], float)
        except (KeyError, TypeError, ValueError):
            return math.inf
        if a.shape != b.shape:
            return math.inf
        if a.size:
            gap = max(gap, float(np.max(np.abs(a - b) / np.maximum(
                1.0, np.maximum(np.abs(a), np.abs(b))))))
    return gap


def run_shift(runner, tally, configs, seen):
    """The same scenario at C = 0 and at C: RoPE's scores (and mla's absorbed
    scores, and decode's outputs) must stay the same, sinusoidal and learned
    ones must move; the reference (in extended precision) says the same, and
    both runs are checked against it as usual."""
    for n, (label, base, C) in enumerate(shift_cases(configs)):
        if base is None:
            tally.add("shift", False, "shift %s: no scenario of that kind" % label)
            continue
        rows_for = C + max(base["n_q"], base["n_kv"])
        pair = [shifted(base, 0, rows_for), shifted(base, C, rows_for)]
        rope = base["positions"] == "rope"
        chk = Checks()
        outs, pure, decs, docs = [], [], [], []
        line = "shift %s C=0 vs C=%d: %s" % (label, C, describe(pair[1]))
        try:
            for cfg in pair:
                doc = scenario_json(cfg)
                docs.append(doc)
                path = runner.write("shift_%02d_C%d.json" % (n, cfg["offset"]), doc)
                c = Checks()
                out = runner.json("trace", path, "--json")
                ref = check_trace(cfg, out, c)
                chk.errors += ["C=%d: %s" % (cfg["offset"], e) for e in c.errors]
                W = weights_used(cfg, out, Checks())
                outs.append(out)
                pure.append(reference(cfg, W))      # not following the binary's angles
                if rope:
                    dec = runner.json("decode", path, "--json")
                    c = Checks()
                    check_decode(cfg, W, dec, c, ref["follow"])
                    chk.errors += ["C=%d decode: %s" % (cfg["offset"], e) for e in c.errors]
                    decs.append(dec)
        except Mismatch as e:
            chk.fail(str(e))
        if len(outs) == 2:
            seen.setdefault("shift", set()).add(label.replace(" cross", ""))
            got = score_gap(outs[0].get("heads") or [], outs[1].get("heads") or [])
            want = score_gap(pure[0]["heads"], pure[1]["heads"])
            line += "\n       scores: binary gap %.1e, reference gap %.1e" % (got, want)
            if rope:
                if want > SHIFT_TOL:
                    chk.fail("reference: rope scores move by %.3g with the shift" % want)
                if not got <= SHIFT_TOL:
                    chk.fail("binary: rope scores move by %.3g (> %g) between C=0 and C=%d"
                             % (got, SHIFT_TOL, C))
                if base["variant"] == "mla":
                    ab = [(o.get("absorbed") or {}).get("heads") or [] for o in outs]
                    agap = score_gap(ab[0], ab[1])
                    line += ", absorbed %.1e" % agap
                    if not agap <= SHIFT_TOL:
                        chk.fail("binary: mla absorbed scores move by %.3g between C=0 and "
                                 "C=%d" % (agap, C))
                if len(decs) == 2:
                    st = [d.get("steps") or [] for d in decs]
                    dgap = score_gap(st[0], st[1], "output") if len(st[0]) == len(st[1]) \
                        else math.inf
                    line += ", decode outputs %.1e" % dgap
                    if not dgap <= SHIFT_TOL:
                        chk.fail("binary: decode outputs move by %.3g between C=0 and C=%d"
                                 % (dgap, C))
            else:
                def gap_abs(a, b):
                    try:
                        return max(float(np.max(np.abs(np.asarray(x["scores"], float) -
                                                       np.asarray(y["scores"], float)),
                                                initial=0.0)) for x, y in zip(a, b))
                    except (KeyError, TypeError, ValueError):
                        return math.nan     # not comparable: "does not move" below
                got_abs = gap_abs(outs[0].get("heads") or [], outs[1].get("heads") or [])
                want_abs = gap_abs(pure[0]["heads"], pure[1]["heads"])
                line += " (absolute: binary %.1e, reference %.1e)" % (got_abs, want_abs)
                if not want_abs > SHIFT_MIN_DIFF:
                    chk.fail("reference: %s scores do not move with the shift (%.3g)"
                             % (base["positions"], want_abs))
                if not got_abs > SHIFT_MIN_DIFF:
                    chk.fail("binary: %s scores do not move between C=0 and C=%d (%.3g)"
                             % (base["positions"], C, got_abs))
        tally.configs += 2
        ok = not chk.errors
        tally.add("shift", ok, line + ("" if ok else error_lines(chk.errors, 6)),
                  docs[-1] if docs else None, "shift_%02d_C%d.json" % (n, C))


# --------------------------------------------------------------------------
# online
# --------------------------------------------------------------------------

def run_online(runner, tally, configs, refs, seen):
    softmax = [c for c in configs if c["kernel"] == "softmax" and c["idx"] in refs]
    linear = [c for c in configs if c["kernel"] == "linear"]
    for cfg in softmax:
        W, ref = refs[cfg["idx"]]
        path = os.path.join(runner.folder, "scenario_%03d.json" % cfg["idx"])
        H, n_q = cfg["heads"], cfg["n_q"]
        picks = {(0, 0), (H - 1, n_q - 1), ((cfg["idx"] // 2) % H, n_q // 2)}
        empty = [r for r in range(n_q) if not ref["heads"][0]["mask"][r].any()]
        if empty:
            picks.add((0, empty[0]))         # an all-masked row: nothing but -inf
        picks = sorted(picks)
        chk = Checks()
        checked = 0
        for h, i in picks:
            x = ref["heads"][h]["masked"][i]
            v = ref["heads"][h]["v"]
            for block in range(1, cfg["n_kv"] + 2):
                where = "online head %d row %d block %d: " % (h, i, block)
                try:
                    out = runner.json("online", path, "--head", h, "--row", i,
                                      "--block", block, "--json")
                except Mismatch as e:
                    chk.fail(where + str(e))
                    if checked == 0:
                        break           # the command itself fails: no point in more runs
                    continue
                blocks = online_reference(x, v, block)
                note_online(seen, blocks)
                check_online(out, blocks, ref["heads"][h]["output"][i], h, i, block, chk, where)
                checked += 1
        ok = not chk.errors
        tally.add("online", ok, "online %s  (%d runs)%s" % (
            describe(cfg), checked, "" if ok else error_lines(chk.errors, 6)), scenario_json(cfg),
            "online_%03d.json" % cfg["idx"])
    for cfg in linear[:4]:
        path = os.path.join(runner.folder, "scenario_%03d.json" % cfg["idx"])
        code, _, err = runner.call("online", path, "--head", 0, "--row", 0, "--block", 1, "--json")
        ok = code == 2 and err.strip() != ""
        tally.add("online", ok, "online refuses the linear kernel (#%d): exit %d %s" % (
            cfg["idx"], code, first_line(err, path)), scenario_json(cfg),
            "online_linear_%03d.json" % cfg["idx"])


def note_online(seen, blocks):
    feats = seen.setdefault("online", set())
    if all(b["m"] == -math.inf for b in blocks):
        feats.add("all-masked row")
    if any(b["m"] == -math.inf for b in blocks) and blocks[-1]["m"] != -math.inf:
        feats.add("m from -inf to finite after a hidden block")
    if any(b["block_max"] == -math.inf and b["m"] != -math.inf for b in blocks):
        feats.add("hidden block after m finite")
    if any(0.0 < b["rescale"] < 1.0 for b in blocks):
        feats.add("rescale < 1")
    if len(blocks) == 1:
        feats.add("one block")
    if len(blocks) > 2:
        feats.add("three or more blocks")


def check_online(out, blocks, dense, h, i, block, chk, where):
    chk.eq(h, out.get("head"), where + "head")
    chk.eq(i, out.get("row"), where + "row")
    chk.eq(block, out.get("block"), where + "block")
    fb = out.get("blocks")
    if not isinstance(fb, list) or len(fb) != len(blocks):
        chk.fail(where + "blocks: expected %d entries, found %s" % (
            len(blocks), len(fb) if isinstance(fb, list) else fb))
        return
    for b, (rb, got) in enumerate(zip(blocks, fb)):
        w = where + "blocks[%d]." % b
        if not isinstance(got, dict):
            chk.fail(w[:-1] + ": not an object")
            continue
        chk.eq(rb["start"], got.get("start"), w + "start")
        chk.eq(rb["end"], got.get("end"), w + "end")
        for f in ("block_max", "m"):
            chk.cmp([rb[f]], [got.get(f)], w + f, null_as=-np.inf)
        for f in ("rescale", "l"):
            chk.cmp([rb[f]], [got.get(f)], w + f)
        chk.cmp(rb["output"], got.get("output"), w + "output")
    chk.cmp(blocks[-1]["output"], out.get("output"), where + "output")
    chk.cmp(dense, out.get("dense_output"), where + "dense_output")
    if chk.cmp(out.get("dense_output"), out.get("output"),
               where + "output vs dense_output", tol=ONLINE_TOL):
        diff = float(np.max(np.abs(np.asarray(out["output"], float) -
                                   np.asarray(out["dense_output"], float)), initial=0.0))
        md = out.get("max_difference")
        if not isinstance(md, (int, float)) or isinstance(md, bool) \
                or abs(md - diff) > 1e-15 or md > ONLINE_TOL:
            chk.fail(where + "max_difference: found %r, |output - dense_output| max %r"
                     % (md, diff))


# --------------------------------------------------------------------------
# Invalid input
# --------------------------------------------------------------------------

def first_line(err, path):
    return (err.strip().splitlines() or ["(no message)"])[0].replace(path, "FILE")


def broken_case(configs, label, field, pred, change):
    """(label, field, doc): the scenario of the first configuration `pred` accepts, broken by `change`
    (its configuration, attention and weights); no doc when none is accepted (a coverage gap)."""
    for c in configs:
        if pred(c):
            doc = copy.deepcopy(scenario_json(c))
            change(c, doc["attention"], doc["weights"])
            return ("%s (from #%d)" % (label, c["idx"]), field, doc)
    return (label, field, None)


def invalid_cases(configs):
    """(label, field the message must name, scenario doc) each breaking one rule."""
    cases = []

    def add(label, field, pred, change):
        cases.append(broken_case(configs, label, field, pred, change))

    def plain(c):
        return c["positions"] == "none" and not c["sparse"]

    def mla_rope(c):
        return c["variant"] == "mla" and c["positions"] == "rope"

    def drop(w, *names):
        for n in names:
            w.pop(n, None)

    def reshape(name, extra_rows=0, extra_cols=0):
        def change(c, a, w):
            m = np.asarray(c["W"][name])
            w[name] = np.zeros((m.shape[0] + extra_rows, m.shape[1] + extra_cols)).tolist()
        return change

    add("odd head_dim with rope (mha)", "attention.head_dim",
        lambda c: plain(c) and c["variant"] == "mha" and c["head_dim"] % 2 == 1,
        lambda c, a, w: a.update(positions="rope"))
    add("odd head_dim with rope (gqa)", "attention.head_dim",
        lambda c: plain(c) and c["variant"] == "gqa" and c["head_dim"] % 2 == 1,
        lambda c, a, w: a.update(positions="rope"))
    add("mla + rope with odd rope_dim", "attention.rope_dim", mla_rope,
        lambda c, a, w: (a.update(rope_dim=3), drop(w, "W_QR", "W_KR")))
    add("mla + rope with rope_dim 0", "attention.rope_dim", mla_rope,
        lambda c, a, w: (a.update(rope_dim=0), drop(w, "W_QR", "W_KR")))
    add("mla + rope with negative rope_dim", "attention.rope_dim", mla_rope,
        lambda c, a, w: (a.update(rope_dim=-2), drop(w, "W_QR", "W_KR")))
    add("rope_dim with mha rope", "attention.rope_dim",
        lambda c: c["positions"] == "rope" and c["variant"] == "mha",
        lambda c, a, w: a.update(rope_dim=2))
    add("rope_dim with mla, positions none", "attention.rope_dim",
        lambda c: plain(c) and c["variant"] == "mla",
        lambda c, a, w: a.update(rope_dim=2))
    add("rope_dim with mla, sinusoidal", "attention.rope_dim",
        lambda c: c["positions"] == "sinusoidal" and c["variant"] == "mla",
        lambda c, a, w: a.update(rope_dim=2))
    add("sparse top_k 0", "attention.sparse.top_k", lambda c: bool(c["sparse"]),
        lambda c, a, w: a["sparse"].update(top_k=0))
    add("sparse top_k -1", "attention.sparse.top_k", lambda c: bool(c["sparse"]),
        lambda c, a, w: a["sparse"].update(top_k=-1))
    add("sparse without top_k", "attention.sparse.top_k",
        lambda c: bool(c["sparse"]) and "W_QI" in c["omit"],
        lambda c, a, w: a["sparse"].pop("top_k"))
    add("unknown positions kind", "attention.positions", plain,
        lambda c, a, w: a.update(positions="alibi"))
    add("positions of the wrong type", "attention.positions", plain,
        lambda c, a, w: a.update(positions=1))
    for name in NEW_WEIGHTS:
        add("%s one column too many" % name, "weights." + name,
            lambda c, n=name: n in c["W"] and n not in c["omit"],
            reshape(name, extra_cols=1))
        add("%s one row too few" % name, "weights." + name,
            lambda c, n=name: n in c["W"] and n not in c["omit"]
            and c["W"][n].shape[0] > 1, reshape(name, extra_rows=-1))
    add("max_positions smaller than the tokens", "attention.max_positions",
        lambda c: c["positions"] == "learned" and "W_P" in c["omit"] and max(
            c["n_q"], c["n_kv"]) > 1,
        lambda c, a, w: a.update(max_positions=max(c["n_q"], c["n_kv"]) - 1))
    add("max_positions smaller than the context", "attention.max_positions",
        lambda c: c["positions"] == "learned" and c["cross"] and c["n_kv"] > c["n_q"],
        lambda c, a, w: (drop(w, "W_P"), a.update(max_positions=c["n_q"])))
    add("max_positions without learned (none)", "attention.max_positions", plain,
        lambda c, a, w: a.update(max_positions=8))
    add("max_positions without learned (sinusoidal)", "attention.max_positions",
        lambda c: c["positions"] == "sinusoidal",
        lambda c, a, w: a.update(max_positions=8))
    add("W_P without learned positions", "weights.W_P", plain,
        lambda c, a, w: w.update(W_P=np.zeros((max(c["n_q"], c["n_kv"]),
                                               c["d_model"])).tolist()))
    add("W_P with rope positions", "weights.W_P",
        lambda c: c["positions"] == "rope",
        lambda c, a, w: w.update(W_P=np.zeros((max(c["n_q"], c["n_kv"]),
                                               c["d_model"])).tolist()))
    # the position shift
    off = "attention.position_offset"
    add("position_offset with positions none", off, plain,
        lambda c, a, w: a.update(position_offset=3))
    add("position_offset 0 with positions none", off, plain,
        lambda c, a, w: a.update(position_offset=0))
    add("position_offset with an explicit positions none", off, plain,
        lambda c, a, w: a.update(positions="none", position_offset=1))
    add("position_offset -1", off, lambda c: c["positions"] == "rope",
        lambda c, a, w: a.update(position_offset=-1))
    add("position_offset 2.5", off, lambda c: c["positions"] == "sinusoidal",
        lambda c, a, w: a.update(position_offset=2.5))
    add("position_offset as a string", off, lambda c: c["positions"] == "rope",
        lambda c, a, w: a.update(position_offset="3"))
    add("position_offset true", off, lambda c: c["positions"] == "learned",
        lambda c, a, w: a.update(position_offset=True))
    add("position_offset 1048577", off, lambda c: c["positions"] == "rope",
        lambda c, a, w: a.update(position_offset=OFFSET_MAX + 1))
    # C <= 4095 with learned follows from C + tokens <= max_positions <= 4096: the
    # binary names either field (it names max_positions, C + tokens).
    add("position_offset 4096 with learned", (off, "attention.max_positions"),
        lambda c: c["positions"] == "learned" and "W_P" in c["omit"]
        and c["max_positions"] is None,
        lambda c, a, w: a.update(position_offset=LEARNED_OFFSET_MAX + 1))
    add("learned max_positions smaller than C + tokens (>= tokens)", "attention.max_positions",
        lambda c: c["positions"] == "learned",
        lambda c, a, w: (drop(w, "W_P"), a.update(
            position_offset=5, max_positions=5 + max(c["n_q"], c["n_kv"]) - 1)))
    add("learned max_positions smaller than C + context", "attention.max_positions",
        lambda c: c["positions"] == "learned" and c["cross"] and c["n_kv"] > c["n_q"],
        lambda c, a, w: (drop(w, "W_P"), a.update(position_offset=4,
                                                  max_positions=4 + c["n_kv"] - 1)))
    add("learned W_P fewer rows than C + tokens (no max_positions)",
        ("attention.max_positions", "weights.W_P", off),
        lambda c: c["positions"] == "learned" and "W_P" not in c["omit"]
        and c["max_positions"] is None,
        lambda c, a, w: a.update(position_offset=len(w["W_P"]) - max(c["n_q"], c["n_kv"]) + 1))
    return cases


NONE_SHIFT = '--position-offset: given, but the positions are "none"'


def invalid_option_cases(configs):
    """(label, base config, options, a word (or a tuple of words, one of which) the
    message must contain)."""
    def first(pred):
        return next((c for c in configs if pred(c)), None)

    def plain(c):
        return c["positions"] == "none" and not c["sparse"]

    return [
        ("--indexer-dim without --top-k on a dense file", first(plain),
         ["--indexer-dim", "2"], "top-k"),
        ("--indexer-heads without --top-k on a dense file", first(plain),
         ["--indexer-heads", "2"], "top-k"),
        ("--positions alibi", first(plain), ["--positions", "alibi"], "positions"),
        ("--positions rope with odd head_dim",
         first(lambda c: plain(c) and c["variant"] == "mha" and c["head_dim"] % 2),
         ["--positions", "rope"], "head_dim"),
        ("--rope-dim 3 on mla", first(lambda c: plain(c) and c["variant"] == "mla"),
         ["--rope-dim", "3"], "rope"),
        ("--rope-dim on a non-mla file", first(lambda c: plain(c) and c["variant"] != "mla"
                                              and c["head_dim"] % 2 == 0),
         ["--rope-dim", "2"], "rope"),
        ("--top-k -1", first(plain), ["--top-k", "-1"], "top"),
        ("--positions rope on mla without --rope-dim",
         first(lambda c: plain(c) and c["variant"] == "mla"), ["--positions", "rope"],
         ("rope_dim", "rope-dim")),
        # the position shift
        ("--position-offset 3 on a plain file", first(plain), ["--position-offset", "3"],
         NONE_SHIFT),
        ("--position-offset 0 on a plain file", first(plain), ["--position-offset", "0"],
         NONE_SHIFT),
        ("--positions none --position-offset 2 on a rope file",
         first(lambda c: c["positions"] == "rope" and not c["offset_written"]),
         ["--positions", "none", "--position-offset", "2"], NONE_SHIFT),
        ("--position-offset -1", first(lambda c: c["positions"] == "rope"),
         ["--position-offset", "-1"], "--position-offset"),
        ("--position-offset 1048577", first(lambda c: c["positions"] == "sinusoidal"),
         ["--position-offset", str(OFFSET_MAX + 1)], "--position-offset"),
        ("--position-offset 2.5", first(lambda c: c["positions"] == "rope"),
         ["--position-offset", "2.5"], "--position-offset"),
        ("--position-offset seven", first(lambda c: c["positions"] == "learned"),
         ["--position-offset", "seven"], "--position-offset"),
        ("--position-offset 4096 on a learned file",
         first(lambda c: c["positions"] == "learned" and "W_P" in c["omit"]
               and c["max_positions"] is None),
         ["--position-offset", "4096"], ("position-offset", "position_offset", "max_positions")),
        ("--positions learned on a sinusoidal file shifted beyond 4095",
         first(lambda c: c["positions"] == "sinusoidal" and c["offset"] > LEARNED_OFFSET_MAX),
         ["--positions", "learned"], ("position-offset", "position_offset", "max_positions")),
    ]


def run_invalid(runner, tally, configs):
    for n, (label, field, doc) in enumerate(invalid_cases(configs)):
        if doc is None:
            tally.add("invalid", False, "invalid %s: no scenario of that kind" % label)
            continue
        name = "invalid_%02d.json" % n
        path = runner.write(name, doc)
        code, _, err = runner.call("trace", path, "--json")
        fields = (field,) if isinstance(field, str) else field
        named = [f for f in fields if f in err]
        ok = code == 2 and bool(named)
        tally.add("invalid", ok, "invalid %s -> exit %d, names %s: %s" % (
            label, code, named[0] if named else "NOT " + " / ".join(fields),
            first_line(err, path)), doc, name)
    for n, (label, base, opts, word) in enumerate(invalid_option_cases(configs)):
        if base is None:
            tally.add("invalid", False, "invalid option %s: no scenario of that kind" % label)
            continue
        doc = scenario_json(base)
        name = "invalid_option_%02d.json" % n
        path = runner.write(name, doc)
        code, _, err = runner.call("trace", path, "--json", *opts)
        words = (word,) if isinstance(word, str) else word
        ok = code == 2 and any(w in err for w in words) and "unknown option" not in err
        tally.add("invalid", ok, "invalid option %s (#%d %s) -> exit %d: %s" % (
            label, base["idx"], " ".join(opts), code, first_line(err, path)), doc,
            name.replace(".json", "__%s.json" % "_".join(o.strip("-") for o in opts)))
    # online arguments
    base = next(c for c in configs if c["kernel"] == "softmax")
    path = runner.write("online_args.json", scenario_json(base))
    code, _, err = runner.call("online", path, "--head", 0, "--row", 0, "--block", 1, "--json")
    if code != 0:
        tally.add("invalid", False, "invalid online arguments: a valid `online` run fails:"
                  " exit %d %s" % (code, first_line(err, path)))
        return
    for label, args in (("--block 0", ["--head", 0, "--row", 0, "--block", 0]),
                        ("--head H", ["--head", base["heads"], "--row", 0, "--block", 1]),
                        ("--row N_Q", ["--head", 0, "--row", base["n_q"], "--block", 1])):
        code, _, err = runner.call("online", path, *args, "--json")
        ok = code == 2 and err.strip() != ""
        tally.add("invalid", ok, "invalid online %s (#%d) -> exit %d: %s" % (
            label, base["idx"], code, first_line(err, path)))


# --------------------------------------------------------------------------
# Coverage
# --------------------------------------------------------------------------

REQUIRED = {
    "kind x positions x sparse": {"%s %s %s" % (k, p, s) for k in KINDS for p in POSITIONS
                                  for s in ("dense", "sparse")},
    "positions x mask": {"%s %s" % (p, m) for p in POSITIONS for m in MASKS},
    "positions x kernel": {"%s %s" % (p, k) for p in POSITIONS for k in ("softmax", "linear")},
    "positions x cross": {"%s %s" % (p, c) for p in POSITIONS for c in ("self", "cross")},
    "sparse x mask": {"sparse %s" % m for m in MASKS},
    "sparse x kernel": {"sparse softmax", "sparse linear"},
    "sparse x cross": {"sparse self", "sparse cross"},
    "n_q": set(range(1, 8)), "d_model": set(range(1, 7)), "heads": set(range(1, 5)),
    "gqa shape": {"G=1", "1<G<H", "G=H"}, "mqa heads > 1": {True},
    "rope head_dim": {2, 4}, "rope_dim": {2, 4}, "top_k": set(range(1, 8)),
    "indexer_heads": {1, 2, 3}, "indexer_dim": {1, 2, 3},
    "weights": {"%s %s" % (n, m) for n in NEW_WEIGHTS for m in ("given", "seeded")},
    "feature": {"top-k tie broken by index", "top-k fewer visible keys than k",
                "top-k cuts", "repeated tokens", "indexer defaults", "rope_base default",
                "learned max_positions > tokens", "learned max_positions default", "W_O",
                "top_k = N_KV + 1",
                "no W_O", "scale off with mla rope", "mla rope odd head_dim",
                "all-masked row with sparse", "override"},
    "position_offset": {"sinusoidal small", "sinusoidal large", "rope small", "rope large",
                        "mla rope small", "mla rope large", "learned small", "learned medium",
                        "learned max_positions given", "learned max_positions default",
                        "learned W_P seeded", "learned W_P given", "cross", "sparse",
                        "linear", "explicit 0", "override"},
    "shift": {"rope mha", "rope gqa", "rope mqa", "rope mla", "rope mla_q", "sinusoidal",
              "learned"},
    "online": {"all-masked row", "m from -inf to finite after a hidden block",
               "hidden block after m finite", "rescale < 1", "one block",
               "three or more blocks"},
}


def note_coverage(seen, cfg, ref, override=False):
    def add(key, val):
        seen.setdefault(key, set()).add(val)
    if override:
        add("feature", "override")
        return
    s = "sparse" if cfg["sparse"] else "dense"
    p = cfg["positions"]
    add("kind x positions x sparse", "%s %s %s" % (cfg["kind"], p, s))
    add("positions x mask", "%s %s" % (p, cfg["mask"]))
    add("positions x kernel", "%s %s" % (p, cfg["kernel"]))
    add("positions x cross", "%s %s" % (p, "cross" if cfg["cross"] else "self"))
    for key in ("n_q", "d_model", "heads"):
        add(key, cfg[key])
    G, H = cfg["kv_heads"], cfg["heads"]
    if cfg["variant"] == "gqa":
        add("gqa shape", "G=1" if G == 1 else "G=H" if G == H else "1<G<H")
    if cfg["variant"] == "mqa" and H > 1:
        add("mqa heads > 1", True)
    if p == "rope" and cfg["variant"] != "mla":
        add("rope head_dim", cfg["head_dim"])
    if cfg["rope_dim"]:
        add("rope_dim", cfg["rope_dim"])
        if not cfg["scale"]:
            add("feature", "scale off with mla rope")
        if cfg["head_dim"] % 2:
            add("feature", "mla rope odd head_dim")
    if p != "none" and cfg["rope_base"] is None:
        add("feature", "rope_base default")
    if p == "learned":
        add("feature", "learned max_positions %s" % (
            "default" if cfg["max_positions"] is None else "> tokens"
            if cfg["max_positions"] > max(cfg["n_q"], cfg["n_kv"]) else "= tokens"))
    add("feature", "W_O" if cfg["wo"] else "no W_O")
    C = cfg.get("offset", 0)
    if p != "none" and C:
        size = "small" if C < 10 else "medium" if C < 1000 else "large"
        add("position_offset", "%s%s %s" % ("mla " if cfg["variant"] == "mla" else "", p, size))
        if cfg["cross"]:
            add("position_offset", "cross")
        if cfg["sparse"]:
            add("position_offset", "sparse")
        if cfg["kernel"] == "linear":
            add("position_offset", "linear")
        if p == "learned":
            add("position_offset", "learned max_positions %s" % (
                "default" if cfg["max_positions"] is None else "given"))
            add("position_offset", "learned W_P %s" % (
                "seeded" if "W_P" in cfg["omit"] else "given"))
    elif p != "none" and cfg.get("offset_written"):
        add("position_offset", "explicit 0")
    for name in NEW_WEIGHTS:
        if name in cfg["W"]:
            add("weights", "%s %s" % (name, "seeded" if name in cfg["omit"] else "given"))
    for key in ("x", "x_kv"):
        m = np.asarray(cfg[key])
        if len({tuple(r) for r in m}) < m.shape[0]:
            add("feature", "repeated tokens")
    if cfg["sparse"]:
        sp = cfg["sparse"]
        add("sparse x mask", "sparse %s" % cfg["mask"])
        add("sparse x kernel", "sparse %s" % cfg["kernel"])
        add("sparse x cross", "sparse %s" % ("cross" if cfg["cross"] else "self"))
        add("top_k", sp["top_k"])
        if sp["top_k"] == cfg["n_kv"] + 1:
            add("feature", "top_k = N_KV + 1")
        _, _, hi, di = resolved(cfg)
        add("indexer_heads", hi)
        add("indexer_dim", di)
        if sp["indexer_heads"] is None or sp["indexer_dim"] is None:
            add("feature", "indexer defaults")
        info = ref["topk_info"]
        if info["tie"]:
            add("feature", "top-k tie broken by index")
        if info["fewer"]:
            add("feature", "top-k fewer visible keys than k")
        if info["cut"]:
            add("feature", "top-k cuts")
        if any(st == "all_masked" for st in ref["heads"][0]["row_status"]):
            add("feature", "all-masked row with sparse")


def coverage_gaps(seen):
    return ["%s %s" % (key, sorted(need - seen.get(key, set()), key=str))
            for key, need in REQUIRED.items() if need - seen.get(key, set())]


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

def main():
    parser = command_line(__doc__, keep="write the scenario files here (failing ones to KEEP/fail)")
    parser.add_argument("--plain-only", action="store_true",
                        help="only positions none / sparse off (a binary without the features)")
    parser.add_argument("--only-new", action="store_true",
                        help="only the reference self-check and the cases of qkv_bias, "
                             "output_bias, rope_pairing and rope_scaling")
    parser.add_argument("--seed", type=int, default=SEED, help="default %(default)s")
    parser.add_argument("--reps", type=int, default=REPS,
                        help="rounds of the 40 variant x positions x sparse combinations "
                             "(default %(default)s; more for a longer soak)")
    parser.add_argument("--save-failures", metavar="DIR",
                        help="copy each failing scenario file to DIR "
                             "(default KEEP/fail with --keep)")
    args = parser.parse_args()
    probe(args.binary)  # exit 2 unless it starts

    global LEGACY
    LEGACY = args.plain_only
    configs = [] if args.only_new else all_configs(args.seed, args.reps)
    if args.plain_only:
        configs = [c for c in configs if c["positions"] == "none" and not c["sparse"]]
    features = [] if args.plain_only else feature_configs()
    with work_folder(args.keep, "positions_crosscheck_") as folder:
        runner = Binary(args.binary, folder, timeout=30)
        tally = Tally(args.save_failures or (os.path.join(args.keep, "fail") if args.keep else None))
        fails = self_check()
        tally.add("self-check", not fails, "reference self-check (rotate_half, llama3, biases, "
                  "norms)" + ("" if not fails else error_lines(fails, 6)))
        seen = {}
        try:
            refs = run_configs(runner, tally, configs, seen, args.plain_only)
            if not args.plain_only and not args.only_new:
                run_overrides(runner, tally, configs, seen)
                run_shift(runner, tally, configs, seen)
                run_online(runner, tally, configs, refs, seen)
                run_invalid(runner, tally, configs)
            if features:
                run_configs(runner, tally, features, seen, False, features=True)
                run_feature_invalid(runner, tally, features, seen.get("accepted", set()))
        except (OSError, subprocess.SubprocessError) as e:
            return cannot_run(args.binary, e)
    print()
    for group, (ok, bad) in tally.groups.items():
        print("%-17s %4d agree, %d disagree" % (group + ":", ok, bad))
    gaps = [] if args.plain_only or args.only_new else coverage_gaps(seen)
    if features and FEATURE_REQUIRED - seen.get("features", set()):
        gaps.append("features %s" % sorted(FEATURE_REQUIRED - seen.get("features", set())))
    print("coverage: " + ("complete" if not gaps else "MISSING " + "; ".join(gaps)))
    print("%d configurations checked (%d scenario files, %d feature cases, %d overridden), "
          "%d binary runs" % (tally.configs, len(configs), len(features),
                              tally.configs - len(configs) - len(features), runner.runs))
    return 0 if tally.failed() == 0 and not gaps else 1


if __name__ == "__main__":
    sys.exit(main())
