"""The PyTorch reference of the training cross-checks, held once: a model
file's forward pass (every variant, positions kind, mask, kernel and sparse
attention) with autograd through it, the next-token loss, and AdamW.

Written from the specification only (README "Models", "Training"),
never from the C++ sources.  float64 throughout (importing this module makes
it torch's default, on one thread, so that runs repeat exactly), row vectors
(x W).  A model is the dict of a model file; parameters p: key -> tensor, the
key ("layers", li, name) for a layer's weight, else the top-level name.
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

from reference import DEFAULT_ROPE_BASE, LN_EPS

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)

INDEXER = ("W_QI", "W_KI", "W_wI")     # the indexer selects; it does not train
TIE_GAP = 1e-7                         # smallest indexer gap at a top_k boundary
DOT_MARGIN = 1e-9                      # an exact-zero tie needs every dot below -this
LINEAR_RATIO = 0.05                    # smallest |Z| / sum |M| of a linear-kernel row


class Degenerate(Exception):
    """The model meets a point where the definition is not smooth."""


# --------------------------------------------------------------------------
# Pieces
# --------------------------------------------------------------------------

def layer_norm(x, gain, bias):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return gain * (x - mean) / torch.sqrt(var + LN_EPS) + bias


def ffn(kind, W, a):
    """relu / gelu: act(a W_1 + b_1) W_2 + b_2;  swiglu: (silu(a W_1) * a W_3) W_2."""
    if kind == "swiglu":
        g = a @ W("W_1")
        return (g * torch.sigmoid(g) * (a @ W("W_3"))) @ W("W_2")
    h = a @ W("W_1") + W("b_1")
    h = torch.relu(h) if kind == "relu" else F.gelu(h, approximate="none")
    return h @ W("W_2") + W("b_2")


def ffn_kind(model):
    f = model.get("ffn", {"kind": "none"})
    return f.get("kind", "none") if isinstance(f, dict) else f


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


# --------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------

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


def projections(att, W, a, positions, base):
    """(q, k, v, q_R, k_R, rope_dim, G) of a layer reading a: mla expands k, v
    (and q with a query latent) from latents and appends decoupled RoPE
    parts; the others' RoPE turns every head's q and k."""
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
    return q, k, v, qr, kr, dR, G


def kernel(S, visible, linear, plain, stats):
    """The weights P of scaled scores S: softmax over the visible keys, or the
    linear kernel M / rowsum(M) (plain: as autograd differentiates it)."""
    if not linear:
        return torch.softmax(S.masked_fill(~visible, float("-inf")), dim=-1)
    with torch.no_grad():
        M = torch.where(visible, S, torch.zeros(()))
        ratio = float((M.sum(dim=-1).abs() / M.abs().sum(dim=-1)).min())
    stats["linear_ratio"] = min(stats.get("linear_ratio", math.inf), ratio)
    if plain:
        M = torch.where(visible, S, torch.zeros(()))
        return M / M.sum(dim=-1, keepdim=True)
    return LinearKernel.apply(S, visible)


def attention(att, W, a, n, positions, base, stats, record=None, plain=False):
    """concat_h(P_h V_h) W_O, S_h = q_h k_g^T (+ q_R^h k_R^T) / sqrt(d + d_R);
    record (a list) gets (P, S) of every head, with retain_grad() on both when
    they take part in autograd; plain: see kernel()."""
    H, d = att["heads"], att["head_dim"]
    q, k, v, qr, kr, dR, G = projections(att, W, a, positions, base)
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
        if att.get("scale", True):
            S = S / math.sqrt(d + dR)
        P = kernel(S, visible, linear, plain, stats)
        if record is not None:
            if S.requires_grad:
                S.retain_grad()
                P.retain_grad()
            record.append((P, S))
        outs.append(P @ v[:, g * d:(g + 1) * d])
    return torch.cat(outs, dim=1) @ W("W_O")


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------

def forward(model, p, ids, stats=None, record=None, plain=False):
    """Logits (N x V) of a model file's dict `model` with parameters p: the
    embedding (+ positions), per layer the attention and feed-forward
    sublayers with their residuals (norm pre: before each sublayer and at the
    end; post: after each residual sum; none), the unembedding.  stats gets
    the degenerate points met (see check_stats); record: a list that gets one
    list of (P, S) per layer; plain: see kernel()."""
    stats = {} if stats is None else stats
    n = len(ids)
    norm = model.get("norm", "pre")
    kind = ffn_kind(model)
    positions = model.get("positions", "none")
    base = model.get("rope_base", DEFAULT_ROPE_BASE)
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


def params_of(model, grad=True):
    """Ordered dict key -> float64 leaf tensor of every weight in the model
    file (requires_grad with grad)."""
    p = {}
    for li, layer in enumerate(model["layers"]):
        for k, v in layer["weights"].items():
            p[("layers", li, k)] = v
    for k in ("embedding", "W_P", "final_gain", "final_bias", "unembedding"):
        if k in model:
            p[k] = model[k]
    return {k: torch.tensor(np.asarray(v, dtype=np.float64), requires_grad=grad)
            for k, v in p.items()}


def is_indexer(key):
    return isinstance(key, tuple) and key[2] in INDEXER


def check_stats(stats, where):
    """Degenerate if the pass met a near tie at a top_k cut or a linear row
    whose Z nearly cancels (there the derivative is not smooth)."""
    if stats.get("tie_gap", math.inf) < TIE_GAP:
        raise Degenerate("%s: indexer gap %.3g at a top_k boundary" % (where, stats["tie_gap"]))
    if stats.get("linear_ratio", math.inf) < LINEAR_RATIO:
        raise Degenerate("%s: linear row |Z| / sum|M| = %.3g" % (where, stats["linear_ratio"]))


# --------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------

def batch_loss(model, p, batch, stats=None):
    """Mean next-token cross-entropy over every sequence of the batch."""
    logits = torch.cat([forward(model, p, seq, stats)[:-1] for seq in batch])
    targets = torch.tensor([t for seq in batch for t in seq[1:]])
    return F.cross_entropy(logits, targets, reduction="mean")


def train(model, p, batches, o, steps, trained=None, lr_at=None, check=None):
    """AdamW (torch.optim.AdamW: decoupled weight decay, bias-corrected
    moments) on parameters p, batch s - 1 mod len(batches) at step s;
    o: lr, beta1, beta2, eps, weight_decay, clip (None: no clipping).
    trained: the tensors that train (default every one of p); lr_at(s): the
    learning rate of step s (default o["lr"]); check(s, loss, stats) may
    raise before the step.  [(loss, grad_norm, clipped)] per step."""
    plist = list(p.values()) if trained is None else trained
    opt = torch.optim.AdamW(plist, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
                            weight_decay=o["weight_decay"], foreach=False)
    clip = o.get("clip")
    out = []
    for s in range(1, steps + 1):
        if lr_at is not None:
            for grp in opt.param_groups:
                grp["lr"] = lr_at(s)
        opt.zero_grad()
        stats = {}
        loss = batch_loss(model, p, batches[(s - 1) % len(batches)], stats)
        if check is not None:
            check(s, loss, stats)
        loss.backward()
        if clip is not None:
            gn = float(torch.nn.utils.clip_grad_norm_(plist, clip))
        else:
            gn = float(torch.norm(torch.stack([t.grad.norm(2) if t.grad is not None
                                               else torch.zeros(()) for t in plist]), 2))
        out.append((float(loss), gn, clip is not None and gn > clip))
        opt.step()
    return out


def reference_run(model, ids):
    """Logits, loss and per layer per head P, d loss / d P, d loss / d S (numpy),
    all from autograd itself (no written-out backward: no optimiser step
    follows); on a single token no loss and no gradients."""
    if len(ids) < 2:
        p = params_of(model, grad=False)
        record = []
        logits = forward(model, p, ids, {}, record)
        return {"logits": logits.numpy(), "loss": None,
                "layers": [[{"weights": P.numpy(), "d_weights": None, "d_scores": None}
                            for P, _ in heads] for heads in record]}
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
