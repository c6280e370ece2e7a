#!/usr/bin/python3
"""Independent PyTorch cross-check of the attention gradients of `attention-lab run --json`.

Written from the specification only (never from the C++ sources).  For any
model (training supports every kind a model file can hold) and at least 2
tokens, `run MODEL --tokens T --json` must print

  "loss"        the mean over positions i = 0 .. N-2 of
                -log softmax(logits_i)[id of token i + 1]
                (next-token cross-entropy; the last position has no target);
  per head      "weights"   its attention matrix P (N x N; masked keys 0),
                "d_weights" d loss / d P, all N x N entries as autograd gives
                            them when P is used as P @ V_head (masked entries
                            included),
                "d_scores"  d loss / d S, S what the kernel reads: the scores
                            q.k / sqrt(head_dim) (unscaled with "scale": false),
                            masked entries -inf; with the softmax kernel each
                            row is (diag(p) - p p^T) (row of d_weights), 0 on
                            masked keys; with the linear kernel (P = M / Z, M the
                            scores on visible keys and 0 elsewhere, Z = rowsum M)
                            it is mask * (d_weights_row - sum_k d_weights_k p_k) / Z.

With a single token "loss", "d_weights" and "d_scores" must be absent (each
head keeps "weights").

The reference is the float64 PyTorch forward pass of reference_torch.py
(every variant, positions kind, mask, kernel and sparse attention), with
retain_grad() on each head's P and S and torch.nn.functional.cross_entropy;
for mha layers it is:

  x = embedding[ids] (+ W_P[0 .. N-1] with learned positions)
  per layer (norm pre / post / none; LN(x) = gain (x - mean) / sqrt(var + 1e-5)
  + bias, biased variance):
    Attn(a): q, k, v = a W_Q, a W_K, a W_V; head h uses columns h*d .. (h+1)*d;
             S_h = q_h k_h^T [/ sqrt d], causal: -inf above the diagonal;
             P_h = softmax(S_h); Attn(a) = concat_h(P_h v_h) W_O
    FFN(a):  relu / gelu(erf): act(a W_1 + b_1) W_2 + b_2;
             swiglu: (silu(a W_1) * (a W_3)) W_2
    pre:  x = x + Attn(LN1(x)); x = x + FFN(LN2(x))   (LN_final at the end)
    post: x = LN1(x + Attn(x)); x = LN2(x + FFN(x))
    none: x = x + Attn(x);      x = x + FFN(x)
  logits = x unembedding.

Every compared model gives every weight (the program draws missing ones from
the seed, which this reference cannot know): assets/models/induction.json, the
generated and variant models written here with all their weights, and two
models whose weights `train --steps 1 --save` writes.

Groups (one summary line each):
  induction   assets/models/induction.json on 32 tokens of its vocabulary with
              a repeated segment (the induction pattern);
  generated   6 models covering norm none / pre / post, ffn none / relu / gelu /
              swiglu, positions none / learned, masks causal / none (written
              and by default), scale on / off (and by default), 1-3 layers,
              1-4 heads, head_dim 1-4, each on 2-8 tokens;
  train-saved two models with no weights saved by `train --steps 1 --save`
              (mha; and rope with a sparse gqa layer and an mla layer with a
              query latent);
  seeded      assets/models/tiny.json and tiny_post.json (learned positions;
              their weights come from the seed): the keys must be there and the
              invariants must hold (no reference values);
  variants    models giving every weight, each one change away from a base
              model: positions rope, sinusoidal (rope_base 100), a gqa layer
              (also gqa with kv_heads = heads), an mqa layer, an mla layer (also
              one with a query latent and rope), the linear kernel, a
              sliding-window mask, sparse attention (also sparse with the
              linear kernel), each against the reference;
  absence     a single token (the keys absent; the weights still the
              reference's) on induction.json, the base model and a rope model
              with a sparse and a linear mla layer, and 2 tokens (present);
  invariants  on every output that has d_scores: P and d_scores are 0 on
              masked keys (exactly; for sparse and linear-kernel layers the
              mask, the selection included, and Z are the row_sum and mask of
              `trace MODEL --layer L --json`), each row of P sums to 1; softmax
              rows: d_scores sums to 0 (1e-12) and equals (diag(p) - p p^T)
              (row of d_weights); linear rows: d_scores = mask (d_weights_row -
              sum_k d_weights_k p_k) / Z, all from the binary's own numbers.

Compared: tokens, each head's weights, logits (sanity of the forward pass),
loss (1e-12 relative), d_weights and d_scores (1e-10 absolute + 1e-9 relative).

Run:  /usr/bin/python3 attention_gradients_crosscheck.py --binary build/app/attention-lab
      [--keep DIR]  keep every model file written in DIR

Exit status: 0 all agree, 1 any disagreement (each printed with model, layer,
head, cell, expected and found), 2 the binary cannot be run.
"""

import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import (Binary, BinaryError, Case, Group, cannot_run, command_line,  # noqa: E402
                       layer_weights, probe, sublayer_weights, tolist, work_folder)
from reference import compare_cells as compare  # noqa: E402
from reference_torch import Degenerate, ffn_kind, reference_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MODELS = os.path.join(ROOT, "assets", "models")

SEED = 20262
LOSS_RTOL = 1e-12
GRAD_ATOL, GRAD_RTOL = 1e-10, 1e-9
FWD_ATOL, FWD_RTOL = 1e-10, 1e-9
ROWSUM_TOL = 1e-12
GRAD_KEYS = ("d_weights", "d_scores")
VOCAB_NAMES = ("<s>", "a", "b", "c", "the", "cat", "sat", "on", "mat", "dog")


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

def as_matrix(found):
    try:
        a = np.asarray(found, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return a


# --------------------------------------------------------------------------
# Running the binary
# --------------------------------------------------------------------------

# --------------------------------------------------------------------------
# The model file and the PyTorch reference
# --------------------------------------------------------------------------

# --------------------------------------------------------------------------
# Checks of one output
# --------------------------------------------------------------------------

def found_heads(case, out, model):
    """[[head dict]] of the output, checking the layer and head counts."""
    layers = out.get("layers")
    if not isinstance(layers, list) or len(layers) != len(model["layers"]):
        case.fail("layers: expected a list of %d, found %s" % (
            len(model["layers"]), len(layers) if isinstance(layers, list) else repr(layers)[:40]))
        return None
    res = []
    for li, (fl, ml) in enumerate(zip(layers, model["layers"])):
        H = ml["attention"]["heads"]
        hs = (fl.get("attention") or {}).get("heads") if isinstance(fl, dict) else None
        if not isinstance(hs, list) or len(hs) != H or not all(isinstance(h, dict) for h in hs):
            case.fail("layer %d attention.heads: expected %d objects" % (li, H))
            return None
        res.append(hs)
    return res


def check_against_reference(case, model, ids, out, ref):
    names = [model["vocab"][i] for i in ids]
    if out.get("tokens") != names:
        case.fail("tokens: expected %r, found %r" % (names, out.get("tokens")))
    heads = found_heads(case, out, model)
    compare(case, "logits", ref["logits"], out.get("logits"), FWD_ATOL, FWD_RTOL)
    if ref["loss"] is not None:
        found = out.get("loss")
        if not isinstance(found, (int, float)) or isinstance(found, bool):
            case.fail("loss: expected %.17g, found %r" % (ref["loss"], found))
        else:
            case.group.values += 1
            diff = abs(found - ref["loss"])
            case.group.note_err("loss(rel)", diff / abs(ref["loss"]))
            if not diff <= LOSS_RTOL * abs(ref["loss"]):
                case.fail("loss: expected %.17g, found %.17g (relative diff %.3g > %g)" % (
                    ref["loss"], found, diff / abs(ref["loss"]), LOSS_RTOL))
    if heads is None:
        return
    for li, (rl, fl) in enumerate(zip(ref["layers"], heads)):
        for h, (rh, fh) in enumerate(zip(rl, fl)):
            where = "layer %d, head %d, " % (li, h)
            compare(case, "weights", rh["weights"], fh.get("weights"), FWD_ATOL, FWD_RTOL, where)
            if ref["loss"] is None:
                continue
            for key in GRAD_KEYS:
                if key not in fh:
                    case.fail("%s%s: missing (expected on %d tokens)" % (where, key, len(ids)))
                    continue
                compare(case, key, rh[key], fh[key], GRAD_ATOL, GRAD_RTOL, where)


def check_presence(case, model, n, out, heads):
    """Keys present on >= 2 tokens, absent on a single token."""
    want = n >= 2
    reason = "a single token" if n < 2 else "%d tokens" % n
    if ("loss" in out) != want:
        case.fail("loss: %s (%s)" % ("missing" if want else "present, expected absent", reason))
    if heads is None:
        return
    for li, hs in enumerate(heads):
        for h, fh in enumerate(hs):
            if "weights" not in fh:
                case.fail("layer %d, head %d: weights missing" % (li, h))
            for key in GRAD_KEYS:
                if (key in fh) != want:
                    case.fail("layer %d, head %d, %s: %s (%s)" % (
                        li, h, key, "missing" if want else "present, expected absent", reason))


def layer_masks(binary, path, model, tokens):
    """Per layer, None when its mask follows from its attention block (mask
    causal / none / sliding_window, softmax, no sparse), else what `trace MODEL
    --layer L --json` says: [(mask, row_sum)] per head (the mask includes the
    sparse selection; row_sum is Z for the linear kernel)."""
    res = []
    for li, layer in enumerate(model["layers"]):
        a = layer["attention"]
        if not a.get("sparse") and a.get("kernel", "softmax") == "softmax":
            res.append(None)
            continue
        r = binary.run("trace", path, "--layer", li, "--tokens", " ".join(tokens), "--json")
        try:
            heads = json.loads(r.stdout)["heads"]
            res.append([(as_matrix(h["mask"]) != 0, as_matrix(h["row_sum"])) for h in heads])
        except (ValueError, KeyError, TypeError):
            res.append("`trace --layer %d --json` exit %d: %s" % (li, r.returncode,
                                                                   r.stderr.strip()[:200]))
    return res


def config_mask(att, n):
    i, j = np.indices((n, n))
    mask = att.get("mask", "causal")
    if mask == "none":
        return np.ones((n, n), bool)
    if mask == "causal":
        return j <= i
    return (j <= i) & (j >= i - att["window"] + 1)


def check_invariants(case, model, out, heads, masks=None):
    """On the binary's own numbers: P and d_scores are 0 on masked keys, rows
    of P sum to 1; softmax: each d_scores row sums to 0 and d_scores =
    (diag(p) - p p^T) d_weights; linear: d_scores = mask (d_weights -
    sum_k d_weights_k p_k) / Z.  masks: layer_masks() (None: from the config)."""
    if heads is None:
        return
    for li, (hs, layer) in enumerate(zip(heads, model["layers"])):
        att = layer["attention"]
        linear = att.get("kernel", "softmax") == "linear"
        lm = masks[li] if masks else None
        if isinstance(lm, str):
            case.fail("layer %d: %s" % (li, lm))
            continue
        for h, fh in enumerate(hs):
            where = "layer %d, head %d, " % (li, h)
            P, G, D = (as_matrix(fh.get(k)) for k in ("weights", "d_weights", "d_scores"))
            if P is None or G is None or D is None or P.ndim != 2 \
                    or not P.shape == G.shape == D.shape or P.shape[0] != P.shape[1]:
                case.fail("%sweights / d_weights / d_scores: not three N x N matrices" % where)
                continue
            n = P.shape[0]
            if lm is None:
                visible, Z = config_mask(att, n), None
            else:
                visible, Z = lm[h]
                if visible.shape != (n, n) or (linear and (Z is None or Z.shape != (n,))):
                    case.fail("%strace mask / row_sum: wrong shape" % where)
                    continue
            case.group.values += 2 * int((~visible).sum()) + n
            if (D[~visible] != 0).any() or (P[~visible] != 0).any():
                i, j = np.argwhere(((D != 0) | (P != 0)) & ~visible)[0]
                case.fail("%sweights[%d][%d] = %.17g, d_scores[%d][%d] = %.17g on a masked key "
                          "(expected 0)" % (where, i, j, P[i, j], i, j, D[i, j]))
            compare(case, "weights row sums", np.ones(n), P.sum(axis=1), 1e-12, 0, where)
            r = G - (G * P).sum(axis=1, keepdims=True)       # d_weights - sum_k d_weights_k p_k
            if linear:
                compare(case, "d_scores vs mask (d_weights - sum_k d_weights_k p_k) / Z "
                        "(its own p, d_weights, trace's mask and row_sum)",
                        np.where(visible, r / Z[:, None], 0.0), D, GRAD_ATOL, GRAD_RTOL, where)
                continue
            for i in range(n):
                rs = float(D[i].sum())
                case.group.values += 1
                case.group.note_err("d_scores row sum", abs(rs))
                if not abs(rs) <= ROWSUM_TOL:
                    case.fail("%sd_scores row %d sums to %.17g (|sum| > %g)" % (where, i, rs,
                                                                                ROWSUM_TOL))
            # The softmax Jacobian applied to the binary's own d_weights: p * (g - p.g).
            compare(case, "d_scores vs (diag(p) - p p^T) d_weights (its own p, d_weights)",
                    P * r, D, GRAD_ATOL, GRAD_RTOL, where)


# --------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------

def nrm(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).tolist()


def gen_model(rng, name, V, D, P, positions, norm, ffn, layers, d_ff=0, write_defaults=True):
    """A model file giving every weight.  layers: [(heads, head_dim, mask, scale)],
    mask / scale None = the key left out (the defaults causal / true)."""
    m = {"name": name, "vocab": list(VOCAB_NAMES[:V]), "d_model": D, "max_positions": P}
    if positions != "none" or write_defaults:
        m["positions"] = positions
    if norm != "pre" or write_defaults:
        m["norm"] = norm
    if ffn != "none":
        m["ffn"] = {"kind": ffn, "d_ff": d_ff}
    elif write_defaults:
        m["ffn"] = {"kind": "none"}
    m["layers"] = []
    for H, d, mask, scale in layers:
        att = {"variant": "mha", "heads": H, "head_dim": d}
        if mask is not None:
            att["mask"] = mask
        if scale is not None:
            att["scale"] = scale
        W = {"W_Q": nrm(rng, (D, H * d), 1.2 / math.sqrt(D)),
             "W_K": nrm(rng, (D, H * d), 1.2 / math.sqrt(D)),
             "W_V": nrm(rng, (D, H * d), 1 / math.sqrt(D)),
             "W_O": nrm(rng, (H * d, D), 1 / math.sqrt(H * d))}
        W.update(tolist(sublayer_weights(rng, D, norm, ffn, d_ff)))
        m["layers"].append({"attention": att, "weights": W})
    m["embedding"] = nrm(rng, (V, D), 1.0)
    if positions == "learned":
        m["W_P"] = nrm(rng, (P, D), 0.5)
    if norm == "pre":
        m["final_gain"] = (1 + rng.standard_normal(D) * 0.2).tolist()
        m["final_bias"] = nrm(rng, D, 0.2)
    m["unembedding"] = nrm(rng, (D, V), 1.5 / math.sqrt(D))
    m["seed"] = 7
    return m


def generated_models(rng):
    """(model, [token id lists]) covering norm x ffn x positions, masks and scale."""
    specs = [
        # name, V, D, P, positions, norm, ffn, d_ff, layers, write_defaults, lengths
        ("G1 none/none/none", 5, 6, 8, "none", "none", "none", 0,
         [(2, 3, "none", True)], True, (2, 5)),
        ("G2 pre/gelu/learned", 6, 5, 8, "learned", "pre", "gelu", 7,
         [(2, 2, "causal", False), (1, 4, "none", True)], True, (3, 8)),
        ("G3 post/swiglu/none", 7, 6, 6, "none", "post", "swiglu", 5,
         [(3, 2, "none", True), (2, 3, "causal", False)], True, (2, 6)),
        ("G4 pre(default)/relu/learned", 8, 4, 7, "learned", "pre", "relu", 6,
         [(2, 2, None, None), (4, 1, "none", False), (1, 3, None, True)], False, (4, 7)),
        ("G5 none/relu/learned", 4, 6, 8, "learned", "none", "relu", 4,
         [(3, 2, "none", False), (2, 2, "causal", True)], True, (2, 8)),
        ("G6 post/none/learned", 9, 8, 5, "learned", "post", "none", 0,
         [(4, 2, "causal", True), (2, 4, "none", None)], True, (5,)),
    ]
    res = []
    for name, V, D, P, pos, norm, ffn, dff, layers, wd, lengths in specs:
        m = gen_model(rng, name, V, D, P, pos, norm, ffn, layers, dff, wd)
        seqs = [[int(t) for t in rng.integers(0, V, size=n)] for n in lengths]
        res.append((m, seqs))
    return res


def induction_tokens(vocab, rng, n=32, seg=8):
    """<s>, then distinct symbols, one segment of `seg` repeated later."""
    syms = [t for t in vocab if t not in ("<s>", "|")]
    first = 6
    second = n - seg - 3          # the segment at first .. first+seg, again at second
    fill = n - 1 - seg            # distinct symbols outside the repeat
    picks = [syms[i] for i in rng.permutation(len(syms))[:fill]]
    segment, rest = picks[:seg], picks[seg:]
    toks = ["<s>"]
    while len(toks) < n:
        if len(toks) == first or len(toks) == second:
            toks += segment
        else:
            toks.append(rest.pop())
    assert len(toks) == n and toks[first:first + seg] == toks[second:second + seg]
    return toks


# --------------------------------------------------------------------------
# Groups
# --------------------------------------------------------------------------

def general_reference(model, ids, label):
    """reference_torch's forward pass and autograd (every kind of model)."""
    try:
        return reference_run(model, ids)
    except KeyError as e:
        raise ValueError("%s: weight %s is not in the file (drawn from the seed): the "
                         "reference needs every weight" % (label, e))
    except Degenerate as e:
        raise ValueError("%s: %s: pick other tokens or weights (the reference cannot "
                         "decide this point)" % (label, e))


def check_supported(group, binary, model, path, ids, label, inv, seen=None):
    tokens = [model["vocab"][i] for i in ids]
    case = Case(group, "%s (N=%d, tokens %r)" % (label, len(ids), " ".join(tokens)))
    out = binary.run_json(case, path, tokens)
    if out is not None:
        try:
            ref = general_reference(model, ids, label)
        except ValueError as e:
            case.fail(str(e))
        else:
            check_against_reference(case, model, ids, out, ref)
        heads = found_heads(case, out, model)
        check_presence(case, model, len(ids), out, heads)
        if len(ids) >= 2 and heads is not None:
            icase = Case(inv, case.label)
            check_invariants(icase, model, out, heads, layer_masks(binary, path, model, tokens))
            icase.close()
    if seen is not None:
        note_seen(seen, model, len(ids))
    case.close()


def note_seen(seen, m, n):
    seen["norm"].add(m.get("norm", "pre"))
    seen["ffn"].add(ffn_kind(m))
    seen["positions"].add(m.get("positions", "none"))
    for L in m["layers"]:
        a = L["attention"]
        seen["mask"].add(a.get("mask", "causal(default)"))
        seen["scale"].add(str(a.get("scale", "true(default)")).lower())
        v = a.get("variant", "mha")
        if v == "gqa" and a.get("kv_heads") == a["heads"]:
            v = "gqa G=H"
        if v == "mla" and a.get("query_latent_dim"):
            v = "mla q-latent"
        seen["variant"].add(v)
        seen["kernel"].add(a.get("kernel", "softmax"))
        seen["sparse"].add("sparse " + a.get("kernel", "softmax") if a.get("sparse") else "dense")
    seen["N"].add(n)


def group_induction(binary, inv, rng):
    g = Group("induction", width=11)
    path = os.path.join(MODELS, "induction.json")
    with open(path) as f:
        model = json.load(f)
    toks = induction_tokens(model["vocab"], rng)
    ids = [model["vocab"].index(t) for t in toks]
    check_supported(g, binary, model, path, ids, "induction.json", inv)
    return g


def group_generated(binary, inv, rng, seen):
    g = Group("generated", width=11)
    for m, seqs in generated_models(rng):
        path = binary.write("%s.json" % m["name"].split()[0], m)
        for ids in seqs:
            check_supported(g, binary, m, path, ids, "model %s" % m["name"], inv, seen)
    return g


def group_train_saved(binary, inv, rng, seen):
    g = Group("train-saved", width=11)
    models = [
        ("post/gelu/learned", {
            "name": "T saved", "vocab": list(VOCAB_NAMES[:6]), "d_model": 6,
            "max_positions": 7, "positions": "learned", "norm": "post",
            "ffn": {"kind": "gelu", "d_ff": 5},
            "layers": [{"attention": {"variant": "mha", "heads": 2, "head_dim": 3,
                                      "mask": "none"}},
                       {"attention": {"variant": "mha", "heads": 3, "head_dim": 2,
                                      "scale": False}}],
            "seed": 11}),
        ("pre/swiglu/rope, sparse gqa + mla", {
            "name": "T saved rope", "vocab": list(VOCAB_NAMES[:6]), "d_model": 8,
            "max_positions": 7, "positions": "rope", "norm": "pre",
            "ffn": {"kind": "swiglu", "d_ff": 6},
            "layers": [{"attention": {"variant": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 2,
                                      "mask": "sliding_window", "window": 3,
                                      "sparse": {"top_k": 2, "indexer_heads": 2,
                                                 "indexer_dim": 3}}},
                       {"attention": {"variant": "mla", "heads": 2, "head_dim": 3,
                                      "latent_dim": 4, "query_latent_dim": 3, "rope_dim": 2,
                                      "mask": "none"}}],
            "seed": 13}),
    ]
    for i, (label, model) in enumerate(models):
        src = binary.write("T_src_%d.json" % i, model)
        batches = binary.write("T_batches_%d.json" % i,
                               {"batches": [[[int(t) for t in rng.integers(0, 6, size=7)]]]})
        saved = os.path.join(binary.folder, "T_saved_%d.json" % i)
        case = Case(g, "train --steps 1 --save (%s)" % label)
        r = binary.run("train", "--model", src, "--batches", batches, "--steps", 1, "--save",
                       saved, "--lr", "0.01")
        if r.returncode != 0 or not os.path.isfile(saved):
            case.fail("train exit %d: %s" % (r.returncode, r.stderr.strip()[:300]))
            case.close()
            continue
        case.close()
        with open(saved) as f:
            sm = json.load(f)
        for ids in ([int(t) for t in rng.integers(0, 6, size=6)],
                    [int(t) for t in rng.integers(0, 6, size=2)]):
            check_supported(g, binary, sm, saved, ids, "train-saved model (%s)" % label, inv,
                            seen)
    return g


def group_seeded(binary, inv):
    """tiny.json / tiny_post.json: learned positions, weights from the seed.
    Supported: the keys must be there and the invariants hold."""
    g = Group("seeded", width=11)
    for name, toks in (("tiny.json", "<s> a b c a b c d"), ("tiny_post.json", "a b a b e")):
        path = os.path.join(MODELS, name)
        with open(path) as f:
            model = json.load(f)
        case = Case(g, "%s (N=%d)" % (name, len(toks.split())))
        out = binary.run_json(case, path, toks.split())
        if out is not None:
            heads = found_heads(case, out, model)
            check_presence(case, model, len(toks.split()), out, heads)
            if isinstance(out.get("loss"), (int, float)):
                # The loss from the binary's own probabilities.
                probs = as_matrix(out.get("probabilities"))
                ids = [model["vocab"].index(t) for t in toks.split()]
                if probs is not None and probs.shape == (len(ids), len(model["vocab"])):
                    exp = float(np.mean([-math.log(probs[i, ids[i + 1]])
                                         for i in range(len(ids) - 1)]))
                    g.values += 1
                    # probabilities are printed to 17 digits at most; 1e-9 relative.
                    if not abs(exp - out["loss"]) <= 1e-9 * abs(exp):
                        case.fail("loss: %.17g, but mean -log p(next) from its own "
                                  "probabilities is %.17g" % (out["loss"], exp))
            if heads is not None:
                icase = Case(inv, case.label)
                check_invariants(icase, model, out, heads)
                icase.close()
        case.close()
    return g


BASE_ATT = {"variant": "mha", "heads": 2, "head_dim": 2}


def full_model(rng, name, positions, atts, rope_base=None):
    """A model giving every weight: vocabulary 6, d_model 6, Pre-LN, a relu FFN,
    layers with the attention blocks atts (weights as reference.layer_weights
    draws them; a linear-kernel layer gets a positive LN1 bias, so that with its
    positive query and key weights no row of scores sums to nearly 0)."""
    V, D, P, Fd = 6, 6, 7, 5
    m = {"name": name, "vocab": list(VOCAB_NAMES[:V]), "d_model": D, "max_positions": P,
         "positions": positions, "norm": "pre", "ffn": {"kind": "relu", "d_ff": Fd}}
    if rope_base is not None:
        m["rope_base"] = rope_base
    m["layers"] = []
    for att in atts:
        W = layer_weights(rng, att, D, positions)
        if att.get("kernel") == "linear":
            W["ln1_gain"] = 0.7 + rng.standard_normal(D) * 0.1
            W["ln1_bias"] = 2.5 + rng.standard_normal(D) * 0.2
        else:
            W["ln1_gain"] = 1 + rng.standard_normal(D) * 0.2
            W["ln1_bias"] = rng.standard_normal(D) * 0.2
        W["ln2_gain"] = 1 + rng.standard_normal(D) * 0.2
        W["ln2_bias"] = rng.standard_normal(D) * 0.2
        W["W_1"] = rng.standard_normal((D, Fd)) / math.sqrt(D)
        W["b_1"] = rng.standard_normal(Fd) * 0.2
        W["W_2"] = rng.standard_normal((Fd, D)) / math.sqrt(Fd)
        W["b_2"] = rng.standard_normal(D) * 0.2
        m["layers"].append({"attention": dict(att), "weights": W})
    m["embedding"] = rng.standard_normal((V, D))
    if positions == "learned":
        m["W_P"] = rng.standard_normal((P, D)) * 0.5
    m["final_gain"] = 1 + rng.standard_normal(D) * 0.2
    m["final_bias"] = rng.standard_normal(D) * 0.2
    m["unembedding"] = rng.standard_normal((D, V)) * 1.5 / math.sqrt(D)
    m["seed"] = 5
    return tolist(m)


VARIANT_CASES = [
    # label, positions, rope_base, attention blocks
    ("positions rope", "rope", None, [BASE_ATT]),
    ("positions sinusoidal, rope_base 100", "sinusoidal", 100.0, [BASE_ATT]),
    ("a gqa layer (layer 1)", "learned", None,
     [BASE_ATT, {"variant": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 2}]),
    ("a gqa layer with kv_heads = heads", "learned", None,
     [BASE_ATT, {"variant": "gqa", "heads": 2, "kv_heads": 2, "head_dim": 2}]),
    ("an mqa layer", "learned", None,
     [BASE_ATT, {"variant": "mqa", "heads": 2, "head_dim": 2, "mask": "none"}]),
    ("an mla layer", "learned", None,
     [BASE_ATT, {"variant": "mla", "heads": 2, "head_dim": 2, "latent_dim": 3}]),
    ("an mla layer with a query latent, rope", "rope", None,
     [BASE_ATT, {"variant": "mla", "heads": 2, "head_dim": 3, "latent_dim": 3,
                 "query_latent_dim": 2, "rope_dim": 2, "scale": False}]),
    ("kernel linear", "learned", None, [dict(BASE_ATT, kernel="linear")]),
    ("mask sliding_window", "learned", None, [dict(BASE_ATT, mask="sliding_window", window=2)]),
    ("sparse attention", "learned", None, [dict(BASE_ATT, sparse={"top_k": 2})]),
    ("sparse, linear kernel, gqa, mask none", "none", None,
     [{"variant": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 2, "mask": "none",
       "kernel": "linear", "sparse": {"top_k": 3, "indexer_heads": 2, "indexer_dim": 2}}]),
]


def group_variants(binary, inv, rng, seen):
    """Models one change away from a base model, every weight given, against
    the general reference; a draw the reference cannot decide (a near tie of
    the indexer, a linear row summing to nearly 0) is drawn again."""
    g = Group("variants", width=11)
    seqs = ([1, 2, 3, 1, 2], [0, 3, 1, 4, 4, 2, 5])
    for i, (label, positions, rope_base, atts) in enumerate(VARIANT_CASES):
        for draw in range(30):
            m = full_model(rng, "variant %d" % i, positions, atts, rope_base)
            try:
                for ids in seqs:
                    reference_run(m, ids)
                break
            except Degenerate:
                continue
        path = binary.write("variant_%d.json" % i, m)
        for ids in seqs:
            check_supported(g, binary, m, path, ids, label, inv, seen)
    return g


def group_absence(binary, induction_model, rng):
    """A single token: no loss, d_weights, d_scores (each head keeps weights,
    which must be the reference's); 2 tokens: all there."""
    g = Group("absence", width=11)
    base = full_model(rng, "absence", "learned", [BASE_ATT])
    sparse_rope = full_model(rng, "absence rope sparse mla", "rope",
                             [dict(BASE_ATT, sparse={"top_k": 1}),
                              {"variant": "mla", "heads": 2, "head_dim": 2, "latent_dim": 3,
                               "rope_dim": 2, "kernel": "linear"}])
    singles = [("induction.json", induction_model, os.path.join(MODELS, "induction.json"), "<s>"),
               ("a generated model", base, binary.write("absent_base.json", base), "c"),
               ("a rope model with a sparse layer and a linear mla layer", sparse_rope,
                binary.write("absent_rope.json", sparse_rope), "b")]
    for label, m, path, tok in singles:
        case = Case(g, "%s, a single token %r" % (label, tok))
        out = binary.run_json(case, path, [tok])
        if out is not None:
            heads = found_heads(case, out, m)
            check_presence(case, m, 1, out, heads)
            if label != "induction.json":
                ref = general_reference(m, [m["vocab"].index(tok)], label)
                check_against_reference(case, m, [m["vocab"].index(tok)], out, ref)
        case.close()
    # The same generated model on 2 tokens does have them (the switch is the count, not the file).
    case = Case(g, "the generated model on 2 tokens (keys present)")
    out = binary.run_json(case, os.path.join(binary.folder, "absent_base.json"), ["c", "a"])
    if out is not None:
        check_presence(case, base, 2, out, found_heads(case, out, base))
    case.close()
    return g


# --------------------------------------------------------------------------

REQUIRED = {"norm": {"none", "pre", "post"}, "ffn": {"none", "relu", "gelu", "swiglu"},
            "positions": {"none", "learned", "sinusoidal", "rope"},
            "mask": {"none", "causal", "causal(default)", "sliding_window"},
            "scale": {"true", "false", "true(default)"},
            "variant": {"mha", "gqa", "gqa G=H", "mqa", "mla", "mla q-latent"},
            "kernel": {"softmax", "linear"},
            "sparse": {"dense", "sparse softmax", "sparse linear"}}


def main():
    args = command_line(__doc__, keep="keep every model file written in this folder").parse_args()
    start = time.time()
    probe(args.binary)  # exit 2 unless it starts

    with work_folder(args.keep, "attention_gradients_") as folder:
        binary = Binary(args.binary, folder)
        rng = np.random.default_rng(SEED)
        inv = Group("invariants", width=11)
        seen = {k: set() for k in list(REQUIRED) + ["N"]}
        try:
            with open(os.path.join(MODELS, "induction.json")) as f:
                induction_model = json.load(f)
            groups = [group_induction(binary, inv, rng),
                      group_generated(binary, inv, rng, seen),
                      group_train_saved(binary, inv, rng, seen),
                      group_seeded(binary, inv),
                      group_variants(binary, inv, rng, seen),
                      group_absence(binary, induction_model, rng),
                      inv]
        except BinaryError as e:
            return cannot_run(args.binary, e)

    gaps = ["%s %s" % (k, sorted(need - seen[k])) for k, need in REQUIRED.items()
            if need - seen[k]]
    if not {2, 8} <= seen["N"]:
        gaps.append("N 2 and 8")
    for g in groups:
        print(g.summary())
    print("coverage: " + ("complete" if not gaps else "MISSING " + "; ".join(gaps)))
    failed = sum(g.failed_cases for g in groups)
    print("%s: %d cases, %d failed, %d binary runs, %.1f s" % (
        "ok" if not failed and not gaps else "FAIL", sum(g.cases for g in groups), failed,
        binary.runs, time.time() - start))
    return 0 if not failed and not gaps else 1


if __name__ == "__main__":
    sys.exit(main())
