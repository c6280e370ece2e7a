#!/usr/bin/python3
"""Independent PyTorch cross-check of training and attention gradients on every kind of layer.

A second implementation, written from the specification only (never from the
C++ sources), of `attention-lab train --model M --batches B --json --save OUT`
and of the loss and attention gradients of `attention-lab run M --json`, for
models of every kind a model file can hold: every variant, positions kind,
mask, scale, kernel, sparse attention, norm and feed-forward kind.  Double
precision, row vectors, autograd through the whole forward pass.

  x = embedding[ids]  (+ PE with sinusoidal positions, + W_P[0..N-1] learned;
      PE[p, 2i] = sin(p / base^(2i/d_model)), PE[p, 2i+1] = cos(same))
  per layer (norm / FFN / loss exactly as in train_crosscheck.py), with
  a the attention's input (LN1(x) pre-LN, else x), positions p = 0..N-1:
    RoPE_w(x) at position p turns each pair (x[2i], x[2i+1]) by
              t = p base^(-2i/w): (u cos t - v sin t, u sin t + v cos t)
    mha:      Q, K, V = a W_Q, a W_K, a W_V; head h: columns h*d..(h+1)*d
    gqa:      W_K, W_V d_model x G*d; query head h reads KV head h / (H/G);
    mqa:      G = 1
              (positions rope: every q_h and every KV head's k_g turned, w = d)
    mla:      c = a W_DKV; K = c W_UK; V = c W_UV; s = a W_DQ, Q = s W_UQ with
              a query latent, else s = a, Q = a W_Q; positions rope:
              q_r = s W_QR (head h's d_R columns turned, w = d_R),
              k_r = RoPE(a W_KR) shared by every head; score adds q_r_h . k_r
    S_h     = (q_h k_g^T [+ q_r_h k_r^T]) * scale, scale 1/sqrt(d)
              (mla + rope: 1/sqrt(d + d_R)), 1 with "scale": false
    masks     causal j <= i; sliding_window i-W+1 <= j <= i; none
    sparse    qI = a W_QI, kI = a W_KI, wI = a W_wI;
              I_ij = sum_h wI[i,h] ReLU(qI_h[i] . kI[j]) over the visible keys;
              each query keeps its top_k largest (ties: lower j), which becomes
              the mask.  The selection is a step function: no gradient through
              it, and W_QI, W_KI, W_wI are not trained at all (no decay either)
    softmax   P = softmax over the visible keys (0 elsewhere)
    linear    M = S on visible keys, 0 elsewhere; P = M / rowsum(M)
    Attn(a) = concat_h(P_h V_h) W_O

torch.optim.AdamW(foreach=False) over every weight except the indexer's,
next-token cross-entropy, global grad norm before clipping
(clip_grad_norm_), batch (s - 1) % count at step s.  The linear kernel's
backward is written out (LinearKernel: the same derivative as autograd's, but
exactly 0 on a row with one visible key, where autograd leaves rounding noise
that AdamW would turn into updates) for training; it is checked against
autograd's own form and torch.autograd.gradcheck before anything else.  The
`run` reference differentiates M / rowsum(M) with autograd itself.

Random models avoid the two places where the definition is not smooth: an
indexer score near a tie at a row's top_k boundary (gap < 1e-7, unless both
are exactly 0 from clearly negative dot products, where the tie rule decides;
two keys of a repeated token tie exactly, but a program may round I[i, i]
otherwise than I[i, j], so that is a near tie too), and a linear-kernel row
whose sum is near 0 (|Z| < 0.05 sum |M|).  The reference checks every forward
pass it makes (all 20 training steps and the `run` tokens) and draws the
model again when one occurs.  Linear-kernel layers get positive query and key
weights and, where they can, positive inputs (a large LN bias, positive
embeddings), so most draws pass; some of their rows still have negative
weights.

Groups (one summary line each):
  train      28 seeded models x 20 steps: each step's loss and grad_norm, and
             every weight of OUT.json, to 1e-9 absolute; W_QI / W_KI / W_wI
             in OUT.json bit-identical to the model file; OUT.json keeps the
             model's shape keys (attention blocks, positions, rope_base, ...)
             and no weight the model has not, and `run OUT.json` gives the
             logits of the reference's forward pass of the saved weights;
  run        the same 28 models, `run M --tokens ... --json`: logits, loss, and
             every head's weights, d_weights (d loss / d P) and d_scores
             (d loss / d S, S the scaled scores the kernel reads; 0 on hidden
             keys) against autograd, 1e-10 absolute + 1e-9 relative;
  coverage   every variant (mha, gqa 1 < G < H, gqa G = H, mqa, mla, mla with
             a query latent) x every positions kind (none, sinusoidal,
             learned, rope), each variant with the linear kernel, a sliding
             window and sparse attention, sparse with each mask and kernel,
             with rope and with weight decay, the linear kernel with each
             positions kind (and mla's decoupled rope) and with negative
             weights, masks / scale / kernels, norm x ffn (all 12), 1-3
             layers, mixed variants in one model, rope_base given and left to
             its default, weight decay, betas / eps, clipping that clips and
             that does not.

Run:  /usr/bin/python3 train_variants_crosscheck.py --binary build/app/attention-lab
      [--keep DIR]  write every model, batches and saved file to DIR

Exit status: 0 all agree, 1 any mismatch (or a coverage gap), 2 the binary
cannot be run.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)

SEED = 20264
TOL = 1e-9                            # training: loss, grad_norm, weights (absolute)
GRAD_ATOL, GRAD_RTOL = 1e-10, 1e-9    # run: logits, loss, weights, d_weights, d_scores
LN_EPS = 1e-5
STEPS = 20
N_MODELS = 28
MAX_DRAWS = 60
TIE_GAP = 1e-7                        # smallest indexer gap at a top_k boundary
DOT_MARGIN = 1e-9                     # an exact-zero tie needs every dot below -this
LINEAR_RATIO = 0.05                   # smallest |Z| / sum |M| of a linear-kernel row
NORMS = ("none", "pre", "post")
FFNS = ("none", "relu", "gelu", "swiglu")
POSITIONS = ("none", "sinusoidal", "learned", "rope")
KINDS = ("mha", "gqa", "gqa G=H", "mqa", "mla", "mla q-latent")
MASKS = ("none", "causal", "sliding_window")
INDEXER = ("W_QI", "W_KI", "W_wI")
VOCAB_NAMES = ("<bos>", "a", "b", "c", "the", "cat", "sat", "on", "mat")
LRS = (1e-3, 3e-3, 1e-2, 3e-2)


class Degenerate(Exception):
    """The random model meets a point where the definition is not smooth."""


# --------------------------------------------------------------------------
# The PyTorch reference
# --------------------------------------------------------------------------

def layer_norm(x, gain, bias):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return gain * (x - mean) / torch.sqrt(var + LN_EPS) + bias


def rope(x, base):
    """Each row p of x (N x w) turned pair by pair: t = p base^(-2i/w)."""
    n, w = x.shape
    i = torch.arange(w // 2, dtype=torch.float64)
    t = torch.arange(n, dtype=torch.float64)[:, None] * base ** (-2.0 * i / w)[None, :]
    u, v = x[:, 0::2], x[:, 1::2]
    c, s = torch.cos(t), torch.sin(t)
    return torch.stack([u * c - v * s, u * s + v * c], dim=-1).reshape(n, w)


def rope_heads(x, width, base):
    """RoPE of width `width` on every block of `width` columns of x."""
    return torch.cat([rope(x[:, j:j + width], base) for j in range(0, x.shape[1], width)], dim=1)


def sinusoidal(n, D, base):
    pe = torch.zeros(n, D)
    for p in range(n):
        for col in range(D):
            ang = p / base ** (2 * (col // 2) / D)
            pe[p, col] = math.sin(ang) if col % 2 == 0 else math.cos(ang)
    return pe


class LinearKernel(torch.autograd.Function):
    """P = M / Z, M = S on the visible keys and 0 elsewhere, Z = rowsum(M).

    Its backward is written out, dS = visible * (dP - sum_k dP_k P_k) / Z, the
    same derivative as autograd's dP / Z - (dP . M) / Z^2 but exact where a row
    has one visible key (P = S / S = 1 there, so dS = dP - dP = 0): autograd's
    form leaves rounding noise there, and AdamW's normalised step turns noise in
    a gradient that is 0 into updates of up to lr * noise / eps, so a layer
    whose every row keeps one key (top_k 1) would train on noise.
    self_test() checks it against autograd's own form and central differences."""

    @staticmethod
    def forward(ctx, S, visible):
        M = torch.where(visible, S, torch.zeros(()))
        Z = M.sum(dim=-1, keepdim=True)
        P = M / Z
        ctx.save_for_backward(P, Z, visible)
        return P

    @staticmethod
    def backward(ctx, dP):
        P, Z, visible = ctx.saved_tensors
        dS = torch.where(visible, (dP - (dP * P).sum(dim=-1, keepdim=True)) / Z, torch.zeros(()))
        return dS, None


def self_test():
    """LinearKernel's backward against autograd through M / rowsum(M) and
    against central differences; None if it agrees, else what differs."""
    gen = torch.Generator().manual_seed(5)
    S = (torch.rand(5, 5, generator=gen) + 0.5).requires_grad_(True)
    visible = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    visible &= torch.rand(5, 5, generator=gen) < 0.8
    visible |= torch.eye(5, dtype=torch.bool)
    G = torch.randn(5, 5, generator=gen)
    (LinearKernel.apply(S, visible) * G).sum().backward()
    mine = S.grad.clone()
    S.grad = None
    M = torch.where(visible, S, torch.zeros(()))
    ((M / M.sum(dim=-1, keepdim=True)) * G).sum().backward()
    if not torch.allclose(mine, S.grad, rtol=1e-12, atol=1e-13):
        return "LinearKernel backward differs from autograd's by %.3g" % float(
            (mine - S.grad).abs().max())
    if not torch.autograd.gradcheck(lambda s: LinearKernel.apply(s, visible), (S,)):
        return "LinearKernel fails gradcheck"
    return None


def base_mask(att, n):
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    mask = att.get("mask", "causal")
    if mask == "none":
        return torch.ones(n, n, dtype=torch.bool)
    if mask == "causal":
        return j <= i
    return (j <= i) & (j >= i - att["window"] + 1)


def select(att, W, a, visible, stats):
    """The lightning indexer's top_k selection (a bool N x N mask), no gradient."""
    sp = att["sparse"]
    k = sp["top_k"]
    HI = sp.get("indexer_heads", 1)
    dI = sp.get("indexer_dim", att["head_dim"])
    with torch.no_grad():
        a = a.detach()
        qI, kI, wI = a @ W("W_QI"), a @ W("W_KI"), a @ W("W_wI")
        dots = torch.stack([qI[:, h * dI:(h + 1) * dI] @ kI.T for h in range(HI)])  # HI x N x N
        I = (wI.T[:, :, None] * torch.relu(dots)).sum(dim=0)
    n = a.shape[0]
    chosen = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        cand = [j for j in range(n) if visible[i, j]]
        order = sorted(cand, key=lambda j: (-float(I[i, j]), j))
        for j in order[:k]:
            chosen[i, j] = True
        if len(order) > k:
            hi, lo = order[k - 1], order[k]
            gap = float(I[i, hi] - I[i, lo])
            if gap == 0.0 and float(I[i, hi]) == 0.0 \
                    and bool((dots[:, i, [hi, lo]] < -DOT_MARGIN).all()):
                stats["zero_ties"] = stats.get("zero_ties", 0) + 1      # the tie rule decides
            else:
                # Two equal keys (a repeated token's) tie exactly here, but a
                # program may round I[i, i] otherwise than I[i, j]: a near tie.
                stats["tie_gap"] = min(stats.get("tie_gap", math.inf), gap)
    return chosen


def attention(att, W, a, n, positions, base, stats, record=None, plain=False):
    """concat_h(P_h V_h) W_O; record (a list) gets (P, S) of every head, with
    retain_grad() on both when they take part in autograd; plain: the linear
    kernel as autograd differentiates M / rowsum(M) (else LinearKernel)."""
    variant, H, d = att.get("variant", "mha"), att["heads"], att["head_dim"]
    qr = kr = None
    dR = 0
    if variant == "mla":
        G = H
        c = a @ W("W_DKV")
        k, v = c @ W("W_UK"), c @ W("W_UV")
        if att.get("query_latent_dim", 0) > 0:
            s = a @ W("W_DQ")
            q = s @ W("W_UQ")
        else:
            s = a
            q = a @ W("W_Q")
        if positions == "rope":
            dR = att["rope_dim"]
            qr = rope_heads(s @ W("W_QR"), dR, base)
            kr = rope(a @ W("W_KR"), base)
    else:
        G = {"mha": H, "gqa": att.get("kv_heads"), "mqa": 1}[variant]
        q, k, v = a @ W("W_Q"), a @ W("W_K"), a @ W("W_V")
        if positions == "rope":
            q, k = rope_heads(q, d, base), rope_heads(k, d, base)
    scale = 1.0 / math.sqrt(d + dR) if att.get("scale", True) else 1.0
    visible = base_mask(att, n)
    if att.get("sparse"):
        visible = select(att, W, a, visible, stats)
    linear = att.get("kernel", "softmax") == "linear"
    outs = []
    for h in range(H):
        g = h // (H // G)
        S = q[:, h * d:(h + 1) * d] @ k[:, g * d:(g + 1) * d].T
        if qr is not None:
            S = S + qr[:, h * dR:(h + 1) * dR] @ kr.T
        S = S * scale
        if linear:
            with torch.no_grad():
                M = torch.where(visible, S, torch.zeros(()))
                ratio = float((M.sum(dim=-1).abs() / M.abs().sum(dim=-1)).min())
            stats["linear_ratio"] = min(stats.get("linear_ratio", math.inf), ratio)
            if plain:
                M = torch.where(visible, S, torch.zeros(()))
                P = M / M.sum(dim=-1, keepdim=True)
            else:
                P = LinearKernel.apply(S, visible)
        else:
            P = torch.softmax(S.masked_fill(~visible, float("-inf")), dim=-1)
        if record is not None:
            if S.requires_grad:
                S.retain_grad()
                P.retain_grad()
            record.append((P, S))
        outs.append(P @ v[:, g * d:(g + 1) * d])
    return torch.cat(outs, dim=1) @ W("W_O")


def ffn(kind, W, a):
    if kind == "swiglu":
        g = a @ W("W_1")
        return (g * torch.sigmoid(g) * (a @ W("W_3"))) @ W("W_2")
    h = a @ W("W_1") + W("b_1")
    h = torch.relu(h) if kind == "relu" else F.gelu(h, approximate="none")
    return h @ W("W_2") + W("b_2")


def forward(model, p, ids, stats, record=None, plain=False):
    """Logits (N x V) of a model file's dict `model` with parameters p;
    record: a list that gets one list of (P, S) per layer; plain: see attention()."""
    n = len(ids)
    norm = model.get("norm", "pre")
    kind = model.get("ffn", {}).get("kind", "none")
    positions = model.get("positions", "none")
    base = model.get("rope_base", 10000.0)
    x = p["embedding"][torch.tensor(ids)]
    if positions == "sinusoidal":
        x = x + sinusoidal(n, model["d_model"], base)
    elif positions == "learned":
        x = x + p["W_P"][:n]
    for li, layer in enumerate(model["layers"]):
        W = lambda k: p[("layers", li, k)]  # noqa: E731
        heads = None
        if record is not None:
            heads = []
            record.append(heads)
        a = layer_norm(x, W("ln1_gain"), W("ln1_bias")) if norm == "pre" else x
        att = attention(layer["attention"], W, a, n, positions, base, stats, heads, plain)
        x = layer_norm(x + att, W("ln1_gain"), W("ln1_bias")) if norm == "post" else x + att
        if kind == "none":
            continue
        a = layer_norm(x, W("ln2_gain"), W("ln2_bias")) if norm == "pre" else x
        f = ffn(kind, W, a)
        x = layer_norm(x + f, W("ln2_gain"), W("ln2_bias")) if norm == "post" else x + f
    if norm == "pre":
        x = layer_norm(x, p["final_gain"], p["final_bias"])
    return x @ p["unembedding"]


def params_of(model):
    """Ordered dict key -> float64 leaf tensor (requires_grad) of every weight in
    the model file; key ("layers", li, name) or a top-level name."""
    p = {}
    for li, layer in enumerate(model["layers"]):
        for k, v in layer["weights"].items():
            p[("layers", li, k)] = v
    for k in ("embedding", "W_P", "final_gain", "final_bias", "unembedding"):
        if k in model:
            p[k] = model[k]
    return {k: torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=True)
            for k, v in p.items()}


def is_indexer(key):
    return isinstance(key, tuple) and key[2] in INDEXER


def check_stats(stats, where):
    if stats.get("tie_gap", math.inf) < TIE_GAP:
        raise Degenerate("%s: indexer gap %.3g at a top_k boundary" % (where, stats["tie_gap"]))
    if stats.get("linear_ratio", math.inf) < LINEAR_RATIO:
        raise Degenerate("%s: linear row |Z| / sum|M| = %.3g" % (where, stats["linear_ratio"]))


def batch_loss(model, p, batch, stats):
    logits = torch.cat([forward(model, p, seq, stats)[:-1] for seq in batch])
    targets = torch.tensor([t for seq in batch for t in seq[1:]])
    return F.cross_entropy(logits, targets, reduction="mean")


def reference_train(model, batches, o, steps):
    """[(loss, grad_norm, clipped)] per step and the trained parameters."""
    p = params_of(model)
    trained = [t for key, t in p.items() if not is_indexer(key)]
    for key, t in p.items():
        if is_indexer(key):
            t.requires_grad_(False)
    opt = torch.optim.AdamW(trained, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                            weight_decay=o["weight_decay"], foreach=False)
    out = []
    for s in range(1, steps + 1):
        opt.zero_grad()
        stats = {}
        loss = batch_loss(model, p, batches[(s - 1) % len(batches)], stats)
        check_stats(stats, "training step %d" % s)
        if not math.isfinite(float(loss)) or float(loss) > 50:
            raise Degenerate("training step %d: loss %r" % (s, float(loss)))
        loss.backward()
        if o["clip"] is not None:
            gn = float(torch.nn.utils.clip_grad_norm_(trained, o["clip"]))
        else:
            gn = float(torch.norm(torch.stack([t.grad.norm(2) for t in trained]), 2))
        out.append((float(loss), gn, o["clip"] is not None and gn > o["clip"]))
        opt.step()
    return out, p


def reference_run(model, ids):
    """Logits, loss and per layer per head P, d loss / d P, d loss / d S (numpy),
    all from autograd itself (no written-out backward: no optimiser step follows)."""
    p = params_of(model)
    record, stats = [], {}
    logits = forward(model, p, ids, stats, record, plain=True)
    check_stats(stats, "run tokens")
    loss = F.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="mean")
    loss.backward()
    return {"logits": logits.detach().numpy(), "loss": float(loss),
            "layers": [[{"weights": P.detach().numpy(), "d_weights": P.grad.numpy().copy(),
                         "d_scores": S.grad.numpy().copy()} for P, S in heads]
                       for heads in record]}


# --------------------------------------------------------------------------
# Random models
# --------------------------------------------------------------------------

def normal(rng, shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def layer_spec(idx, li, positions):
    """The attention block of layer li of model idx (no weights)."""
    kind = KINDS[(idx + 2 * li) % 6]
    rope_on = positions == "rope"
    linear = (idx + idx // 6 + 3 * li) % 4 == 0 or (idx, li) in ((13, 1), (17, 0), (20, 0))
    att = {}
    if kind == "mha":
        att.update(variant="mha", heads=1 + (idx + li) % 3)
    elif kind == "gqa":
        H, G = ((4, 2), (6, 3), (6, 2))[(idx // 6 + li) % 3]
        att.update(variant="gqa", heads=H, kv_heads=G)
    elif kind == "gqa G=H":
        H = 2 + (idx + li) % 2
        att.update(variant="gqa", heads=H, kv_heads=H)
    elif kind == "mqa":
        att.update(variant="mqa", heads=2 + (idx // 6 + li) % 2)
    else:
        att.update(variant="mla", heads=1 + (idx + li) % 3)
    if kind.startswith("mla"):
        att["head_dim"] = 1 + (idx + 2 * li) % 4                 # 1 .. 4: rope only on d_R
        att["latent_dim"] = 2 + (idx + li) % 3
        if kind == "mla q-latent":
            att["query_latent_dim"] = 2 + (idx // 2 + li) % 2
        if rope_on:
            att["rope_dim"] = (2, 4)[(idx // 6 + li) % 2]
    elif rope_on:
        att["head_dim"] = 4 if linear else (2, 4)[(idx + li) % 2]
    else:
        att["head_dim"] = 1 + (idx + 3 * li) % 4
    mask = MASKS[(idx + idx // 6 + li) % 3]
    if mask == "causal" and (idx + li) % 4 == 3:
        pass                                                    # left to the default
    else:
        att["mask"] = mask
    if mask == "sliding_window":
        att["window"] = 2 + (idx + li) % 2
    sc = (idx + 2 * li) % 4
    if sc == 1:
        att["scale"] = False
    elif sc == 2:
        att["scale"] = True
    if linear:
        att["kernel"] = "linear"
    elif (idx + li) % 5 == 0:
        att["kernel"] = "softmax"
    if (idx + 2 * (idx // 6) + 2 * li) % 3 == 0:
        sp = {"top_k": 1 + (idx + li) % 3}
        if (idx + li) % 4 != 0:
            sp["indexer_heads"] = 1 + (idx + li) % 2
        if (idx + li) % 5 != 0:
            sp["indexer_dim"] = 1 + (idx // 3 + li) % 3
        att["sparse"] = sp
    return kind, att


def layer_weights(rng, att, D, positions):
    """Every weight the attention block uses.  For the linear kernel the query
    and key projections are positive (on positive inputs every score is then
    positive, so no row sums to nearly 0); with rope, whose turns mix the signs,
    each head's first pair (the fastest turning) gets little of them."""
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


def make_case(idx, rng):
    """Model number idx: its shape (fixed by idx), weights and batches (drawn
    from rng), its optimiser options and the tokens `run` gets."""
    norm, ffn_kind = NORMS[idx % 3], FFNS[(idx // 3) % 4]
    positions = POSITIONS[(idx + idx // 6) % 4]
    D = 4 + (idx * 3) % 5                 # 4 .. 8
    V = 3 + (idx * 5) % 7                 # 3 .. 9
    P = 4 + (idx * 2) % 5                 # 4 .. 8
    n_layers = 1 + (idx + idx // 4) % 3
    if ffn_kind != "none" and n_layers == 3 and idx % 2:
        n_layers = 2
    m = {"name": "train_variants_%d" % idx, "vocab": list(VOCAB_NAMES[:V]), "d_model": D,
         "max_positions": P, "positions": positions, "norm": norm}
    if positions in ("sinusoidal", "rope") and idx % 2 == 1:
        m["rope_base"] = (100.0, 31.5, 10000.0)[(idx // 2) % 3]
    d_ff = 3 + (idx * 5) % 6
    m["ffn"] = {"kind": "none"} if ffn_kind == "none" else {"kind": ffn_kind, "d_ff": d_ff}
    kinds = []
    m["layers"] = []
    for li in range(n_layers):
        kind, att = layer_spec(idx, li, positions)
        kinds.append(kind)
        W = layer_weights(rng, att, D, positions)
        if norm != "none":
            W["ln1_gain"] = 1.0 + normal(rng, D, 0.2)
            W["ln1_bias"] = normal(rng, D, 0.2)
        if ffn_kind != "none":
            if norm != "none":
                W["ln2_gain"] = 1.0 + normal(rng, D, 0.2)
                W["ln2_bias"] = normal(rng, D, 0.2)
            W["W_1"] = normal(rng, (D, d_ff), 1 / math.sqrt(D))
            W["W_2"] = normal(rng, (d_ff, D), 1 / math.sqrt(d_ff))
            if ffn_kind == "swiglu":
                W["W_3"] = normal(rng, (D, d_ff), 1 / math.sqrt(D))
            else:
                W["b_1"] = normal(rng, d_ff, 0.2)
                W["b_2"] = normal(rng, D, 0.2)
        m["layers"].append({"attention": att, "weights": W})
    # Positive inputs to the linear-kernel layers: a large LN bias where a norm
    # feeds the layer (its own LN1 with pre-LN, the previous layer's last LN
    # with post-LN), positive embeddings for a first layer without pre-LN.
    positive_embedding = False
    for li, layer in enumerate(m["layers"]):
        if layer["attention"].get("kernel") != "linear":
            continue
        if norm == "pre":
            feed = (li, "ln1")
        elif norm == "post" and li > 0:
            feed = (li - 1, "ln1" if ffn_kind == "none" else "ln2")
        else:
            feed = None
            positive_embedding = positive_embedding or li == 0
        if feed:
            W = m["layers"][feed[0]]["weights"]
            W[feed[1] + "_gain"] = 0.7 + normal(rng, D, 0.1)
            W[feed[1] + "_bias"] = 2.5 + normal(rng, D, 0.2)
    if positive_embedding:
        m["embedding"] = 2.5 + np.abs(normal(rng, (V, D), 0.7))
    else:
        m["embedding"] = normal(rng, (V, D))
    if positions == "learned":
        m["W_P"] = normal(rng, (P, D), 0.3 if positive_embedding else 0.5)
    if norm == "pre":
        m["final_gain"] = 1.0 + normal(rng, D, 0.2)
        m["final_bias"] = normal(rng, D, 0.2)
    m["unembedding"] = normal(rng, (D, V), 1 / math.sqrt(D))
    m["seed"] = 1
    m = tolist(m)

    batches = []
    for b in range(1 + idx % 3):
        seqs = []
        for s in range(1 + (idx + b) % 4):
            if s == 0 and b == 0:
                n = P
            elif s == 1:
                n = 2
            else:
                n = int(rng.integers(2, P + 1))
            seqs.append([int(t) for t in rng.integers(0, V, size=n)])
        batches.append(seqs)
    run_ids = [int(t) for t in rng.integers(0, V, size=int(rng.integers(max(2, P - 2), P + 1)))]

    opt = {"lr": LRS[idx % 4], "weight_decay": 0.0, "clip": None,
           "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    flags = ["--lr", repr(opt["lr"])]
    if (idx + idx // 3) % 3 == 1 or idx % 7 == 0:
        opt["weight_decay"] = (0.01, 0.1)[idx % 2]
        flags += ["--weight-decay", repr(opt["weight_decay"])]
    if (idx + idx // 3) % 3 == 2 or idx in (3, 11):
        opt["clip"] = (0.5, 2.0)[(idx // 2) % 2]
        flags += ["--clip", repr(opt["clip"])]
    if idx % 4 == 3:
        opt.update(beta1=0.8, beta2=0.99, eps=1e-6)
        flags += ["--beta1", "0.8", "--beta2", "0.99", "--eps", "1e-06"]
    return {"idx": idx, "model": m, "kinds": kinds, "batches": batches, "run_ids": run_ids,
            "opt": opt, "flags": flags}


def tolist(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, dict):
        return {k: tolist(v) for k, v in o.items()}
    if isinstance(o, list):
        return [tolist(v) for v in o]
    return o


def prepared_case(idx, rng):
    """A case whose reference meets no degenerate point: (case, train ref,
    trained params, run ref, draws), or None after MAX_DRAWS draws."""
    for draw in range(1, MAX_DRAWS + 1):
        c = make_case(idx, rng)
        try:
            ref, params = reference_train(c["model"], c["batches"], c["opt"], STEPS)
            run_ref = reference_run(c["model"], c["run_ids"])
        except Degenerate:
            continue
        return c, ref, params, run_ref, draw
    return None


def describe(c):
    m = c["model"]
    parts = []
    for kind, layer in zip(c["kinds"], m["layers"]):
        a = layer["attention"]
        s = "%s H%d d%d" % (kind, a["heads"], a["head_dim"])
        if a["variant"] == "gqa":
            s += " G%d" % a["kv_heads"]
        if a["variant"] == "mla":
            s += " dc%d" % a["latent_dim"] + (" dq%d" % a["query_latent_dim"]
                                              if "query_latent_dim" in a else "")
            s += " dR%d" % a["rope_dim"] if "rope_dim" in a else ""
        s += " " + a.get("mask", "causal(default)")
        s += "(%d)" % a["window"] if "window" in a else ""
        s += "" if a.get("scale", True) else " unscaled"
        s += " linear" if a.get("kernel") == "linear" else ""
        if "sparse" in a:
            s += " sparse%r" % (a["sparse"],)
        parts.append(s)
    return "model %d (%s, norm %s, ffn %s; %s)" % (c["idx"], m["positions"], m["norm"],
                                                   m["ffn"]["kind"], " | ".join(parts))


# --------------------------------------------------------------------------
# Running the binary and comparing
# --------------------------------------------------------------------------

class Group:
    def __init__(self, name):
        self.name = name
        self.cases = self.failed_cases = self.values = 0
        self.max_err = {}

    def summary(self, extra=""):
        errs = ", ".join("%s %.1e" % kv for kv in sorted(self.max_err.items()))
        return "%-6s %s: %d cases, %d failed, %d values compared%s%s" % (
            self.name, "ok  " if not self.failed_cases else "FAIL", self.cases,
            self.failed_cases, self.values, ("; max |diff| " + errs) if errs else "",
            ("; " + extra) if extra else "")


class Case:
    def __init__(self, group, label):
        self.group, self.label = group, label
        self.errors = []
        group.cases += 1

    def fail(self, msg):
        self.errors.append(msg)

    def close(self):
        if self.errors:
            self.group.failed_cases += 1
            for e in self.errors[:8]:
                print("MISMATCH %s: %s" % (self.label, e))
            if len(self.errors) > 8:
                print("MISMATCH %s: ... and %d more" % (self.label, len(self.errors) - 8))
        return not self.errors


def compare(case, what, expected, found, atol, rtol=0.0, kind=None):
    """Cell by cell; one report (the first bad cell, and how many) per array;
    the largest difference is kept per kind (default: the last word of what)."""
    exp = np.asarray(expected, dtype=np.float64)
    try:
        got = np.asarray(found, dtype=np.float64)
    except (TypeError, ValueError):
        case.fail("%s: not a numeric array (%r)" % (what, str(found)[:80]))
        return False
    if got.shape != exp.shape:
        case.fail("%s: shape %s, expected %s" % (what, got.shape, exp.shape))
        return False
    case.group.values += exp.size
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - exp)
    key = kind or what.split(" ")[-1]
    if exp.size:
        worst = float(np.nanmax(diff)) if np.isfinite(diff).all() else math.inf
        case.group.max_err[key] = max(case.group.max_err.get(key, 0.0), worst)
    bad = ~(diff <= atol + rtol * np.abs(exp))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        case.fail("%s%s: expected %.17g, found %.17g (|diff| %.3g; %d of %d cells differ)" % (
            what, "".join("[%d]" % i for i in idx), exp[idx], got[idx], diff[idx],
            int(bad.sum()), bad.size))
        return False
    return True


class BinaryError(Exception):
    pass


class Binary:
    def __init__(self, path, folder):
        self.path, self.folder = path, folder
        self.runs = 0

    def write(self, name, obj):
        path = os.path.join(self.folder, name)
        with open(path, "w") as f:
            json.dump(obj, f)
        return path

    def run(self, args):
        self.runs += 1
        try:
            return subprocess.run([self.path] + [str(a) for a in args], capture_output=True,
                                  text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            raise BinaryError(str(e))


def weight_of(doc, key):
    try:
        if isinstance(key, tuple):
            return doc["layers"][key[1]]["weights"][key[2]]
        return doc[key]
    except (KeyError, IndexError, TypeError):
        return None


def key_name(key):
    return "layers[%d].weights.%s" % (key[1], key[2]) if isinstance(key, tuple) else key


def check_train(g, binary, c, ref, params):
    m = c["model"]
    i = c["idx"]
    case = Case(g, describe(c))
    mpath = binary.write("model_%d.json" % i, m)
    bpath = binary.write("batches_%d.json" % i, {"batches": c["batches"]})
    opath = os.path.join(binary.folder, "trained_%d.json" % i)
    r = binary.run(["train", "--model", mpath, "--batches", bpath, "--steps", STEPS,
                    "--save", opath, "--json"] + c["flags"])
    if r.returncode != 0:
        case.fail("train exit %d: %s" % (r.returncode, r.stderr.strip()[:300]))
        return case.close()
    try:
        out = json.loads(r.stdout)
        steps = out["steps"]
        assert isinstance(steps, list)
    except (ValueError, KeyError, TypeError, AssertionError):
        case.fail("train --json: no steps in %r" % r.stdout[:200])
        return case.close()
    if len(steps) != STEPS:
        case.fail("%d steps, expected %d" % (len(steps), STEPS))
    for s, (row, (loss, gn, _)) in enumerate(zip(steps, ref), start=1):
        if not isinstance(row, dict) or row.get("step") != s:
            case.fail("step %d: the row is %r" % (s, row))
            continue
        compare(case, "step %d loss" % s, loss, row.get("loss"), TOL)
        compare(case, "step %d grad_norm" % s, gn, row.get("grad_norm"), TOL)
    try:
        with open(opath) as f:
            saved = json.load(f)
    except (OSError, ValueError) as e:
        case.fail("cannot read the saved model: %s" % e)
        return case.close()
    for key, t in params.items():
        found = weight_of(saved, key)
        if found is None:
            case.fail("saved file has no %s" % key_name(key))
            continue
        if is_indexer(key):
            g.values += 1
            given = weight_of(m, key)
            if found != given:
                case.fail("saved %s differs from the model file's (the indexer must not train): "
                          "max |diff| %.3g" % (key_name(key), float(np.max(np.abs(
                              np.asarray(found, dtype=np.float64) - np.asarray(given))))))
            continue
        compare(case, "saved " + key_name(key), t.detach().numpy(), found, TOL, kind="weights")
    # The saved file keeps the model's shape and holds no weight the model has not.
    for k in ("vocab", "d_model", "max_positions", "positions", "norm", "ffn", "rope_base"):
        got = saved.get(k, {"kind": "none"} if k == "ffn" else None)     # ffn defaults to none
        if k in m and got != m[k]:
            case.fail("saved %s is %r, expected %r" % (k, got, m[k]))
    extra = sorted({"W_P", "final_gain", "final_bias"} & set(saved) - set(m))
    for li, layer in enumerate(m["layers"]):
        try:
            sl = saved["layers"][li]
            extra += ["layers[%d].weights.%s" % (li, k) for k in sorted(set(sl["weights"])
                                                                       - set(layer["weights"]))]
            for k, v in layer["attention"].items():
                got = sl["attention"].get(k)
                if isinstance(v, dict) and isinstance(got, dict):
                    got = {kk: got.get(kk) for kk in v}
                if got != v:
                    case.fail("saved layers[%d].attention.%s is %r, expected %r" % (li, k, got, v))
        except (KeyError, IndexError, TypeError):
            case.fail("saved layers[%d] is missing or malformed" % li)
    if extra:
        case.fail("saved file has weights the model has not: %s" % ", ".join(extra))
    # It runs, and its logits are the reference's forward pass of the saved
    # weights (the trained weights themselves are compared above; how far
    # the logits move with a 1e-10 change of them depends on the model).
    seq = c["batches"][0][0]
    r = binary.run(["run", opath, "--tokens", " ".join(m["vocab"][t] for t in seq), "--json"])
    if r.returncode != 0:
        case.fail("`run` rejects the saved model (exit %d): %s" % (r.returncode, r.stderr.strip()))
    elif not case.errors:
        with torch.no_grad():
            logits = forward(saved, params_of(saved), seq, {}).numpy()
        compare(case, "run(saved) logits", logits, json.loads(r.stdout).get("logits"),
                GRAD_ATOL, GRAD_RTOL)
    return case.close()


def check_run(g, binary, c, ref):
    m = c["model"]
    ids = c["run_ids"]
    case = Case(g, describe(c) + " on %d tokens" % len(ids))
    mpath = os.path.join(binary.folder, "model_%d.json" % c["idx"])
    r = binary.run(["run", mpath, "--tokens", " ".join(m["vocab"][t] for t in ids), "--json"])
    if r.returncode != 0:
        case.fail("run exit %d: %s" % (r.returncode, r.stderr.strip()[:300]))
        return case.close()
    try:
        out = json.loads(r.stdout)
        layers = out["layers"]
        assert isinstance(layers, list) and len(layers) == len(m["layers"])
    except (ValueError, KeyError, TypeError, AssertionError):
        case.fail("run --json: no layers list of %d in %r" % (len(m["layers"]), r.stdout[:200]))
        return case.close()
    compare(case, "logits", ref["logits"], out.get("logits"), GRAD_ATOL, GRAD_RTOL)
    compare(case, "loss", ref["loss"], out.get("loss"), GRAD_ATOL, GRAD_RTOL)
    for li, (rl, fl) in enumerate(zip(ref["layers"], layers)):
        hs = (fl.get("attention") or {}).get("heads") if isinstance(fl, dict) else None
        if not isinstance(hs, list) or len(hs) != len(rl):
            case.fail("layer %d: expected %d heads" % (li, len(rl)))
            continue
        for h, (rh, fh) in enumerate(zip(rl, hs)):
            for k in ("weights", "d_weights", "d_scores"):
                if not isinstance(fh, dict) or k not in fh:
                    case.fail("layer %d head %d: no %s" % (li, h, k))
                    continue
                compare(case, "layer %d head %d %s" % (li, h, k), rh[k], fh[k],
                        GRAD_ATOL, GRAD_RTOL)
    return case.close()


# --------------------------------------------------------------------------
# Coverage
# --------------------------------------------------------------------------

def note_coverage(seen, c, ref, run_ref):
    m = c["model"]
    pos, norm, fk = m["positions"], m["norm"], m["ffn"]["kind"]
    seen.update({"positions " + pos, "norm %s ffn %s" % (norm, fk), "layers %d" % len(m["layers"]),
                 "rope_base %s" % ("given" if "rope_base" in m else "default")
                 if pos in ("sinusoidal", "rope") else "-"})
    if len(set(c["kinds"])) > 1:
        seen.add("mixed variants")
    o = c["opt"]
    for kind, layer in zip(c["kinds"], m["layers"]):
        a = layer["attention"]
        mask = a.get("mask", "causal")
        kernel = a.get("kernel", "softmax")
        seen.update({"variant " + kind, "%s x %s" % (kind, pos), "mask " + mask,
                     "kernel " + kernel, "scale %s" % a.get("scale", True),
                     "%s kernel %s" % (kind, kernel), "%s mask %s" % (kind, mask),
                     "kernel %s %s%s" % (kernel, pos, " mla" if kind.startswith("mla") else "")})
        if "mask" not in a:
            seen.add("mask default")
        if "sparse" in a:
            seen.update({"%s sparse" % kind, "sparse mask " + mask, "sparse kernel " + kernel,
                         "sparse " + pos})
            if o["weight_decay"]:
                seen.add("sparse weight decay")
            sp = a["sparse"]
            seen.add("sparse indexer defaults" if "indexer_heads" not in sp
                     or "indexer_dim" not in sp else "sparse indexer given")
    if o["weight_decay"]:
        seen.add("weight decay")
    if any(float(P.min()) < 0 for hs in run_ref["layers"] for h in hs for P in [h["weights"]]):
        seen.add("negative linear weights")
    if o["clip"] is not None:
        seen.add("clipped" if any(cl for _, _, cl in ref) else "-")
        seen.add("unclipped under --clip" if not all(cl for _, _, cl in ref) else "-")
    if o["beta1"] != 0.9:
        seen.add("betas eps")


REQUIRED = ({"variant " + k for k in KINDS}
            | {"%s x %s" % (k, p) for k in KINDS for p in POSITIONS}
            | {"%s kernel linear" % k for k in KINDS}
            | {"%s mask sliding_window" % k for k in KINDS}
            | {"%s sparse" % k for k in KINDS}
            | {"sparse mask " + m for m in MASKS}
            | {"sparse kernel softmax", "sparse kernel linear", "sparse weight decay",
               "sparse rope", "sparse indexer defaults", "sparse indexer given"}
            | {"positions " + p for p in POSITIONS}
            | {"mask " + m for m in MASKS} | {"mask default"}
            | {"kernel softmax", "kernel linear", "scale True", "scale False"}
            | {"kernel linear " + p for p in POSITIONS}
            | {"kernel linear rope mla", "negative linear weights"}
            | {"norm %s ffn %s" % (n, f) for n in NORMS for f in FFNS}
            | {"layers 1", "layers 2", "layers 3", "mixed variants", "rope_base given",
               "rope_base default", "weight decay", "clipped", "unclipped under --clip",
               "betas eps"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="path to attention-lab")
    parser.add_argument("--keep", help="write the model, batches and saved files here")
    args = parser.parse_args()
    start = time.time()
    try:
        subprocess.run([args.binary, "--version"], capture_output=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        print("error: cannot run the binary %r: %s" % (args.binary, e), file=sys.stderr)
        return 2
    why = self_test()
    if why:
        print("error: the reference's own check fails: " + why)
        return 1
    folder = args.keep or tempfile.mkdtemp(prefix="train_variants_")
    os.makedirs(folder, exist_ok=True)
    binary = Binary(args.binary, folder)
    rng = np.random.default_rng(SEED)
    gt, gr = Group("train"), Group("run")
    seen = set()
    draws = 0
    try:
        for idx in range(N_MODELS):
            prepared = prepared_case(idx, rng)
            if prepared is None:
                print("MISMATCH model %d: no draw in %d avoids a near tie or a linear row "
                      "summing to nearly 0 (change SEED or the model's shape)" % (idx, MAX_DRAWS))
                gt.cases += 1
                gt.failed_cases += 1
                continue
            c, ref, params, run_ref, n = prepared
            draws += n
            check_train(gt, binary, c, ref, params)
            check_run(gr, binary, c, run_ref)
            note_coverage(seen, c, ref, run_ref)
    except BinaryError as e:
        print("error: cannot run the binary %r: %s" % (args.binary, e), file=sys.stderr)
        return 2
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    gaps = sorted(REQUIRED - seen)
    print(gt.summary("%d steps each" % STEPS))
    print(gr.summary())
    print("coverage: %s" % ("complete (%d combinations)" % len(REQUIRED) if not gaps
                            else "MISSING " + ", ".join(gaps)))
    print("  variant x positions: %s" % ", ".join(sorted(s for s in seen if " x " in s)))
    print("  also: %s" % ", ".join(sorted(s for s in seen if " x " not in s and s != "-")))
    failed = gt.failed_cases + gr.failed_cases
    print("%s: %d models (%d draws), %d failed, %d binary runs, %.1f s" % (
        "ok" if not failed and not gaps else "FAIL", N_MODELS, draws, failed, binary.runs,
        time.time() - start))
    return 0 if not failed and not gaps else 1


if __name__ == "__main__":
    sys.exit(main())
