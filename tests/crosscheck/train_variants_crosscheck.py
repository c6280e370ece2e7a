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

import json
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import (Binary, BinaryError, Case, Group, cannot_run, command_line,  # noqa: E402
                       compare_cells, layer_weights, normal, probe, sublayer_weights, tolist,
                       work_folder)
from reference_torch import (Degenerate, check_stats, forward, is_indexer, params_of,  # noqa: E402
                             reference_run, self_test, train)

SEED = 20264
TOL = 1e-9                            # training: loss, grad_norm, weights (absolute)
GRAD_ATOL, GRAD_RTOL = 1e-10, 1e-9    # run: logits, loss, weights, d_weights, d_scores
STEPS = 20
N_MODELS = 28
MAX_DRAWS = 60
NORMS = ("none", "pre", "post")
FFNS = ("none", "relu", "gelu", "swiglu")
POSITIONS = ("none", "sinusoidal", "learned", "rope")
KINDS = ("mha", "gqa", "gqa G=H", "mqa", "mla", "mla q-latent")
MASKS = ("none", "causal", "sliding_window")
VOCAB_NAMES = ("<bos>", "a", "b", "c", "the", "cat", "sat", "on", "mat")
LRS = (1e-3, 3e-3, 1e-2, 3e-2)


# --------------------------------------------------------------------------
# The PyTorch reference
# --------------------------------------------------------------------------

def reference_train(model, batches, o, steps):
    """[(loss, grad_norm, clipped)] per step and the trained parameters; the
    indexer does not train.  Degenerate if a step meets a near tie, a linear
    row summing to nearly 0, or a loss past 50 (the draw is replaced)."""
    p = params_of(model)
    trained = [t for key, t in p.items() if not is_indexer(key)]
    for key, t in p.items():
        if is_indexer(key):
            t.requires_grad_(False)

    def check(s, loss, stats):
        check_stats(stats, "training step %d" % s)
        if not math.isfinite(float(loss)) or float(loss) > 50:
            raise Degenerate("training step %d: loss %r" % (s, float(loss)))
    return train(model, p, batches, o, steps, trained, check=check), p


# --------------------------------------------------------------------------
# Random models
# --------------------------------------------------------------------------

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
        W.update(sublayer_weights(rng, D, norm, ffn_kind, d_ff))
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

def compare(case, what, expected, found, atol, rtol=0.0, kind=None):
    """reference.compare_cells, the largest difference kept per kind (default:
    the last word of what)."""
    return compare_cells(case, what, expected, found, atol, rtol,
                         kind=kind or what.split(" ")[-1])


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
    case = Case(g, describe(c), limit=8)
    mpath = binary.write("model_%d.json" % i, m)
    bpath = binary.write("batches_%d.json" % i, {"batches": c["batches"]})
    opath = os.path.join(binary.folder, "trained_%d.json" % i)
    out = binary.case_json(case, "train", "--model", mpath, "--batches", bpath, "--steps", STEPS,
                           "--save", opath, "--json", *c["flags"])
    steps = out.get("steps") if out is not None else None
    if not isinstance(steps, list):
        if out is not None:
            case.fail("train --json: no steps list")
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
    r = binary.run("run", opath, "--tokens", " ".join(m["vocab"][t] for t in seq), "--json")
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
    case = Case(g, describe(c) + " on %d tokens" % len(ids), limit=8)
    mpath = os.path.join(binary.folder, "model_%d.json" % c["idx"])
    out = binary.run_json(case, mpath, [m["vocab"][t] for t in ids])
    layers = out.get("layers") if out is not None else None
    if not isinstance(layers, list) or len(layers) != len(m["layers"]):
        if out is not None:
            case.fail("run --json: no layers list of %d" % len(m["layers"]))
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
    args = command_line(__doc__, keep="write the model, batches and saved files here").parse_args()
    start = time.time()
    probe(args.binary)  # exit 2 unless it starts
    why = self_test()
    if why:
        print("error: the reference's own check fails: " + why)
        return 1
    with work_folder(args.keep, "train_variants_") as folder:
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
            return cannot_run(args.binary, e)
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
