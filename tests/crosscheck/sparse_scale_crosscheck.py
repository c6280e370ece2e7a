#!/usr/bin/python3
"""Independent NumPy cross-check of DeepSeek Sparse Attention on long rows.

positions_crosscheck.py checks sparse attention on scenarios of at most 8
tokens.  The engine's top-k selection (sampling + quickselect) and its path
that computes the softmax and the weighted values over only each row's
selected keys only start on long rows (hundreds of visible keys) with few of
them selected, so this script checks scenarios of 300 to 700 tokens: written
from the specification only (docs/FORMATS.md "Scenario files",
attention.sparse), never from the C++ sources.

  indexer  I[i, j] = sum_h w[i, h] ReLU(q^I[i, h] . k^I[j]),  w = X W_wI,
           q^I = X W_QI (head h = columns h d_I .. (h+1) d_I - 1),
           k^I = X_kv W_KI; -inf (JSON null) where the mask hides j.
  select   per query, the top_k largest I among the visible keys, ties to
           the lower j (fewer visible than top_k: all of them), done here with
           a plain stable sort on the key (-I, j); one set per query, shared
           by every head, whose mask becomes mask AND selected.
  heads    scores = q k^T, scaled (/ sqrt(d)), masked (-inf where hidden;
           0 for the linear kernel), softmax or linear weights (hidden: 0),
           output = weights v, concat, W_O.

Twelve seeded configurations (fixed seed) cover causal, none, sliding-window
and custom masks (half the cells hidden, plus an all-hidden row and rows with
exactly top_k, top_k + 1 and one visible key), cross-attention, mha / gqa /
mqa, the linear kernel, top_k 1, 8, 40, 64, N_KV / 2 and > N_KV (dense
equivalence); massive exact ties (W_wI = 0, embeddings from six repeated
rows, a W_KI of one non-zero column so that ReLU gives 0 for half the keys)
and indexer scores strictly increasing or decreasing with j.  The tie and
ordered configurations use multiples of 1/8, so that every indexer score is
exact in float64 whatever the summation order and a tie in the reference is a
tie in the binary.  A few configurations are also decoded (`decode --json`):
each step's indexer scores, selection, weights and output are row t of the
reference with the mask AND causal.

Compared: indexer q, k, w, scores (1e-9 relative + absolute, -inf where
hidden) and selected (exact); per head the mask (exact), q, k, v, scores,
scaled, masked, weights (1e-9 absolute, and exactly 0 where hidden), output,
row_max, row_sum, entropy, row_status and contribution; concat and output
(1e-9 relative + absolute).  Above 250,000 attention cells (N_Q N_KV H) each
head's "scores" and "scaled" are cut from the JSON text before it is parsed
(parsing is most of the time): "masked" repeats them at every visible key.

Where two candidate scores straddle a row's cut within 1e-12 (relative, not
exactly equal), the reference's float rounding could pick either: that row's
selection is not compared (the count is printed), and if the binary's row is
one of the admissible choices it is followed downstream.  Exact ties are
always compared.

Run:  /usr/bin/python3 sparse_scale_crosscheck.py --binary build/app/attention-lab
      [--only NAME[,NAME]]   a subset of the configurations
      [--save-failures DIR]  copy each failing scenario file to DIR

Exit status: 0 all agree, 1 any mismatch, 2 the binary cannot be run.
The binary of the next configuration runs while this one is checked, so the
whole check takes 12 to 18 s on two cores.
"""

import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import (cannot_run, command_line, indexer_scores, mask_matrix,  # noqa: E402
                       multi_head, probe, reject_constant, top_k, values, work_folder)

SEED = 5150
TOL = 1e-9              # absolute, and relative where values grow
NEAR = 1e-12            # near-tie band at a row's cut (relative to max(1, |cut|))
LONG_ROW = 256          # a long row: this many visible keys (and top_k at most a quarter)
LIGHT_CELLS = 250000    # above N_Q N_KV H cells, a head's scores and scaled are not parsed
SHOW = 4                # mismatching cells printed per field
TIMEOUT = 120           # seconds per binary run


# --------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------

def base_config(name, note, n_q, d_model, heads, head_dim, mask, top_k, *, n_kv=None,
                kv_heads=None, variant="mha", kernel="softmax", scale=True, wo=True,
                window=None, indexer_heads=1, indexer_dim=None, write_indexer=True,
                decode=False, expect=()):
    """expect: what the reference's rows must exercise (see select_top_k and
    order_features), beyond "cut" and "long row, few selected" for every
    top_k <= 64."""
    cross = n_kv is not None
    if top_k <= 64:
        expect = ("cut", "long row, few selected") + tuple(expect)
    return {
        "name": name, "note": note, "n_q": n_q, "n_kv": n_kv if cross else n_q,
        "cross": cross, "d_model": d_model, "heads": heads,
        "kv_heads": kv_heads or (1 if variant == "mqa" else heads), "variant": variant,
        "head_dim": head_dim, "mask": mask, "window": window, "kernel": kernel,
        "scale": scale, "wo": wo, "top_k": top_k, "hi": indexer_heads,
        "di": indexer_dim or head_dim, "write_indexer": write_indexer, "decode": decode,
        "expect": expect,
    }


def shapes(cfg):
    dm, H, G, d = cfg["d_model"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    s = {"W_Q": (dm, H * d), "W_K": (dm, G * d), "W_V": (dm, G * d),
         "W_QI": (dm, cfg["hi"] * cfg["di"]), "W_KI": (dm, cfg["di"]), "W_wI": (dm, cfg["hi"])}
    if cfg["wo"]:
        s["W_O"] = (H * d, dm)
    return s


def fill_random(cfg, rng, x_rng=(-1.0, 1.0), w_rng=(-0.5, 0.5), step=None):
    """Embeddings and weights: three decimals (or multiples of step)."""
    cfg["x"] = values(rng, (cfg["n_q"], cfg["d_model"]), *x_rng, step)
    cfg["x_kv"] = values(rng, (cfg["n_kv"], cfg["d_model"]), *x_rng, step) \
        if cfg["cross"] else cfg["x"]
    cfg["W"] = {}
    for name, shape in shapes(cfg).items():
        lo_hi = (-1.0, 1.0) if name in ("W_QI", "W_KI", "W_wI") else w_rng
        cfg["W"][name] = values(rng, shape, *lo_hi, step)


def custom_holes(rng, n_q, n_kv, k):
    """About half the cells hidden; row 0 hides everything, rows 1, 2, 3 see
    exactly k, k + 1 and 1 keys, row 4 sees every key."""
    m = (rng.random((n_q, n_kv)) < 0.5).astype(int)
    m[0] = 0
    for r, count in ((1, k), (2, k + 1), (3, 1)):
        m[r] = 0
        m[r, rng.choice(n_kv, size=count, replace=False)] = 1
    m[4] = 1
    return m


def ordered_config(cfg, rng, ramp):
    """Indexer scores strictly monotone in j: X_kv[j] = [1, s_j, r_j], W_QI and
    W_wI read only column 0 (the same q^I and w > 0 for every query), W_KI only
    columns 0 and 1, with q.a > 0, q.b > 0 and q.a > q.b, so that
    I[i, j] = sum_h w_h (q_h.a + s_j q_h.b) grows with s_j.  The random
    columns r drive the attention heads.  Multiples of 1/8 (s_j of 1/1024):
    every indexer score is exact."""
    dm, hi, di = cfg["d_model"], cfg["hi"], cfg["di"]

    def side(n, s):
        x = values(rng, (n, dm), -1.0, 1.0, 0.125)
        x[:, 0] = 1.0
        x[:, 1] = s
        return x

    n_kv = cfg["n_kv"]
    s_kv = ramp(np.arange(n_kv)) / 1024.0
    cfg["x"] = side(cfg["n_q"], ramp(np.arange(cfg["n_q"])) / 1024.0)
    cfg["x_kv"] = side(n_kv, s_kv) if cfg["cross"] else cfg["x"]
    fill_weights_only(cfg, rng, step=0.125)
    W = cfg["W"]
    W["W_QI"][:] = 0.0
    W["W_QI"][0] = 1.0                               # q_h = (1, ..., 1)
    W["W_KI"][:] = 0.0
    W["W_KI"][0] = 1.0                               # a = (1, ..., 1)
    W["W_KI"][1] = values(rng, (di,), 0.125, 0.5, 0.125)   # b > 0, q.a > q.b
    W["W_wI"][:] = 0.0
    W["W_wI"][0] = values(rng, (hi,), 0.25, 1.0, 0.125)    # w > 0
    # the attention heads read only the random columns (2 ..)
    for name in ("W_Q", "W_K", "W_V"):
        W[name][:2] = 0.0


def fill_weights_only(cfg, rng, step=None):
    cfg["W"] = {}
    for name, shape in shapes(cfg).items():
        lo_hi = (-1.0, 1.0) if name in ("W_QI", "W_KI", "W_wI") else (-0.5, 0.5)
        cfg["W"][name] = values(rng, shape, *lo_hi, step)


def all_configs():
    configs = []

    def add(cfg, fill):
        rng = np.random.default_rng([SEED, len(configs)])
        fill(cfg, rng)
        configs.append(cfg)

    # --- random values (three decimals), every mask, the variants ---
    add(base_config("causal-k40", "mha, causal, 2 indexer heads", 400, 24, 1, 12, "causal", 40,
                    indexer_heads=2, indexer_dim=8, decode=True, expect=("fewer than top_k",)),
        fill_random)
    add(base_config("full-k1", "mask none, top_k 1, indexer defaults (1 head, d_I = head_dim)",
                    700, 16, 1, 16, "none", 1, write_indexer=False, decode=True),
        fill_random)
    add(base_config("window-gqa-k64", "gqa 4 heads / 2 kv heads, sliding window 256", 320, 32, 4,
                    8, "sliding_window", 64, kv_heads=2, variant="gqa", window=256,
                    indexer_heads=4, indexer_dim=8),
        fill_random)

    def custom(cfg, rng):
        cfg["custom_mask"] = custom_holes(rng, cfg["n_q"], cfg["n_kv"], cfg["top_k"])
        fill_random(cfg, rng)
    add(base_config("custom-holes-k8", "custom mask, half the cells hidden, no W_O", 520, 20, 1,
                    10, "custom", 8, wo=False, indexer_heads=3, indexer_dim=4,
                    expect=("nothing visible", "fewer than top_k")),
        custom)
    add(base_config("linear-causal-k8", "linear kernel, scale off, non-negative inputs", 300, 16,
                    2, 8, "causal", 8, kernel="linear", scale=False, indexer_heads=2,
                    indexer_dim=4),
        lambda c, r: fill_random(c, r, x_rng=(0.0, 1.0), w_rng=(0.0, 0.5)))
    add(base_config("cross-mqa-half", "cross-attention 300 x 560, mqa, top_k = N_KV / 2, no W_O",
                    300, 16, 2, 8, "none", 280, n_kv=560, variant="mqa", wo=False,
                    indexer_heads=2, indexer_dim=4, decode=True, expect=("cut",)),
        fill_random)
    add(base_config("dense-equiv", "top_k = T + 7: the selection is the mask, weights dense",
                    310, 24, 2, 8, "causal", 317, indexer_dim=8, expect=("selection = mask",)),
        fill_random)

    # --- exact ties (multiples of 1/8: every indexer score exact) ---
    def wi_zero(cfg, rng):
        fill_random(cfg, rng, x_rng=(-2.0, 2.0), step=0.125)
        cfg["W"]["W_wI"][:] = 0.0
    add(base_config("ties-wI-zero", "W_wI = 0: every score 0, the lowest visible j win", 500, 16,
                    1, 8, "causal", 64, indexer_heads=2, indexer_dim=4, decode=True,
                    expect=("all scores 0", "tie at cut")),
        wi_zero)

    def repeated(cfg, rng):
        fill_random(cfg, rng, x_rng=(-2.0, 2.0), step=0.125)
        rows = values(rng, (6, cfg["d_model"]), -2.0, 2.0, 0.125)
        cfg["x"] = rows[rng.integers(0, 6, size=cfg["n_q"])]
        cfg["x_kv"] = cfg["x"]
    add(base_config("ties-repeated", "embeddings from 6 distinct rows: groups of ~80 equal keys",
                    480, 16, 1, 8, "none", 40, indexer_heads=2, indexer_dim=8,
                    expect=("tie at cut",)),
        repeated)

    def relu_zero(cfg, rng):
        fill_random(cfg, rng, x_rng=(-2.0, 2.0), step=0.125)
        W = cfg["W"]
        col = W["W_KI"][:, 0].copy()
        W["W_KI"][:] = 0.0
        W["W_KI"][:, 0] = col               # k^I = (kappa_j, 0, ...): q.k = q_0 kappa_j
    add(base_config("ties-relu-zero", "W_KI with one non-zero column: ReLU = 0 for half the keys",
                    450, 16, 1, 8, "causal", 64, indexer_heads=2, indexer_dim=8, decode=True,
                    expect=("tie at cut",)),
        relu_zero)

    # --- indexer scores ordered by j ---
    add(base_config("increasing", "I strictly increasing in j: the last top_k visible keys",
                    700, 16, 1, 8, "causal", 8, indexer_heads=2, indexer_dim=4,
                    expect=("rising in j",)),
        lambda c, r: ordered_config(c, r, lambda j: j + 1.0))

    def decreasing(cfg, rng):
        ordered_config(cfg, rng, lambda j: 600.0 - j)
    add(base_config("decreasing-cross", "cross 300 x 540, I strictly decreasing in j", 300, 16, 1,
                    8, "none", 64, n_kv=540, indexer_heads=2, indexer_dim=4, decode=True,
                    expect=("falling in j",)),
        decreasing)
    return configs


def scenario_json(cfg):
    att = {"variant": cfg["variant"], "heads": cfg["heads"], "head_dim": cfg["head_dim"],
           "mask": cfg["mask"], "scale": cfg["scale"], "kernel": cfg["kernel"],
           "output_projection": cfg["wo"]}
    if cfg["variant"] != "mha":
        att["kv_heads"] = cfg["kv_heads"]
    if cfg["mask"] == "sliding_window":
        att["window"] = cfg["window"]
    if cfg["mask"] == "custom":
        att["custom_mask"] = np.asarray(cfg["custom_mask"]).astype(int).tolist()
    att["sparse"] = {"top_k": cfg["top_k"]}
    if cfg["write_indexer"]:
        att["sparse"].update(indexer_heads=cfg["hi"], indexer_dim=cfg["di"])
    doc = {"name": "sparse scale crosscheck " + cfg["name"], "description": cfg["note"],
           "tokens": ["q%d" % i for i in range(cfg["n_q"])], "embeddings": cfg["x"].tolist(),
           "attention": att, "weights": {k: v.tolist() for k, v in cfg["W"].items()},
           "seed": 3}
    if cfg["cross"]:
        doc["context"] = {"tokens": ["c%d" % j for j in range(cfg["n_kv"])],
                          "embeddings": cfg["x_kv"].tolist()}
    return doc


def describe(cfg):
    v = cfg["variant"] + ("(G=%d)" % cfg["kv_heads"] if cfg["variant"] != "mha" else "")
    return "%-17s nq=%d nkv=%d dm=%d %s H=%d d=%d mask=%s%s %s top_k=%d H_I=%d d_I=%d" % (
        cfg["name"], cfg["n_q"], cfg["n_kv"], cfg["d_model"], v, cfg["heads"], cfg["head_dim"],
        cfg["mask"], "(%d)" % cfg["window"] if cfg["window"] else "", cfg["kernel"],
        cfg["top_k"], cfg["hi"], cfg["di"])


# --------------------------------------------------------------------------
# Reference
# --------------------------------------------------------------------------

def select_top_k(I, visible, k):
    """Per row: the k largest visible I (reference.top_k).  Returns the 0/1
    selection, for rows whose cut is a near tie the band (lo, hi, count)
    within which the binary may choose otherwise, and what the rows
    exercised (rows cut, exact ties at the cut, long rows, ...)."""
    sel, orders = top_k(I, visible, k)
    near = {}
    seen = dict.fromkeys(("cut", "tie at cut", "fewer than top_k", "nothing visible",
                          "long row, few selected"), 0)
    for i, order in enumerate(orders):
        s, n_vis = I[i, order], len(order)
        seen["nothing visible"] += n_vis == 0
        seen["long row, few selected"] += n_vis >= LONG_ROW and k * 4 <= n_vis
        if n_vis <= k:
            seen["fewer than top_k"] += n_vis > 0
            continue
        c, n = I[i, order[k - 1]], I[i, order[k]]
        seen["cut"] += 1
        seen["tie at cut"] += c == n
        eps = NEAR * max(1.0, abs(c))
        if c - n <= eps:
            band = s[(s >= n - eps) & (s <= c + eps)]
            if np.unique(band).size > 1:        # not one exactly tied value: a near tie
                near[i] = (n - eps, c + eps, k)
    return sel, near, seen


def order_features(I, visible):
    """Rows whose visible indexer scores rise (fall) strictly with j, and rows all 0."""
    seen = {"rising in j": 0, "falling in j": 0, "all scores 0": 0}
    for i in range(I.shape[0]):
        s = I[i, visible[i] == 1]
        if s.size >= 2:
            seen["rising in j"] += bool((np.diff(s) > 0).all())
            seen["falling in j"] += bool((np.diff(s) < 0).all())
        seen["all scores 0"] += bool(s.size and (s == 0).all())
    return seen


def admissible(I_row, vis_row, got_row, band):
    """Is the binary's selection of a near-tie row one a rounding could give?"""
    lo, hi, k = band
    if not np.isin(got_row, (0.0, 1.0)).all():
        return False
    pick, vis = got_row == 1, vis_row == 1
    if pick.sum() != k or (pick & ~vis).any():
        return False
    must = vis & (I_row > hi)           # clearly above the cut: selected
    never = I_row < lo                  # clearly below it: not selected
    return bool((pick[must]).all() and not pick[never].any())


def reference(cfg, base_mask, follow=None):
    """Every intermediate from the formulas.  follow: {row: binary's selection
    row} for admissible near-tie rows."""
    ix = indexer_scores(cfg["x"], cfg["x_kv"], cfg["W"], cfg["hi"], cfg["di"])
    sel, near, seen = select_top_k(ix["I"], base_mask, cfg["top_k"])
    seen.update(order_features(ix["I"], base_mask))
    seen["selection = mask"] = int(np.array_equal(sel, base_mask))
    for r, row in (follow or {}).items():
        sel[r] = row
    combined = base_mask * sel
    W = cfg["W"]
    Q, K, V = cfg["x"] @ W["W_Q"], cfg["x_kv"] @ W["W_K"], cfg["x_kv"] @ W["W_V"]
    _, heads, concat, output = multi_head(cfg, Q, K, V, combined, W)
    return {"indexer": ix, "I": np.where(base_mask == 1, ix["I"], -np.inf), "selected": sel,
            "near": near, "seen": seen, "base_mask": base_mask, "heads": heads, "concat": concat,
            "output": output,
            "scale_factor": 1.0 / math.sqrt(cfg["head_dim"]) if cfg["scale"] else 1.0}


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

class Checks:
    """Every mismatch of one configuration, each with its place."""

    def __init__(self, name):
        self.name = name
        self.lines = []
        self.fields = 0
        self.max_err = 0.0

    def fail(self, msg):
        self.lines.append("  [%s] %s" % (self.name, msg))

    def array(self, found, where, null=np.nan):
        """JSON rows -> float array (null -> `null`), or None after a mismatch."""
        if isinstance(found, np.ndarray):
            return found
        if not isinstance(found, list):
            self.fail("%s: expected an array, found %s" % (where, type(found).__name__))
            return None
        try:
            a = np.array(found, dtype=float)
        except (ValueError, TypeError) as e:
            self.fail("%s: not a numeric array (%s)" % (where, e))
            return None
        if null is not np.nan:
            a[np.isnan(a)] = null
        return a

    def cmp(self, expected, found, where, rel=TOL, null=np.nan, exact=False, exact_where=None):
        """|e - f| <= TOL + rel |e| (exact, or where exact_where: e == f);
        infinities and null match exactly.  Reports the count and the first
        cells (row, column)."""
        self.fields += 1
        exp = np.asarray(expected, dtype=float)
        got = self.array(found, where, null)
        if got is None:
            return False
        if got.shape != exp.shape:
            self.fail("%s: shape %s, expected %s" % (where, got.shape, exp.shape))
            return False
        same = (exp == got) | (np.isnan(exp) & np.isnan(got))
        if exact:
            bad = ~same
        else:
            fin = np.isfinite(exp) & np.isfinite(got)
            with np.errstate(invalid="ignore"):
                diff = np.where(fin, np.abs(exp - got), 0.0)
            bad = ~same & (~fin | (diff > TOL + rel * np.abs(np.where(fin, exp, 0.0))))
            if exact_where is not None:
                bad |= exact_where & ~same
            if fin.any():
                self.max_err = max(self.max_err, float(diff[fin].max()))
        if not bad.any():
            return True
        cells = np.argwhere(bad)
        self.fail("%s: %d of %d cells differ%s" % (
            where, len(cells), exp.size, " (exact)" if exact else
            " (tolerance %g + %g |expected|%s)" % (
                TOL, rel, "; exactly where hidden" if exact_where is not None else "")))
        for pos in cells[:SHOW]:
            pos = tuple(int(p) for p in pos)
            at = "row %d, column %d" % pos if len(pos) == 2 else "row %d" % pos[0]
            self.fail("    %s %s: expected %r, found %r" % (where, at, float(exp[pos]),
                                                          float(got[pos])))
        return False

    def eq(self, expected, found, where):
        self.fields += 1
        if expected != found:
            if isinstance(expected, list) and isinstance(found, list) \
                    and len(expected) == len(found):
                rows = [r for r, (e, f) in enumerate(zip(expected, found)) if e != f]
                self.fail("%s: %d rows differ" % (where, len(rows)))
                for r in rows[:SHOW]:
                    self.fail("    %s row %d: expected %r, found %r" % (
                        where, r, expected[r], found[r]))
            else:
                self.fail("%s: expected %r, found %r" % (where, expected, found))


def check_selection(ref, found_sel, chk, where):
    """selected, exactly, outside near-tie rows; returns ({row: followed row},
    rows skipped)."""
    got = chk.array(found_sel, where + "selected")
    if got is None:
        return {}, 0
    exp = ref["selected"]
    if got.shape != exp.shape:
        chk.fail("%sselected: shape %s, expected %s" % (where, got.shape, exp.shape))
        return {}, 0
    follow, skipped = {}, 0
    cmp_rows = np.ones(exp.shape[0], dtype=bool)
    for r, band in ref["near"].items():
        cmp_rows[r] = False
        skipped += 1
        if np.array_equal(got[r], exp[r]):
            continue
        if admissible(ref["indexer"]["I"][r], ref["base_mask"][r], got[r], band):
            follow[r] = got[r].copy()
        else:
            chk.fail("%sselected row %d (near tie): %s is not a top-%d choice" % (
                where, r, np.flatnonzero(got[r]).tolist(), band[2]))
    chk.cmp(np.where(cmp_rows[:, None], exp, 0.0), np.where(cmp_rows[:, None], got, 0.0),
            where + "selected", exact=True)
    return follow, skipped


EVERY_ROW = ("rising in j", "falling in j", "all scores 0")


def coverage_gaps(cfg, ref):
    """What the configuration claims to exercise and its reference does not."""
    gaps = []
    for f in cfg["expect"]:
        n = ref["seen"].get(f, 0)
        if n == 0 or (f in EVERY_ROW and n < cfg["n_q"] - 1):
            gaps.append("%s (%d rows)" % (f, n))
    return gaps


def check_trace(cfg, out, chk, stripped=False):
    """One `trace --json` against the reference; returns (reference, near-tie
    rows skipped).  stripped: the heads' scores and scaled were not parsed."""
    chk.eq(["q%d" % i for i in range(cfg["n_q"])], out.get("tokens"), "tokens")
    att = out.get("attention") or {}
    chk.eq({"top_k": cfg["top_k"], "indexer_heads": cfg["hi"], "indexer_dim": cfg["di"]},
           att.get("sparse"), "attention.sparse")
    echoed = out.get("weights") or {}
    for name, value in cfg["W"].items():
        chk.cmp(value, echoed.get(name), "weights." + name, exact=True)
    chk.cmp(cfg["x"], out.get("x"), "x", exact=True)
    chk.cmp(cfg["x_kv"], out.get("x_kv"), "x_kv", exact=True)
    base = mask_matrix(cfg)
    ref = reference(cfg, base)
    ix = out.get("indexer")
    if not isinstance(ix, dict):
        chk.fail("indexer: missing from the output")
        return ref, 0
    follow, skipped = check_selection(ref, ix.get("selected"), chk, "indexer.")
    if follow:
        ref = reference(cfg, base, follow)
    for f in ("q", "k", "w"):
        chk.cmp(ref["indexer"][f], ix.get(f), "indexer." + f)
    chk.cmp(ref["I"], ix.get("scores"), "indexer.scores", null=-np.inf)
    chk.cmp([ref["scale_factor"]], [out.get("scale_factor")], "scale_factor")
    heads = out.get("heads")
    if not isinstance(heads, list) or len(heads) != cfg["heads"]:
        chk.fail("heads: expected %d entries" % cfg["heads"])
        return ref, skipped
    softmax = cfg["kernel"] == "softmax"
    for h, (rh, fh) in enumerate(zip(ref["heads"], heads)):
        w = "heads[%d]." % h
        if not isinstance(fh, dict):
            chk.fail(w + ": not an object")
            continue
        chk.eq(rh["kv_head"], fh.get("kv_head"), w + "kv_head")
        chk.cmp(rh["mask"], fh.get("mask"), w + "mask (= mask AND selected)", exact=True)
        for f in ("q", "k", "v", "scores", "scaled", "output", "row_max", "row_sum"):
            if not (stripped and f in STRIPPED):
                chk.cmp(rh[f], fh.get(f), w + f)
        chk.cmp(rh["masked"], fh.get("masked"), w + "masked", null=-np.inf if softmax else np.nan)
        # hidden keys (outside mask AND selected) weigh exactly 0
        chk.cmp(rh["weights"], fh.get("weights"), w + "weights", rel=0.0,
                exact_where=rh["mask"] == 0)
        chk.cmp(rh["entropy"], fh.get("entropy"), w + "entropy")
        chk.eq(rh["row_status"], fh.get("row_status"), w + "row_status")
        if "contribution" in rh:
            chk.cmp(rh["contribution"], fh.get("contribution"), w + "contribution")
        elif "contribution" in fh:
            chk.fail(w + "contribution: present without W_O")
    chk.cmp(ref["concat"], out.get("concat"), "concat")
    chk.cmp(ref["output"], out.get("output"), "output")
    return ref, skipped


def check_decode(cfg, out, chk):
    """`decode --json`: step t is row t of the reference with the file's mask
    AND causal (self-attention; cross-attention keeps the file's mask)."""
    base = mask_matrix(cfg)
    if not cfg["cross"]:
        base = base * (np.arange(cfg["n_kv"])[None, :] <= np.arange(cfg["n_q"])[:, None])
    ref = reference(cfg, base)
    steps = out.get("steps")
    if not isinstance(steps, list) or len(steps) != cfg["n_q"]:
        chk.fail("decode: steps: expected %d entries" % cfg["n_q"])
        return 0
    L = [cfg["n_kv"] if cfg["cross"] else t + 1 for t in range(cfg["n_q"])]

    def padded(key, fill):
        rows = []
        for t, st in enumerate(steps):
            row = st.get(key) if isinstance(st, dict) else None
            if not isinstance(row, list) or len(row) != L[t]:
                chk.fail("decode: steps[%d].%s: expected %d entries" % (t, key, L[t]))
                return None
            rows.append(row + [fill] * (cfg["n_kv"] - L[t]))
        return rows

    sel = padded("selected", 0.0)
    if sel is None:
        return 0
    follow, skipped = check_selection(ref, sel, chk, "decode: steps[t].")
    if follow:
        ref = reference(cfg, base, follow)
    scores = padded("indexer_scores", None)
    if scores is not None:
        chk.cmp(ref["I"], scores, "decode: steps[t].indexer_scores", null=-np.inf)
    outputs = [st.get("output") for st in steps]
    chk.cmp(ref["output"], outputs, "decode: steps[t].output")
    for h, rh in enumerate(ref["heads"]):
        rows = []
        for t, st in enumerate(steps):
            wts = st.get("weights")
            row = wts[h] if isinstance(wts, list) and len(wts) == cfg["heads"] else None
            if not isinstance(row, list) or len(row) != L[t]:
                chk.fail("decode: steps[%d].weights[%d]: expected %d entries" % (t, h, L[t]))
                rows = None
                break
            rows.append(row + [0.0] * (cfg["n_kv"] - L[t]))
        if rows is not None:
            chk.cmp(rh["weights"], rows, "decode: steps[t].weights[%d]" % h, rel=0.0)
    chk.eq([[rh["row_status"][t] for rh in ref["heads"]] for t in range(cfg["n_q"])],
           [st.get("row_status") for st in steps], "decode: steps[t].row_status")
    return skipped


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

STRIPPED = ("scores", "scaled")


def strip_head_fields(text, heads):
    """The JSON text without each head's "scores" and "scaled" (the dense
    values before the mask, which "masked" repeats wherever a key is visible),
    so that a big trace parses in half the time.  Returns (text, True), or the
    text unchanged and False if it is not laid out as expected (compact, each
    field a matrix followed by another field)."""
    at = text.find('"heads":[')
    if at < 0:
        return text, False
    keys = ['"%s":[[' % f for f in STRIPPED]
    pieces, pos, count = [text[:at]], at, 0
    while True:
        hits = [(i, k) for i, k in ((text.find(k, pos), k) for k in keys) if i >= 0]
        if not hits:
            break
        i, _ = min(hits)
        end = text.find("]]", i) + 2
        if end < 2 or text[end:end + 1] != ",":
            return text, False
        pieces.append(text[pos:i])
        pos, count = end + 1, count + 1
    pieces.append(text[pos:])
    if count != heads * len(STRIPPED):
        return text, False
    return "".join(pieces), True


class Job:
    """One run of the binary, its output in a file."""

    def __init__(self, binary, folder, cfg, command):
        self.binary, self.cfg, self.command = binary, cfg, command
        stem = os.path.join(folder, "%s.%s" % (cfg["name"], command))
        self.scenario = os.path.join(folder, cfg["name"] + ".json")
        self.out_path, self.err_path = stem + ".out", stem + ".err"
        self.proc = None
        self.light = command == "trace" and \
            cfg["n_q"] * cfg["n_kv"] * cfg["heads"] > LIGHT_CELLS

    def start(self):
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen([self.binary, self.command, self.scenario, "--json"],
                                         stdout=out, stderr=err)

    def wait(self):
        """'' when the run ended with exit 0, else what went wrong."""
        try:
            code = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "timed out after %d s" % TIMEOUT
        if code != 0:
            with open(self.err_path) as f:
                return "exit code %d: %s" % (code, f.read().strip()[:400])
        return ""

    def load(self):
        """(parsed JSON or None, message, stripped)."""
        try:
            with open(self.out_path, "rb") as f:
                text = f.read().decode("utf-8")
            os.remove(self.out_path)
            stripped = False
            if self.light:
                text, stripped = strip_head_fields(text, self.cfg["heads"])
            return json.loads(text, parse_constant=reject_constant), "", stripped
        except ValueError as e:
            return None, "output is not JSON: %s" % e, False


def main():
    parser = command_line(__doc__)
    parser.add_argument("--only", help="comma-separated configuration names")
    parser.add_argument("--save-failures", metavar="DIR",
                        help="copy each failing scenario file to DIR")
    args = parser.parse_args()
    probe(args.binary)  # exit 2 unless it starts

    start = time.time()
    configs = all_configs()
    if args.only:
        names = args.only.split(",")
        configs = [c for c in configs if c["name"] in names]
        if not configs:
            print("error: no configuration named %s" % args.only, file=sys.stderr)
            return 2
    failed = skipped_total = 0
    with work_folder(None, "sparse_scale_crosscheck_") as folder:
        try:
            for cfg in configs:
                with open(os.path.join(folder, cfg["name"] + ".json"), "w") as f:
                    f.write(json.dumps(scenario_json(cfg)))
            jobs = [Job(args.binary, folder, cfg, cmd) for cfg in configs for cmd in
                    (("trace", "decode") if cfg["decode"] else ("trace",))]
            # The next run starts as soon as one ends, and runs while that one is checked.
            jobs[0].start()
            for n, job in enumerate(jobs):
                cfg, cmd = job.cfg, job.command
                msg = job.wait()
                if n + 1 < len(jobs):
                    jobs[n + 1].start()
                data, stripped = None, False
                if not msg:
                    data, msg, stripped = job.load()
                chk = Checks(cfg["name"] + (" decode" if cmd == "decode" else ""))
                skipped, note = 0, ""
                if data is None:
                    chk.fail("`%s %s.json --json`: %s" % (cmd, cfg["name"], msg))
                elif cmd == "trace":
                    ref, skipped = check_trace(cfg, data, chk, stripped)
                    seen = ref["seen"]
                    note = "; rows: %d cut, %d exact ties at the cut, %d long" % (
                        seen["cut"], seen["tie at cut"], seen["long row, few selected"])
                    gaps = coverage_gaps(cfg, ref)
                    if gaps:
                        chk.fail("coverage: the configuration does not exercise " + ", ".join(gaps))
                    if stripped:
                        note += "; heads' scores, scaled not parsed"
                else:
                    skipped = check_decode(cfg, data, chk)
                del data
                skipped_total += skipped
                ok = not chk.lines
                print("%s %-6s %s  %d fields, max_err=%.1e%s%s" % (
                    "ok  " if ok else "FAIL", cmd, describe(cfg), chk.fields, chk.max_err, note,
                    ", %d near-tie rows' selection not compared" % skipped if skipped else ""))
                sys.stdout.flush()
                if not ok:
                    failed += 1
                    for line in chk.lines[:60]:
                        print(line)
                    if len(chk.lines) > 60:
                        print("  [%s] ... %d more lines" % (cfg["name"], len(chk.lines) - 60))
                    if args.save_failures:
                        os.makedirs(args.save_failures, exist_ok=True)
                        shutil.copy(job.scenario, args.save_failures)
        except OSError as e:
            return cannot_run(args.binary, e)
    print("%d runs checked, %d failed; %d near-tie rows skipped; %.1f s" % (
        len(jobs), failed, skipped_total, time.time() - start))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
