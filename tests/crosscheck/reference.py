"""The NumPy reference every cross-check script computes with, held once.

Written from the specification only (README "Scenario files", "Models",
docs/), never from the C++ sources, so that a misreading of the maths in the
engine does not repeat itself here.  Everything is float64 (angles in extended
precision) and row-vector: X W, one row a token.

What it holds:
- attention: masks, scores, scale, the softmax and linear kernels, weights,
  entropy, outputs, and the variants (mha, gqa, mqa, mla with its absorbed
  form) in `reference`; the blockwise online softmax in `online_reference`;
- positions: sinusoidal rows, learned rows, RoPE (pairs interleaved or
  rotate_half, inverse frequencies optionally rescaled by Llama 3's
  rope_scaling) and mla's decoupled RoPE;
- the q / k / v biases (added before RoPE turns q and k) and the output
  bias (after W_O);
- sparse attention: the lightning indexer and its top-k selection;
- the model: layer norm and RMS norm (with the model's norm_eps), the
  feed-forward kinds (relu, gelu, gelu_tanh, swiglu), pre / post / no-norm
  blocks and the unembedding (its own, or the embedding transposed) in
  `model_reference`;
- tokenizers: one BPE merge (`merge_pair`);
- self-checks of the reference (`self_check`; running this file runs them);
- shared helpers: random values and model weights, JSON conversion,
  labels for describing a configuration, comparison (`compare`, `Checks`,
  `Group` / `Case` / `compare_cells`), running the binary (`command_line`,
  `probe`, `Binary`, `work_folder`).

The PyTorch reference (autograd, AdamW) is in reference_torch.py, so that the
scripts which need only NumPy run without torch; the checks of one
`trace --json` against `reference` are in trace_check.py.

A scenario configuration `cfg` is a dict: variant, heads, kv_heads, head_dim,
d_model, latent_dim, q_latent (query latent width, 0 = none), mask, window,
custom_mask, scale, kernel, x, x_kv, n_q, n_kv and, optional, positions,
rope_base, max_positions, rope_dim, offset, sparse ({top_k, indexer_heads,
indexer_dim}), qkv_bias, output_bias (booleans), rope_pairing ("interleaved"
or "rotate_half") and rope_scaling (None or the file's {"type": "llama3",
...} object).  Weights W: name -> array, as in the scenario file (the biases
b_Q, b_K, b_V, b_O flat).
"""

import argparse
import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

TOL = 1e-9                      # absolute, for compare() and Checks
EPS = np.finfo(float).eps
LN_EPS = 1e-5                   # the default norm_eps of the model file format
DEFAULT_ROPE_BASE = 10000.0
BIASES = ("b_Q", "b_K", "b_V", "b_O")   # zeros when the file leaves them out
LD = np.longdouble              # angles in extended precision: far positions stay exact


class Mismatch(Exception):
    """A field of the binary's output disagrees with the reference."""


# --------------------------------------------------------------------------
# Random values and JSON
# --------------------------------------------------------------------------

def context_length(rng, n_q, cross):
    """The number of keys: n_q for self-attention, another count from 1 to 7
    for cross-attention (so that the two sides cannot be mixed up)."""
    n_kv = n_q
    if cross:
        while n_kv == n_q:
            n_kv = int(rng.integers(1, 8))
    return n_kv


def normal(rng, shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def values(rng, shape, low, high, step=None):
    """Random matrix; rounded to 3 decimals, or to multiples of `step`."""
    a = rng.uniform(low, high, size=shape)
    if step is None:
        return np.round(a, 3)
    return np.round(a / step) * step


def layer_weights(rng, att, D, positions):
    """Random weights of a model file's attention block `att` (d_model D),
    every one it uses.  For the linear kernel the query and key projections
    are positive (on positive inputs every score is then positive, so no row
    sums to nearly 0); with rope, whose turns mix the signs, each head's first
    pair (the fastest turning) gets little of them."""
    H, d = att["heads"], att["head_dim"]
    Hd = H * d
    v = att["variant"]
    linear = att.get("kernel") == "linear"
    W = {}
    s_in = 1.2 / math.sqrt(D)

    def qk(shape, scale):
        w = normal(rng, shape, scale)
        if not linear:
            return w
        w = np.abs(w)
        if positions == "rope" and v != "mla":
            for h in range(shape[1] // d):
                w[:, h * d:h * d + 2] *= 0.1
        return w
    if v == "mla":
        dc = att["latent_dim"]
        W["W_DKV"] = qk((D, dc), s_in)
        W["W_UK"] = qk((dc, Hd), 1.2 / math.sqrt(dc))
        W["W_UV"] = normal(rng, (dc, Hd), 1 / math.sqrt(dc))
        qin = D
        if att.get("query_latent_dim", 0) > 0:
            dq = att["query_latent_dim"]
            W["W_DQ"] = qk((D, dq), s_in)
            W["W_UQ"] = qk((dq, Hd), 1.2 / math.sqrt(dq))
            qin = dq
        else:
            W["W_Q"] = qk((D, Hd), s_in)
        if positions == "rope":
            dR = att["rope_dim"]
            small = 0.3 if linear else 1.0
            W["W_QR"] = normal(rng, (qin, H * dR), small * 1.2 / math.sqrt(qin))
            W["W_KR"] = normal(rng, (D, dR), small * s_in)
    else:
        G = {"mha": H, "gqa": att.get("kv_heads"), "mqa": 1}[v]
        W["W_Q"] = qk((D, Hd), s_in)
        W["W_K"] = qk((D, G * d), s_in)
        W["W_V"] = normal(rng, (D, G * d), 1 / math.sqrt(D))
    W["W_O"] = normal(rng, (Hd, D), 1 / math.sqrt(Hd))
    if att.get("sparse"):
        sp = att["sparse"]
        HI, dI = sp.get("indexer_heads", 1), sp.get("indexer_dim", d)
        W["W_QI"] = normal(rng, (D, HI * dI), s_in)
        W["W_KI"] = normal(rng, (D, dI), s_in)
        W["W_wI"] = normal(rng, (D, HI), 1 / math.sqrt(D))
    return W


def sublayer_weights(rng, D, norm, ffn, d_ff, bias=0.2, norm_bias=True):
    """Random weights of a layer's norms (gains about 1) and feed-forward
    sublayer, in drawing order: ln1, then with a feed-forward ln2, W_1, W_2
    and W_3 (swiglu) or the biases b_1, b_2.  norm_bias False (rms_norm):
    the norms have gains alone."""
    W = {}
    if norm != "none":
        W["ln1_gain"] = 1.0 + normal(rng, D, 0.2)
        if norm_bias:
            W["ln1_bias"] = normal(rng, D, 0.2)
    if ffn != "none":
        if norm != "none":
            W["ln2_gain"] = 1.0 + normal(rng, D, 0.2)
            if norm_bias:
                W["ln2_bias"] = normal(rng, D, 0.2)
        W["W_1"] = normal(rng, (D, d_ff), 1 / math.sqrt(D))
        W["W_2"] = normal(rng, (d_ff, D), 1 / math.sqrt(d_ff))
        if ffn == "swiglu":
            W["W_3"] = normal(rng, (D, d_ff), 1 / math.sqrt(D))
        else:
            W["b_1"] = normal(rng, d_ff, bias)
            W["b_2"] = normal(rng, D, bias)
    return W


def tolist(o):
    """Arrays (also inside dicts and lists) as JSON lists."""
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, dict):
        return {k: tolist(v) for k, v in o.items()}
    if isinstance(o, list):
        return [tolist(v) for v in o]
    return o


def reject_constant(name):
    raise ValueError("non-standard JSON constant %s" % name)


# --------------------------------------------------------------------------
# Weights a configuration uses
# --------------------------------------------------------------------------

def resolved(cfg):
    """(rope_base, max_positions, indexer_heads, indexer_dim) with defaults applied."""
    base = DEFAULT_ROPE_BASE if cfg.get("rope_base") is None else float(cfg["rope_base"])
    # Without max_positions: the rows of a given W_P (wp_rows, when the file's
    # W_P is not C + the longer side's tokens long), else C + that count.
    mp = cfg.get("max_positions") or cfg.get("wp_rows") or \
        cfg.get("offset", 0) + max(cfg["n_q"], cfg["n_kv"])
    sp = cfg.get("sparse") or {}
    hi = sp.get("indexer_heads") or 1
    di = sp.get("indexer_dim") or cfg["head_dim"]
    return base, mp, hi, di


def weight_shapes(cfg):
    """Every weight the configuration can use (W_O included), name -> shape, in
    drawing order; the biases (flat) last, with qkv_bias / output_bias."""
    dm, d, H = cfg["d_model"], cfg["head_dim"], cfg["heads"]
    hd = H * d
    if cfg["variant"] == "mla":
        dc, dq = cfg["latent_dim"], cfg["q_latent"]
        shapes = [("W_DKV", (dm, dc)), ("W_UK", (dc, hd)), ("W_UV", (dc, hd))]
        shapes += [("W_DQ", (dm, dq)), ("W_UQ", (dq, hd))] if dq else [("W_Q", (dm, hd))]
    else:
        gd = cfg["kv_heads"] * d
        shapes = [("W_Q", (dm, hd)), ("W_K", (dm, gd)), ("W_V", (dm, gd))]
    shapes.append(("W_O", (hd, dm)))
    positions = cfg.get("positions", "none")
    if positions != "none" or cfg.get("sparse"):
        _, mp, hi, di = resolved(cfg)
        if positions == "learned":
            shapes.append(("W_P", (mp, dm)))
        if cfg["variant"] == "mla" and positions == "rope":
            dr = cfg["rope_dim"]
            shapes += [("W_QR", (cfg["q_latent"] or dm, H * dr)), ("W_KR", (dm, dr))]
        if cfg.get("sparse"):
            shapes += [("W_QI", (dm, hi * di)), ("W_KI", (dm, di)), ("W_wI", (dm, hi))]
    if cfg.get("qkv_bias"):             # never with mla here (the lab adds them to its expanded k, v)
        gd = cfg["kv_heads"] * d
        shapes += [("b_Q", (hd,)), ("b_K", (gd,)), ("b_V", (gd,))]
    if cfg.get("output_bias"):
        shapes.append(("b_O", (dm,)))
    return dict(shapes)


def used_weights(cfg):
    """Names of the weights this configuration uses (W_O only with the projection)."""
    return [n for n in weight_shapes(cfg) if n != "W_O" or cfg["wo"]]


# --------------------------------------------------------------------------
# Masks and kernels
# --------------------------------------------------------------------------

def mask_matrix(cfg):
    """0/1 visibility matrix (n_q x n_kv): 1 = query i may attend to key j."""
    n_q, n_kv = cfg["n_q"], cfg["n_kv"]
    i = np.arange(n_q)[:, None]
    j = np.arange(n_kv)[None, :]
    mode = cfg["mask"]
    if mode == "none":
        return np.ones((n_q, n_kv))
    if mode == "causal":
        return (j <= i).astype(float)
    if mode == "sliding_window":
        return ((j <= i) & (j >= i - cfg["window"] + 1)).astype(float)
    return np.asarray(cfg["custom_mask"], dtype=float)


def causal(n_q, n_kv):
    return (np.arange(n_kv)[None, :] <= np.arange(n_q)[:, None]).astype(float)


def softmax_rows(masked, mask):
    """Weights, row_max, row_sum, status for the softmax kernel."""
    n = masked.shape[0]
    weights = np.zeros_like(masked)
    row_max, row_sum, status = np.zeros(n), np.zeros(n), []
    for r in range(n):
        vis = mask[r] == 1
        if not vis.any():
            status.append("all_masked")
            continue
        m = masked[r, vis].max()
        e = np.where(vis, np.exp(np.where(vis, masked[r] - m, 0.0)), 0.0)
        row_max[r], row_sum[r] = m, e.sum()
        weights[r] = e / row_sum[r]
        status.append("ok")
    return weights, row_max, row_sum, status


def linear_rows(masked, mask, v):
    """Weights, row_max, row_sum, status for the linear kernel kappa(x) = x.
    Z (the row sum, hidden entries 0) is "zero" when it is within rounding
    noise of the row, |Z| <= 64 eps sum|row|, or when the weights or the
    output would not be finite.  Weights below 0 make the row "signed"."""
    n = masked.shape[0]
    weights = np.zeros_like(masked)
    row_max, row_sum, status = np.zeros(n), np.zeros(n), []
    for r in range(n):
        if not (mask[r] == 1).any():
            status.append("all_masked")
            continue
        z = masked[r].sum()
        row_sum[r] = z
        with np.errstate(all="ignore"):
            w = masked[r] / z
            finite = np.isfinite(w).all() and np.isfinite(w @ v).all()
        if abs(z) <= 64 * EPS * np.abs(masked[r]).sum() or not finite:
            status.append("zero_sum")
            continue
        weights[r] = w
        status.append("signed" if (w < 0).any() else "ok")
    return weights, row_max, row_sum, status


def entropy_rows(weights, status):
    """-sum w ln w over positive weights of ok rows; NaN (JSON null) for
    signed rows; 0 for zero_sum and all_masked rows."""
    out = np.zeros(weights.shape[0])
    for r, st in enumerate(status):
        if st == "ok":
            w = weights[r][weights[r] > 0]
            out[r] = 0.0 - (w * np.log(w)).sum()
        elif st == "signed":
            out[r] = np.nan
    return out


def softmax(z):
    """Row softmax of a matrix with no hidden entries (a model's probabilities)."""
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def head_weights(cfg, scores, v, mask, rope_dim=0):
    """From one head's scores on: scaled by 1 / sqrt(head_dim + rope_dim),
    masked, the kernel's weights and row statistics, and the output."""
    scaled = scores / math.sqrt(cfg["head_dim"] + rope_dim) if cfg["scale"] else scores.copy()
    if cfg["kernel"] == "softmax":
        masked = np.where(mask == 1, scaled, -np.inf)
        weights, row_max, row_sum, status = softmax_rows(masked, mask)
    else:
        masked = np.where(mask == 1, scaled, 0.0)
        weights, row_max, row_sum, status = linear_rows(masked, mask, v)
    return {"scores": scores, "scaled": scaled, "mask": mask, "masked": masked,
            "weights": weights, "output": weights @ v, "row_max": row_max, "row_sum": row_sum,
            "entropy": entropy_rows(weights, status), "row_status": status}


def one_head(cfg, h, q, k, v, mask):
    """Every per-head intermediate for query head h reading (k, v)."""
    head = {"head": h, "q": q, "k": k, "v": v}
    head.update(head_weights(cfg, q @ k.T, v, mask))
    return head


def multi_head(cfg, Q, K, V, mask, W, rotary=None, rope_dim=0):
    """Query head h reads KV head h // (H / G); the heads' outputs side by
    side, through W_O when W has it, plus b_O under output_bias (a head's
    contribution is its output through its rows of W_O, without b_O).
    rotary(h, q, k): the head's rotated vectors (q_rope, k_rope, ...) that its
    scores read instead of q, k.  Returns (kv heads, heads, concat, output)."""
    d, H, G = cfg["head_dim"], cfg["heads"], cfg["kv_heads"]
    kv = [{"k": K[:, g * d:(g + 1) * d], "v": V[:, g * d:(g + 1) * d]} for g in range(G)]
    heads = []
    for h in range(H):
        cols = slice(h * d, (h + 1) * d)
        g = h // (H // G)
        q, k, v = Q[:, cols], kv[g]["k"], kv[g]["v"]
        head = {"head": h, "kv_head": g, "q": q, "k": k, "v": v}
        if rotary is not None:
            head.update(rotary(h, q, k))
        scores = head["q_rope"] @ head["k_rope"].T if "q_rope" in head else q @ k.T
        head.update(head_weights(cfg, scores, v, mask, rope_dim))
        if "W_O" in W:
            head["contribution"] = head["output"] @ W["W_O"][cols, :]
        heads.append(head)
    concat = np.hstack([hd["output"] for hd in heads])
    output = concat @ W["W_O"] if "W_O" in W else concat
    if cfg.get("output_bias"):
        output = output + W["b_O"]
    return kv, heads, concat, output


# --------------------------------------------------------------------------
# Positions
# --------------------------------------------------------------------------

def sinusoidal(rows, dm, base, offset=0):
    """PE[p, 2i] = sin(p / base^(2i/dm)), PE[p, 2i+1] = cos(p / base^(2i/dm)),
    for the positions p = offset .. offset + rows - 1."""
    p = np.arange(offset, offset + rows, dtype=LD)[:, None]
    c = np.arange(dm)
    angle = p / LD(base) ** (LD(2) * (c // 2) / LD(dm))
    return np.where(c % 2 == 0, np.sin(angle), np.cos(angle)).astype(float).reshape(rows, dm)


TWO_PI = 2 * np.arccos(LD(-1))


def llama3_scaled(inv, scaling):
    """Llama 3's rope_scaling of the inverse frequencies inv (extended
    precision): with wavelength 2 pi / inv, a wavelength below L0 / hi keeps
    its frequency, one above L0 / lo is divided by the factor F, and in
    between s = (L0 / wavelength - lo) / (hi - lo) blends the two:
    (1 - s) inv / F + s inv."""
    F, lo = LD(scaling["factor"]), LD(scaling["low_freq_factor"])
    hi, L0 = LD(scaling["high_freq_factor"]), LD(scaling["original_max_positions"])
    out = np.array(inv, dtype=LD)
    for i, f in enumerate(out):
        wavelength = TWO_PI / f
        if wavelength < L0 / hi:
            continue
        if wavelength > L0 / lo:
            out[i] = f / F
        else:
            s = (L0 / wavelength - lo) / (hi - lo)
            out[i] = (1 - s) * f / F + s * f
    return out


def rope_bands(inv, scaling):
    """Which Llama 3 band each inverse frequency falls in: "high" (kept),
    "mid" (blended) or "low" (divided by the factor)."""
    L0 = LD(scaling["original_max_positions"])
    bands = []
    for f in np.asarray(inv, dtype=LD):
        wavelength = TWO_PI / f
        bands.append("high" if wavelength < L0 / LD(scaling["high_freq_factor"]) else
                     "low" if wavelength > L0 / LD(scaling["low_freq_factor"]) else "mid")
    return bands


def inv_freq(width, base, scaling=None):
    """RoPE's inverse frequencies base^(-2i/width), i = 0 .. width/2 - 1, in
    extended precision; rescaled by rope_scaling (llama3) when given."""
    i = np.arange(width // 2)
    inv = LD(base) ** (-LD(2) * i / LD(width))
    if scaling is not None:
        if scaling.get("type") != "llama3":
            raise ValueError("the reference knows no rope_scaling %r" % scaling.get("type"))
        inv = llama3_scaled(inv, scaling)
    return inv


def pair_columns(width, pairing):
    """(first, second) column indices of RoPE's pairs: interleaved (2i, 2i+1),
    rotate_half (i, i + width/2)."""
    half = width // 2
    i = np.arange(half)
    if pairing == "interleaved":
        return 2 * i, 2 * i + 1
    if pairing == "rotate_half":
        return i, i + half
    raise ValueError("unknown rope_pairing %r" % pairing)


def rotate(a, base, offset=0, pairing="interleaved", scaling=None):
    """RoPE: row r of a (at position p = offset + r) turned pair by pair, pair
    i ((2i, 2i+1) interleaved, (i, i + width/2) rotate_half) by the angle
    p * inv_freq_i: (x, y) -> (x cos - y sin, x sin + y cos)."""
    a = np.asarray(a, dtype=float)
    out = a.copy()
    width = a.shape[1]
    if a.shape[0] == 0 or width < 2:
        return out
    p = np.arange(offset, offset + a.shape[0], dtype=LD)[:, None]
    angle = p * inv_freq(width, base, scaling)
    c, s = np.cos(angle), np.sin(angle)
    first, second = pair_columns(width, pairing)
    x, y = a[:, first].astype(LD), a[:, second].astype(LD)
    out[:, first] = (x * c - y * s).astype(float)
    out[:, second] = (x * s + y * c).astype(float)
    return out


def rope_of(cfg):
    """The keyword arguments of rotate() a configuration turns with."""
    return {"pairing": cfg.get("rope_pairing") or "interleaved",
            "scaling": cfg.get("rope_scaling")}


# --------------------------------------------------------------------------
# Sparse attention
# --------------------------------------------------------------------------

def indexer_scores(X, Xkv, W, hi, di):
    """The lightning indexer: I = sum_h w_h ReLU(q_h k^T), per query and key."""
    w, qi, ki = X @ W["W_wI"], X @ W["W_QI"], Xkv @ W["W_KI"]
    I = np.zeros((X.shape[0], Xkv.shape[0]))
    for h in range(hi):
        I += w[:, h:h + 1] * np.maximum(qi[:, h * di:(h + 1) * di] @ ki.T, 0.0)
    return {"q": qi, "k": ki, "w": w, "I": I}


def top_k(I, visible, k):
    """0/1 selection: per row the k largest visible I (ties: the lower j
    first), and per row its visible keys in that order."""
    sel = np.zeros(I.shape)
    orders = []
    for i in range(I.shape[0]):
        js = np.flatnonzero(visible[i] == 1)
        order = js[np.lexsort((js, -I[i, js]))]        # primary -I, then j
        sel[i, order[:k]] = 1
        orders.append(order)
    return sel, orders


def top_k_select(scores, visible, k):
    """top_k's selection and what its rows met: exact ties and near ties
    (within 1e-9 relative) at the cut, rows cut, rows with k keys or fewer."""
    sel, orders = top_k(scores, visible, k)
    info = {"tie": False, "fewer": False, "cut": False, "near": []}
    for i, order in enumerate(orders):
        if len(order) <= k:
            info["fewer"] = True
            continue
        info["cut"] = True
        a, b = scores[i, order[k - 1]], scores[i, order[k]]
        if a == b:
            info["tie"] = True
        elif abs(a - b) <= 1e-9 * max(1.0, abs(a)):
            info["near"].append(i)
    return sel, info


# --------------------------------------------------------------------------
# Attention, every variant
# --------------------------------------------------------------------------

def reference(cfg, W, base_mask=None, selected=None, follow=None):
    """Every intermediate, from the specification.  base_mask replaces the
    scenario's mask (decode); selected replaces the top-k selection; follow
    (far positions) replaces the PE rows and the rotated vectors by the
    binary's, which the caller has checked to angle rounding."""
    follow = follow or {}
    n_q, n_kv, dm = cfg["n_q"], cfg["n_kv"], cfg["d_model"]
    d = cfg["head_dim"]
    base, mp, hi, di = resolved(cfg)
    pos, mla = cfg.get("positions", "none"), cfg["variant"] == "mla"
    C = cfg.get("offset", 0) if pos != "none" else 0
    ref = {}
    X, Xkv = np.asarray(cfg["x"], float), np.asarray(cfg["x_kv"], float)
    rows = max(n_q, n_kv)
    if pos == "sinusoidal":
        ref["positions"] = follow.get("positions", sinusoidal(rows, dm, base, C))
    elif pos == "learned":
        ref["positions"] = np.asarray(W["W_P"], float)[C:C + rows]
    if "positions" in ref:
        X = X + ref["positions"][:n_q]
        Xkv = Xkv + ref["positions"][:n_kv]
    ref["X"], ref["Xkv"] = X, Xkv
    query_input = projections(cfg, W, X, Xkv, ref)
    mask = mask_matrix(cfg) if base_mask is None else base_mask
    ref["base_mask"] = mask
    combined = mask
    if cfg.get("sparse"):
        ix = indexer_scores(X, Xkv, W, hi, di)
        sel, info = top_k_select(ix["I"], mask, cfg["sparse"]["top_k"])
        if selected is not None:
            sel = selected
        ref["indexer"] = dict(ix, scores=np.where(mask == 1, ix["I"], np.nan), selected=sel)
        ref["topk_info"] = info
        combined = mask * sel
    ref["mask"] = combined
    rotary, dr = rope_parts(cfg, W, query_input, Xkv, base, C, follow, ref)
    ref["scale_factor"] = 1.0 / math.sqrt(d + dr) if cfg["scale"] else 1.0
    ref["kv_heads"], ref["heads"], ref["concat"], ref["output"] = multi_head(
        cfg, ref["Q"], ref["K"], ref["V"], combined, W, rotary, dr)
    ref["follow"] = follow
    if mla:
        ref["absorbed"] = absorbed(cfg, W, ref, query_input, ref["heads"])
    return ref


def projections(cfg, W, X, Xkv, ref):
    """Q (N_Q x H d), K and V (N_KV x G d) into ref, with b_Q, b_K, b_V added
    under qkv_bias, and, for mla, the latents; returns the queries' input
    (mla's query latent, else X)."""
    if cfg["variant"] != "mla":
        Q, K, V = X @ W["W_Q"], Xkv @ W["W_K"], Xkv @ W["W_V"]
        if cfg.get("qkv_bias"):
            Q, K, V = Q + W["b_Q"], K + W["b_K"], V + W["b_V"]
        ref.update(Q=Q, K=K, V=V)
        return X
    ref["latent"] = Xkv @ W["W_DKV"]
    K, V = ref["latent"] @ W["W_UK"], ref["latent"] @ W["W_UV"]
    query_input = X
    if cfg["q_latent"]:
        ref["query_latent"] = X @ W["W_DQ"]
        query_input = ref["query_latent"]
        Q = query_input @ W["W_UQ"]
    else:
        Q = X @ W["W_Q"]
    ref.update(Q=Q, K=K, V=V)
    return query_input


def rope_parts(cfg, W, query_input, Xkv, base, C, follow, ref):
    """(rotary for multi_head, rope_dim): RoPE turns each head's q and k
    (after their biases); mla's decoupled RoPE appends q_R^h (from the query
    input) and the one k_R shared by every head (from the token), each
    rotated.  Pairing and scaling as the configuration says (rope_of)."""
    pos, mla = cfg.get("positions", "none"), cfg["variant"] == "mla"
    if pos != "rope":
        return None, 0
    turn = rope_of(cfg)
    if not mla:
        def rotary(h, q, k):
            if "q_rope" in follow:
                return {"q_rope": follow["q_rope"][h], "k_rope": follow["k_rope"][h]}
            return {"q_rope": rotate(q, base, C, **turn), "k_rope": rotate(k, base, C, **turn)}
        return rotary, 0
    dr, H = cfg["rope_dim"], cfg["heads"]
    qR = query_input @ W["W_QR"]
    ref["k_r"] = follow.get("k_r", rotate(Xkv @ W["W_KR"], base, C, **turn))
    ref["q_r"] = follow.get("q_r", [rotate(qR[:, h * dr:(h + 1) * dr], base, C, **turn)
                                    for h in range(H)])

    def decoupled(h, q, k):
        return {"q_r": ref["q_r"][h], "k_r": ref["k_r"],
                "q_rope": np.hstack([q, ref["q_r"][h]]), "k_rope": np.hstack([k, ref["k_r"]])}
    return decoupled, dr


def block_diag(blocks):
    """Block-diagonal matrix of the given 2-D blocks."""
    rows = sum(b.shape[0] for b in blocks)
    out = np.zeros((rows, sum(b.shape[1] for b in blocks)))
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def absorbed(cfg, W, ref, query_input, heads):
    """mla's absorbed form: scores straight from the latent through
    W_UQK^h = Wq_h W_UK_h^T (+ q_R^h k_R^T with rope), and the output from
    weights @ latent through W_LO (+ b_O under output_bias)."""
    d, H = cfg["head_dim"], cfg["heads"]
    Wq = W["W_UQ"] if cfg["q_latent"] else W["W_Q"]
    cols = [slice(h * d, (h + 1) * d) for h in range(H)]
    per_head = []
    for h in range(H):
        w_uqk = Wq[:, cols[h]] @ W["W_UK"][:, cols[h]].T
        queries = query_input @ w_uqk
        s = queries @ ref["latent"].T
        if "k_r" in ref:
            s = s + ref["q_r"][h] @ ref["k_r"].T
        per_head.append({"W_UQK": w_uqk, "queries": queries, "scores": s})
    latent_output = np.hstack([hd["weights"] @ ref["latent"] for hd in heads])
    w_lo = block_diag([W["W_UV"][:, c] for c in cols])
    if "W_O" in W:
        w_lo = w_lo @ W["W_O"]
    output = latent_output @ w_lo
    if cfg.get("output_bias"):
        output = output + W["b_O"]
    return {"heads": per_head, "latent_output": latent_output, "W_LO": w_lo, "output": output}


def online_reference(x, v, block):
    """Blockwise online softmax of the masked row x over values v."""
    n = len(x)
    m, l, acc = -math.inf, 0.0, np.zeros(v.shape[1])
    blocks = []
    for s in range(0, n, block):
        e = min(n, s + block)
        bmax = max(x[s:e])
        m_new = max(m, bmax)
        rescale = 1.0 if m_new == -math.inf else math.exp(m - m_new)
        l *= rescale
        acc = acc * rescale
        for j in range(s, e):
            if x[j] != -math.inf:
                p = math.exp(x[j] - m_new)
                l += p
                acc = acc + p * v[j]
        m = m_new
        out = acc / l if l > 0 else np.zeros(v.shape[1])
        blocks.append({"start": s, "end": e, "block_max": bmax, "m": m, "rescale": rescale,
                       "l": l, "output": out})
    return blocks


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------

def layer_norm(x, gain, bias, eps=LN_EPS):
    """gain (x - mean) / sqrt(var + eps) + bias per row, the variance biased."""
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return gain * (x - mean) / np.sqrt(var + eps) + bias


def rms_norm(x, gain, eps=LN_EPS):
    """gain x / sqrt(mean(x^2) + eps) per row (no mean taken off, no bias)."""
    return gain * x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)


def norm_of(m):
    """The model's norm as f(x, W, prefix): its norm_function (layer_norm with
    <prefix>_gain and <prefix>_bias, or rms_norm with <prefix>_gain alone) at
    its norm_eps."""
    eps = LN_EPS if m.get("norm_eps") is None else float(m["norm_eps"])
    if m.get("norm_function", "layer_norm") == "rms_norm":
        return lambda x, W, pre: rms_norm(x, W[pre + "_gain"], eps)
    return lambda x, W, pre: layer_norm(x, W[pre + "_gain"], W[pre + "_bias"], eps)


_erf = np.vectorize(math.erf, otypes=[float])


def gelu_tanh(u):
    """0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))."""
    return 0.5 * u * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u ** 3)))


def ffn(kind, W, x):
    """relu / gelu (exact, with erf) / gelu_tanh: act(x W_1 + b_1) W_2 + b_2;
    swiglu: (silu(x W_1) * x W_3) W_2."""
    if kind == "swiglu":
        a = x @ W["W_1"]
        return ((a / (1.0 + np.exp(-a))) * (x @ W["W_3"])) @ W["W_2"]
    h = x @ W["W_1"] + W["b_1"]
    if kind == "relu":
        h = np.maximum(h, 0.0)
    elif kind == "gelu_tanh":
        h = gelu_tanh(h)
    elif kind == "gelu":
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
    else:
        raise ValueError("unknown ffn kind %r" % kind)
    return h @ W["W_2"] + W["b_2"]


def attention_cfg(layer, x):
    """The layer's attention as a scenario configuration reading x."""
    a = dict(layer["att"])
    a["x"] = a["x_kv"] = np.asarray(x, float)
    a["n_q"] = a["n_kv"] = x.shape[0]
    return a


def model_reference(m, tokens=None, selected=None):
    """Every quantity `run --json` prints for model m: embedding (+ positions),
    per layer the attention and feed-forward sublayers with their residuals
    (norm pre: before each sublayer and at the end; post: after each residual
    sum; none), the logits and probabilities.  The norms are m's
    norm_function (layer_norm by default, or rms_norm) at m's norm_eps
    (default 1e-5); the logits read m's unembedding, or with tied_unembedding
    the embedding transposed.  m["layers"][i]: "att" (the attention
    configuration), "W" (its weights), "all_W" (with the norm and
    feed-forward weights).  selected: {layer: 0/1 selection} to follow
    instead of the reference's top-k (near ties)."""
    tokens = m["tokens"] if tokens is None else tokens
    N, dm = len(tokens), m["d_model"]
    x = np.asarray(m["embedding"], float)[tokens]
    if m["positions"] == "sinusoidal":
        base = DEFAULT_ROPE_BASE if m["rope_base"] is None else float(m["rope_base"])
        x = x + sinusoidal(N, dm, base)
    elif m["positions"] == "learned":
        x = x + np.asarray(m["W_P"], float)[:N]
    norm, kind = m["norm"], m["ffn"]
    nf = norm_of(m)
    out = {"layers": []}
    for li, L in enumerate(m["layers"]):
        W = L["all_W"]
        rin = x
        a_in = nf(x, W, "ln1") if norm == "pre" else x
        acfg = attention_cfg(L, a_in)
        sel = (selected or {}).get(li)
        att = reference(acfg, L["W"], selected=sel)
        a_out = att["output"]
        x = nf(x + a_out, W, "ln1") if norm == "post" else x + a_out
        f_out = None
        if kind != "none":
            f_in = nf(x, W, "ln2") if norm == "pre" else x
            f_out = ffn(kind, W, f_in)
            x = nf(x + f_out, W, "ln2") if norm == "post" else x + f_out
        out["layers"].append({"residual_in": rin, "attn_in": a_in, "acfg": acfg, "att": att,
                              "ffn_out": f_out, "residual_out": x})
    if norm == "pre":
        x = nf(x, m, "final")
    out["final"] = x
    unembedding = np.asarray(m["embedding"], float).T if m.get("tied") else \
        np.asarray(m["unembedding"], float)
    out["logits"] = x @ unembedding
    out["probabilities"] = softmax(out["logits"])
    return out


# --------------------------------------------------------------------------
# Self-checks of the reference
# --------------------------------------------------------------------------

def self_check():
    """Checks of the reference against other formulations of the same maths;
    a list of failures (empty when all hold).  Cheap (well under a second)."""
    fails = []
    rng = np.random.default_rng(9)

    def close(what, a, b, tol=1e-12):
        a, b = np.asarray(a, float), np.asarray(b, float)
        err = float(np.max(np.abs(a - b), initial=0.0)) if a.shape == b.shape else math.inf
        if not err <= tol:
            fails.append("%s: differ by %.3g (> %.1g)" % (what, err, tol))

    w, base, C = 12, 10000.0, 5
    q, k = rng.standard_normal((4, w)), rng.standard_normal((6, w))
    bands = {"type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
             "original_max_positions": 32}
    # rotate_half on q, k equals interleaved RoPE on columns permuted so that
    # pair (i, i + w/2) sits at (2i, 2i + 1); the scores then agree.
    perm = np.ravel(np.column_stack([np.arange(w // 2), np.arange(w // 2) + w // 2]))
    back = np.argsort(perm)
    for scaling in (None, bands):
        tag = " (llama3)" if scaling else ""
        qh = rotate(q, base, C, "rotate_half", scaling)
        kh = rotate(k, base, C, "rotate_half", scaling)
        qi = rotate(q[:, perm], base, C, "interleaved", scaling)
        ki = rotate(k[:, perm], base, C, "interleaved", scaling)
        close("rotate_half = interleaved on permuted columns" + tag, qh, qi[:, back], 0.0)
        close("rotate_half scores = interleaved scores on permuted columns" + tag,
              qh @ kh.T, qi @ ki.T)
        # ... and Hugging Face's form x cos + rotate_half(x) sin, cos and sin
        # repeated over both halves, rotate_half(x) = [-x2, x1].
        ang = np.arange(C, C + q.shape[0])[:, None] * inv_freq(w, base, scaling).astype(float)
        cos, sin = np.tile(np.cos(ang), 2), np.tile(np.sin(ang), 2)
        close("rotate_half = x cos + rotate_half(x) sin" + tag, qh,
              q * cos + np.hstack([-q[:, w // 2:], q[:, :w // 2]]) * sin)
        # interleaved as complex numbers: (x + i y) e^(i angle).
        z = (q[:, 0::2] + 1j * q[:, 1::2]) * np.exp(1j * ang)
        close("interleaved = (x + iy) e^(i angle)" + tag,
              rotate(q, base, C, "interleaved", scaling),
              np.ravel(np.column_stack([z.real.ravel(), z.imag.ravel()])).reshape(q.shape))
        # RoPE scores depend on the distance alone.
        close("rope scores shift-invariant" + tag,
              rotate(q, base, C, "rotate_half", scaling) @ rotate(k, base, C, "rotate_half",
                                                                  scaling).T,
              rotate(q, base, C + 7, "rotate_half", scaling) @ rotate(k, base, C + 7, "rotate_half",
                                                                      scaling).T, 1e-11)
    # llama3: factor 1 changes nothing; the bands above are all three; the
    # blend meets the outer bands at their edges.
    plain = inv_freq(w, base)
    for lo, hi, L0 in ((1, 4, 32), (0.5, 2, 16), (1, 4, 8192)):
        one = {"type": "llama3", "factor": 1, "low_freq_factor": lo, "high_freq_factor": hi,
               "original_max_positions": L0}
        close("llama3 factor 1 = unscaled (lo %s hi %s L0 %s)" % (lo, hi, L0),
              inv_freq(w, base, one) / plain, np.ones(w // 2), 1e-15)
    if sorted(set(rope_bands(plain, bands))) != ["high", "low", "mid"]:
        fails.append("llama3 bands of head_dim 12, base 1e4, L0 32, lo 1, hi 4: %s"
                     % rope_bands(plain, bands))
    scaled = inv_freq(w, base, bands)
    for f, g, band in zip(plain, scaled, rope_bands(plain, bands)):
        want = {"high": f, "low": f / 8}.get(band)
        if want is not None and g != want:
            fails.append("llama3 %s band: %r, expected %r" % (band, g, want))
        if band == "mid" and not f / 8 < g < f:
            fails.append("llama3 mid band: %r not between %r and %r" % (g, f / 8, f))
    # just inside the blended band at either end (wavelength a hair above L0 / hi,
    # a hair below L0 / lo)
    edge = np.array([TWO_PI / (LD(32) / 4) * (1 - LD(1e-12)), TWO_PI / LD(32) * (1 + LD(1e-12))])
    if rope_bands(edge, bands) != ["mid", "mid"]:
        fails.append("llama3 edge frequencies not in the blended band: %s" % rope_bands(edge, bands))
    got = llama3_scaled(edge, bands)
    close("llama3 blend at the high edge = the frequency", got[0] / edge[0], 1.0, 1e-11)
    close("llama3 blend at the low edge = the frequency / factor", got[1] / edge[1], 1 / 8, 1e-11)
    # biases: X W + b is X' W' with a column of ones in X' and b as W's last
    # row, before RoPE turns q and k.
    cfg = {"variant": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 6, "d_model": 5,
           "n_q": 3, "n_kv": 3, "mask": "causal", "scale": True, "kernel": "softmax",
           "positions": "rope", "rope_pairing": "rotate_half", "rope_scaling": bands,
           "offset": 2, "qkv_bias": True, "output_bias": True, "wo": True}
    cfg["x"] = cfg["x_kv"] = rng.standard_normal((3, 5))
    W = {n: rng.standard_normal(sh) for n, sh in weight_shapes(cfg).items()}
    aug = dict(cfg, d_model=6, qkv_bias=False, output_bias=False,
               x=np.hstack([cfg["x"], np.ones((3, 1))]))
    aug["x_kv"] = aug["x"]
    Wa = {n: np.vstack([W[n], W[b][None, :]]) for n, b in (("W_Q", "b_Q"), ("W_K", "b_K"),
                                                          ("W_V", "b_V"))}
    Wa["W_O"] = np.hstack([W["W_O"], np.zeros((W["W_O"].shape[0], 1))])
    r, ra = reference(cfg, W), reference(aug, Wa)
    for h, (a, b) in enumerate(zip(r["heads"], ra["heads"])):
        close("qkv biases = a column of ones, head %d scores" % h, a["scores"], b["scores"])
    close("output bias: output - b_O = concat W_O", r["output"] - W["b_O"],
          ra["output"][:, :5])
    # rms_norm is layer_norm (bias 0) on rows of mean 0; gelu_tanh is close to gelu.
    x = rng.standard_normal((3, 8))
    x -= x.mean(axis=1, keepdims=True)
    g = 1 + rng.standard_normal(8) * 0.2
    close("rms_norm = layer_norm on rows of mean 0", rms_norm(x, g, 1e-3),
          layer_norm(x, g, np.zeros(8), 1e-3))
    u = np.linspace(-6, 6, 241)
    gap = np.abs(gelu_tanh(u) - 0.5 * u * (1 + _erf(u / math.sqrt(2))))
    if not (gap.max() < 1e-3 and gap.max() > 1e-5):
        fails.append("gelu_tanh vs gelu: largest gap %.3g, expected between 1e-5 and 1e-3"
                     % gap.max())
    return fails


# --------------------------------------------------------------------------
# Describing a configuration
# --------------------------------------------------------------------------

def variant_label(cfg):
    """mha, mqa, gqa G=<kv heads>, mla dc=<latent> dq=<query latent>."""
    return {"mha": "mha", "mqa": "mqa", "gqa": "gqa G=%d" % cfg["kv_heads"],
            "mla": "mla dc=%d dq=%d" % (cfg["latent_dim"], cfg["q_latent"])}[cfg["variant"]]


def sparse_label(sp):
    """sparse(k=..,HI=..,dI=..); '-' for an indexer size left to its default."""
    return "sparse(k=%d,HI=%s,dI=%s)" % (sp["top_k"], sp.get("indexer_heads") or "-",
                                        sp.get("indexer_dim") or "-")


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

def as_array(found, where, null_as=None):
    """JSON rows (or a flat list) -> float64 array.  A JSON null becomes
    null_as (-inf or NaN) where the caller allows it, else it is a mismatch."""
    def conv(x, pos):
        if x is None:
            if null_as is not None:
                return null_as
            raise Mismatch("%s%s: found null, expected a finite number" % (where, pos))
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise Mismatch("%s%s: found %r, expected a number" % (where, pos, x))
        return float(x)
    if found is None:
        raise Mismatch("%s: missing from the output" % where)
    if not isinstance(found, list):
        raise Mismatch("%s: expected an array, found %r" % (where, found))
    if found and isinstance(found[0], list):
        widths = {len(row) if isinstance(row, list) else -1 for row in found}
        if len(widths) != 1 or -1 in widths:
            raise Mismatch("%s: ragged or mixed rows" % where)
        return np.array([[conv(x, "[%d][%d]" % (r, c)) for c, x in enumerate(row)]
                         for r, row in enumerate(found)], dtype=float)
    return np.array([conv(x, "[%d]" % r) for r, x in enumerate(found)], dtype=float)


def shown(x):
    """A value for a message; NaN stands for a JSON null."""
    return "null" if np.isnan(x) else repr(float(x))


def compare(expected, found, where, null_as=None):
    """Raise Mismatch unless |expected - found| <= TOL everywhere (infinities
    and NaN/null must match exactly); return the max abs error."""
    expected = np.asarray(expected, dtype=float)
    got = as_array(found, where, null_as)
    if got.size == 0 and expected.size == 0:
        return 0.0
    if got.shape != expected.shape:
        raise Mismatch("%s: shape %s, expected %s" % (where, got.shape, expected.shape))
    max_err = 0.0
    for pos in np.ndindex(expected.shape):
        e, f = expected[pos], got[pos]
        if np.isnan(e) or np.isnan(f):
            ok, err = np.isnan(e) and np.isnan(f), 0.0
        elif np.isinf(e) or np.isinf(f):
            ok, err = e == f, 0.0
        else:
            err = abs(e - f)
            ok = err <= TOL
        if not ok:
            at = "".join("[%d]" % p for p in pos)
            raise Mismatch("%s%s: expected %s, found %s" % (where, at, shown(e), shown(f)))
        max_err = max(max_err, err)
    return max_err


def check_equal(expected, found, where):
    """Exact equality, type included (so 1 is not accepted for true)."""
    if expected != found or type(expected) is not type(found):
        raise Mismatch("%s: expected %r, found %r" % (where, expected, found))


class Checks:
    """Collects every mismatch of one configuration instead of stopping at the first."""

    def __init__(self):
        self.errors = []
        self.max_err = 0.0

    def fail(self, msg):
        self.errors.append(msg)

    def cmp(self, expected, found, where, null_as=None, tol=None):
        try:
            if tol is None:
                self.max_err = max(self.max_err, compare(expected, found, where, null_as))
            else:
                exp = np.asarray(expected, float)
                got = as_array(found, where, null_as)
                if got.shape != exp.shape:
                    raise Mismatch("%s: shape %s, expected %s" % (where, got.shape, exp.shape))
                fin = np.isfinite(exp) & np.isfinite(got)
                same = (exp == got) | (np.isnan(exp) & np.isnan(got))
                bad = ~same & (~fin | (np.abs(np.where(fin, exp - got, 0)) > tol))
                if bad.any():
                    pos = tuple(np.argwhere(bad)[0])
                    raise Mismatch("%s%s: expected %r, found %r (tolerance %g)" % (
                        where, "".join("[%d]" % p for p in pos), float(exp[pos]),
                        float(got[pos]), tol))
            return True
        except Mismatch as e:
            self.errors.append(str(e))
            return False

    def exact(self, expected, found, where):
        """0/1 matrices: identical, with integer values."""
        try:
            got = as_array(found, where)
        except Mismatch as e:
            self.errors.append(str(e))
            return False
        exp = np.asarray(expected, float)
        if got.shape != exp.shape or not np.array_equal(got, exp):
            self.errors.append("%s: expected %s, found %s" % (
                where, exp.astype(int).tolist(), found))
            return False
        return True

    def eq(self, expected, found, where):
        if expected != found or type(expected) is not type(found):
            self.errors.append("%s: expected %r, found %r" % (where, expected, found))
            return False
        return True


class Group:
    """The cases of one group of checks: counts, the largest difference per
    quantity, and a summary line (name padded to `width`)."""

    def __init__(self, name, width=6):
        self.name, self.width = name, width
        self.cases = self.failed_cases = self.values = 0
        self.max_err = {}           # quantity -> largest |diff| seen

    def note_err(self, what, err):
        self.max_err[what] = max(self.max_err.get(what, 0.0), err)

    def summary(self, extra=""):
        errs = ", ".join("%s %.1e" % kv for kv in sorted(self.max_err.items()))
        return "%-*s %s: %d cases, %d failed, %d values compared%s%s" % (
            self.width, self.name, "ok  " if not self.failed_cases else "FAIL", self.cases,
            self.failed_cases, self.values, ("; max |diff| " + errs) if errs else "",
            ("; " + extra) if extra else "")


class Case:
    """One check inside a group; close() prints its mismatches (at most
    `limit`, None: all)."""

    def __init__(self, group, label, limit=None):
        self.group, self.label, self.limit = group, label, limit
        self.errors = []
        group.cases += 1

    def fail(self, msg):
        self.errors.append(msg)

    def close(self):
        if self.errors:
            self.group.failed_cases += 1
            shown_errors = self.errors if self.limit is None else self.errors[:self.limit]
            for e in shown_errors:
                print("MISMATCH %s: %s" % (self.label, e))
            if len(self.errors) > len(shown_errors):
                print("MISMATCH %s: ... and %d more" % (
                    self.label, len(self.errors) - len(shown_errors)))
        return not self.errors


def compare_cells(case, what, expected, found, atol, rtol=0.0, where="", kind=None):
    """|found - expected| <= atol + rtol |expected| cell by cell; one report
    per array (the first bad cell, and how many); the largest difference is
    kept per kind (default: what)."""
    exp = np.asarray(expected, dtype=np.float64)
    try:
        got = np.asarray(found, dtype=np.float64)
    except (TypeError, ValueError):
        case.fail("%s%s: not a numeric array (%r)" % (where, what, str(found)[:80]))
        return False
    if got.shape != exp.shape:
        case.fail("%s%s: shape %s, expected %s" % (where, what, got.shape, exp.shape))
        return False
    case.group.values += exp.size
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - exp)
    if exp.size:
        case.group.note_err(kind or what,
                            float(np.nanmax(diff)) if np.isfinite(diff).any() else math.inf)
    bad = ~(diff <= atol + rtol * np.abs(exp))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        case.fail("%s%s%s: expected %.17g, found %.17g (|diff| %.3g > %.3g; %d of %d cells differ)"
                  % (where, what, "".join("[%d]" % i for i in idx), exp[idx], got[idx],
                     diff[idx], atol + rtol * abs(exp[idx]), int(bad.sum()), bad.size))
        return False
    return True


def error_lines(errors, limit):
    """The first `limit` errors, one an indented line, and how many more."""
    more = len(errors) - limit
    lines = errors[:limit] + (["... %d more" % more] if more > 0 else [])
    return "\n       " + "\n       ".join(lines)


# --------------------------------------------------------------------------
# Running the binary
# --------------------------------------------------------------------------

class BinaryError(OSError):
    """The binary cannot be started (or did not finish in time)."""


HERE = os.path.dirname(os.path.abspath(__file__))
PRESETS = os.path.normpath(os.path.join(HERE, "..", "..", "assets", "presets", "models.json"))


def merge_pair(word, pair):
    """One BPE merge: every non-overlapping occurrence of `pair` in the symbols of `word`, left to right, as one
    symbol."""
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def command_line(doc, keep=None, presets=False):
    """The arguments every cross-check takes: --binary, --keep DIR where the
    script keeps its files (keep: its help), --presets (the model presets
    file) where asked; the description is the first line of doc."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--binary", required=True, help="path to attention-lab")
    if keep:
        parser.add_argument("--keep", help=keep)
    if presets:
        parser.add_argument("--presets", default=PRESETS, help="default %(default)s")
    return parser


def read_presets(path):
    """The model presets: a list of shapes, each with its name."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)["models"]


def cannot_run(binary, e):
    """Say that the binary cannot be run; the exit status for it, 2."""
    print("error: cannot run the binary %r: %s" % (binary, e), file=sys.stderr)
    return 2


def probe(binary, *args):
    """Exit 2 unless the binary can be started (with args, default --version)."""
    try:
        subprocess.run([binary] + list(args or ["--version"]), capture_output=True, timeout=20,
                       check=not args)
    except (OSError, subprocess.SubprocessError) as e:
        sys.exit(cannot_run(binary, e))


@contextlib.contextmanager
def work_folder(keep, prefix):
    """The folder for the files the binary reads and writes: `keep` (kept
    afterwards) or a new temporary folder (removed afterwards)."""
    folder = keep or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(folder, exist_ok=True)
    try:
        yield folder
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


class Binary:
    """attention-lab run on files written to a folder of its own; counts its runs."""

    def __init__(self, path, folder, timeout=60, cwd=None):
        self.path, self.folder = path, folder
        self.binary = path
        self.timeout, self.cwd = timeout, cwd
        self.runs = 0

    def file(self, name):
        return os.path.join(self.folder, name)

    def write(self, name, doc):
        """doc as JSON (tokens kept readable) in the folder; its path."""
        path = self.file(name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False)
        return path

    def run(self, *args, env=None):
        """The finished process (output as text); BinaryError if it cannot start."""
        self.runs += 1
        full_env = None
        if env:
            full_env = dict(os.environ)
            full_env.update(env)
        try:
            return subprocess.run([self.path] + [str(a) for a in args], capture_output=True,
                                  text=True, timeout=self.timeout, env=full_env, cwd=self.cwd)
        except (OSError, subprocess.SubprocessError) as e:
            raise BinaryError(str(e))

    def call(self, *args):
        """(exit code, stdout, stderr) of one run."""
        proc = self.run(*args)
        return proc.returncode, proc.stdout, proc.stderr

    def case_json(self, case, *args):
        """The JSON object a run prints, or None after case.fail() (its exit
        status, or no JSON object)."""
        r = self.run(*args)
        what = "`%s --json`" % args[0]
        if r.returncode != 0:
            case.fail("%s exit %d: %s" % (what, r.returncode, r.stderr.strip()[:300]))
            return None
        try:
            out = json.loads(r.stdout)
        except ValueError:
            case.fail("%s printed no JSON: %r" % (what, r.stdout[:200]))
            return None
        if not isinstance(out, dict):
            case.fail("%s: expected one object" % what)
            return None
        return out

    def run_json(self, case, model_path, tokens):
        """`run MODEL --tokens ... --json` as a dict, or None after case.fail()."""
        return self.case_json(case, "run", model_path, "--tokens", " ".join(tokens), "--json")

    def json(self, *args):
        """Run, require exit 0 and JSON; raise Mismatch otherwise."""
        code, out, err = self.call(*args)
        if code != 0:
            raise Mismatch("`%s` exit %d: %s" % (" ".join(map(str, args[:1] + args[2:])), code,
                                                  err.strip()[:300]))
        try:
            return json.loads(out, parse_constant=reject_constant)
        except ValueError as e:
            raise Mismatch("`%s`: output is not JSON: %s" % (args[0], e))


if __name__ == "__main__":
    _fails = self_check()
    for _f in _fails:
        print("SELF-CHECK FAILED: " + _f)
    print("reference self-check: %s" % ("ok" if not _fails else "%d failed" % len(_fails)))
    sys.exit(1 if _fails else 0)
