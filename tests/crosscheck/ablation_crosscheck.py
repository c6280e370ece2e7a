#!/usr/bin/python3
"""Independent PyTorch float64 reference for head ablation (`attention-lab run FOLDER --ablate`).

Why this exists: knocking a head out is how one asks what it was for, and the answer is only as
good as the knock-out.  This script runs the tiny Hugging Face checkpoints of
checkpoint_crosscheck.py (imported: its folders, tokenizer and forward pass, written from the
formulas) with an ablation of its own, from the spec:

  In an ablated layer, query head h's output o_h = softmax(masked scaled scores) v_h, the
  (N, head_dim) matrix before the output projection, is replaced by zeros (zero) or by its mean
  over the N positions in every row (mean); the concatenation, the output projection and its bias
  apply as before.  Under GQA only the query head's own output changes (its KV head is shared).

and the keys `run FOLDER --text T --json` adds:

  token_losses[i] = -log softmax(logits[i])[ids[i+1]] for i < N-1; loss = their mean (absent
  when N < 2); head_scores, for every layer and query head in order, from that head's weights W
  on the ablated run: previous_token = mean_{i>=1} W[i, i-1], first_token = mean_{i>=1} W[i, 0]
  (both null when N < 2), duplicate_token = the mean over queries i with an earlier j, ids[j] =
  ids[i], of the sum over such j of W[i, j], induction = the same over j + 1 < i of W[i, j+1]
  (null when no query has one); with --ablate, "ablated" (every head once, sorted) and
  "ablate_mode".

Cases: every family (GPT-2 with c_proj's bias, GPT-2 with three heads, Llama GQA 4/2, Llama
with o_proj's bias and head_dim 12, Qwen2 MQA 4/1, Mistral with a window of 3), zero (also by
default) and mean, single heads, sets over two layers, whole layers (`L`), a head listed twice,
one token (mean ablation changes nothing there), on a text with a repeated part (induction and
duplicate defined) and one without repeats (null), and runs without --ablate.  The lab's logits,
every head's weights, every layer's attention output, token_losses and loss must equal the
reference's to 1e-9 (absolute, relative where |expected| > 1), head_scores the ones computed from
the reference's own weights to 1e-9 (null where it is null), "ablated" and "ablate_mode" exactly.
Refusals: --ablate 99.0, 0.99, 1.7 (the spec's message), x, 0.x, --ablate-mode half, --ablate-mode
without --ablate exit 2 with a message naming the option (not as an unknown option).

Self-checks of the reference, run always (alone with --reference-only): ablating nothing is the
plain run; zero-ablating every head of a layer gives that layer's attention output = b_O in every
row (0 without a bias) and leaves its weights alone; zero ablation equals the plain run with the
head's columns of W_O set to 0; mean ablation keeps the mean over positions of the first ablated
layer's output and changes the output; mean ablation is a no-op on one token; the head scores
against a second, masked form and against values worked out by hand; token_losses against
probabilities from NumPy; the texts have (and lack) repeats as claimed; the comparison flags each
perturbed key.

Run:  /usr/bin/python3 ablation_crosscheck.py --binary build/app/attention-lab \\
          --work build/tests/ablation_crosscheck [--reference-only]

Exit status: 0 all agree, 1 a mismatch (the lab's or a self-check's), 2 the binary cannot be run.
"""

import argparse
import math
import os
import subprocess
import sys
import time
from fractions import Fraction

import numpy as np
import torch

import checkpoint_crosscheck as ck

TOLERANCE = ck.TOLERANCE
SELF_TOLERANCE = ck.SELF_TOLERANCE
LAB_TIMEOUT = ck.LAB_TIMEOUT

REPEATED = "the cat sat on the mat. the cat sat on the mat."
PLAIN = "the dog ran on a mat"  # no token twice
SINGLE = "the"                  # one token for GPT-2, <s> the for Llama and Mistral

# (folder, text, --ablate LIST or None, --ablate-mode or None for the default, the "ablated" the
# lab must print, written out by hand).
CASES = [
    ("gpt2", REPEATED, None, None, None),
    ("gpt2", PLAIN, None, None, None),
    ("gpt2", REPEATED, "0.1", None, [[0, 1]]),
    ("gpt2", REPEATED, "1", "mean", [[1, 0], [1, 1]]),
    ("gpt2", PLAIN, "1.1,0.0", "zero", [[0, 0], [1, 1]]),
    ("gpt2", SINGLE, "0,1", "mean", [[0, 0], [0, 1], [1, 0], [1, 1]]),
    ("gpt2_prefixed", REPEATED, None, None, None),
    ("gpt2_prefixed", REPEATED, "1.0,0.2", "mean", [[0, 2], [1, 0]]),
    ("gpt2_prefixed", PLAIN, "0", "zero", [[0, 0], [0, 1], [0, 2]]),
    ("llama", REPEATED, None, None, None),
    ("llama", PLAIN, None, None, None),
    ("llama", REPEATED, "0.1", "zero", [[0, 1]]),
    ("llama", REPEATED, "1.3,0.0,0.2", "mean", [[0, 0], [0, 2], [1, 3]]),
    ("llama", PLAIN, "0,1.2,0.1", None, [[0, 0], [0, 1], [0, 2], [0, 3], [1, 2]]),
    ("llama", REPEATED, "1.2,1.2", "mean", [[1, 2]]),
    ("llama_tied_headdim", REPEATED, None, None, None),
    ("llama_tied_headdim", REPEATED, "0", "zero", [[0, 0], [0, 1]]),
    ("llama_tied_headdim", PLAIN, "1.1,0.0", "mean", [[0, 0], [1, 1]]),
    ("qwen2", REPEATED, None, None, None),
    ("qwen2", REPEATED, "0.2", "zero", [[0, 2]]),
    ("qwen2", REPEATED, "1.0,1.3", "mean", [[1, 0], [1, 3]]),
    ("qwen2", PLAIN, "1", "mean", [[1, 0], [1, 1], [1, 2], [1, 3]]),
    ("mistral", REPEATED, None, None, None),
    ("mistral", REPEATED, "1.1", "zero", [[1, 1]]),
    ("mistral", REPEATED, "0.0,0.3,1", "mean", [[0, 0], [0, 3], [1, 0], [1, 1], [1, 2], [1, 3]]),
    ("mistral", PLAIN, "0.1,1.1", "zero", [[0, 1], [1, 1]]),
]

# (folder, extra arguments, fragments stderr must hold). Every one exits 2.
REFUSALS = [
    ("gpt2", ["--ablate", "99.0"], ["--ablate", "99.0"]),
    ("gpt2", ["--ablate", "0.99"], ['--ablate: "0.99": layer 0 has 2 heads (0-1)']),
    ("llama", ["--ablate", "1.7"], ['--ablate: "1.7": layer 1 has 4 heads (0-3)']),
    ("gpt2", ["--ablate", "x"], ['--ablate: "x"']),
    ("gpt2", ["--ablate", "0.x"], ['--ablate: "0.x"']),
    ("gpt2", ["--ablate", "0.1", "--ablate-mode", "half"], ["--ablate-mode", "half"]),
    ("gpt2", ["--ablate-mode", "mean"], ["--ablate-mode"]),
]

# ---------------------------------------------------------------------------------------------
# The reference.


class Reference:
    """One run of the reference: ids, logits (N, V), layers [(heads, N, N)], outputs [(N, E)],
    token_losses (N-1), loss (None when N < 2), head_scores [dict]."""

    def __init__(self, config, weights, ids, ablate=None, mode="zero"):
        self.ids = list(ids)
        self.outputs = []
        self.logits, self.layers = ck.forward(config, weights, ids, ablate=ablate,
                                              ablate_mode=mode, outputs=self.outputs)
        self.token_losses = token_losses(self.logits, self.ids)
        self.loss = float(self.token_losses.mean()) if len(self.ids) >= 2 else None
        self.head_scores = [dict(layer=n, head=h, **scores_of(probs[h].tolist(), self.ids))
                            for n, probs in enumerate(self.layers)
                            for h in range(probs.shape[0])]


def token_losses(logits, ids):
    """-log softmax(logits[i])[ids[i+1]] for i < N-1 (natural log)."""
    if len(ids) < 2:
        return torch.zeros(0, dtype=torch.float64)
    logp = torch.log_softmax(logits[:-1], dim=-1)
    return -logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]


def mean_or_none(values):
    return math.fsum(values) / len(values) if values else None


def scores_of(w, ids):
    """The four head scores of one head's weights w (N x N nested lists), as the spec words them."""
    n = len(ids)
    previous = mean_or_none([w[i][i - 1] for i in range(1, n)])
    first = mean_or_none([w[i][0] for i in range(1, n)])
    duplicate = []
    induction = []
    for i in range(n):
        same = [j for j in range(i) if ids[j] == ids[i]]
        if same:
            duplicate.append(math.fsum(w[i][j] for j in same))
        earlier = [j for j in range(n) if j + 1 < i and ids[j] == ids[i]]
        if earlier:
            induction.append(math.fsum(w[i][j + 1] for j in earlier))
    return {"previous_token": previous, "induction": mean_or_none(induction),
            "duplicate_token": mean_or_none(duplicate), "first_token": first}


def scores_masked(w, ids):
    """The same scores from masks over w (torch (N, N)): a second form for the self-check."""
    n = len(ids)
    ids = torch.tensor(ids)
    i = torch.arange(n)[:, None]
    k = torch.arange(n)[None, :]
    same = ids[:, None] == ids[None, :]
    dup = same & (k < i)
    # key k = j + 1 follows a j with ids[j] = ids[i] and j + 1 < i.
    follows = torch.zeros(n, n, dtype=torch.bool)
    follows[:, 1:] = same[:, :-1]
    ind = follows & (k < i)

    def masked_mean(mask):
        rows = mask.any(1)
        return float((w * mask).sum(1)[rows].mean()) if bool(rows.any()) else None
    if n < 2:
        previous = first = None
    else:
        previous, first = float(torch.diagonal(w, -1).mean()), float(w[1:, 0].mean())
    return {"previous_token": previous, "induction": masked_mean(ind),
            "duplicate_token": masked_mean(dup), "first_token": first}


def heads_of(config):
    return config.get("num_attention_heads") or config["n_head"]


def layers_of(config):
    return config.get("num_hidden_layers") or config["n_layer"]


def bias_of(config, weights, layer):
    """b_O of a layer, or None."""
    if config["model_type"] == "gpt2":
        w = ck.strip(weights, "transformer.")
        return w.get("h.%d.attn.c_proj.bias" % layer)
    return weights.get("model.layers.%d.self_attn.o_proj.bias" % layer)


def without_head_columns(config, weights, ablate):
    """The weights with each ablated head's input columns of W_O set to 0 (GPT-2's Conv1D
    c_proj.weight is (in, out): its rows)."""
    out = dict(weights)
    gpt2 = config["model_type"] == "gpt2"
    hd = (config["n_embd"] // config["n_head"]) if gpt2 else ck.head_dim_of(config)
    for n, h in ablate:
        if gpt2:
            name = ("transformer." if "transformer.wte.weight" in weights else "") + \
                "h.%d.attn.c_proj.weight" % n
            w = out[name].clone()
            w[h * hd:(h + 1) * hd, :] = 0
        else:
            name = "model.layers.%d.self_attn.o_proj.weight" % n
            w = out[name].clone()
            w[:, h * hd:(h + 1) * hd] = 0
        out[name] = w
    return out


# ---------------------------------------------------------------------------------------------
# Comparison.


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def compare_scalar(label, expected, found):
    if expected is None:
        return None if found is None else "%s %r, expected null" % (label, found)
    if not is_number(found):
        return "%s %r, expected %.17g" % (label, found, expected)
    if abs(found - expected) <= TOLERANCE * max(1.0, abs(expected)):
        return None
    return "%s diff %.3g (expected %.17g, found %.17g)" % (label, abs(found - expected),
                                                           expected, found)


def compare_ablation(result, ref, ablated, mode):
    """Every difference between a lab result and the reference run (ablated: the list the lab must
    print, None without --ablate; mode: the mode the lab must print)."""
    problems = []
    if result.get("ids") != ref.ids:
        problems.append("ids %s, expected %s" % (result.get("ids"), ref.ids))
        return problems
    problems += ck.compare_run(result, ref.logits, ref.layers)
    found_layers = result.get("layers")
    if isinstance(found_layers, list) and len(found_layers) == len(ref.outputs):
        for n, (layer, out) in enumerate(zip(found_layers, ref.outputs)):
            found = ((layer or {}).get("attention") or {}).get("output")
            problem = ck.compare("layer %d attention output" % n, out, found)
            if problem:
                problems.append(problem)
    if "token_losses" not in result:
        problems.append("token_losses missing")
    else:
        problem = ck.compare("token_losses", ref.token_losses, result["token_losses"])
        if problem:
            problems.append(problem)
    if ref.loss is None:
        if "loss" in result:
            problems.append("loss %r present with %d token" % (result["loss"], len(ref.ids)))
    else:
        problem = compare_scalar("loss", ref.loss, result.get("loss"))
        if problem:
            problems.append(problem)
    scores = result.get("head_scores")
    if not isinstance(scores, list) or len(scores) != len(ref.head_scores):
        problems.append("head_scores: %s entries, expected %d" % (
            len(scores) if isinstance(scores, list) else "no", len(ref.head_scores)))
    else:
        for k, (found, expected) in enumerate(zip(scores, ref.head_scores)):
            if not isinstance(found, dict):
                problems.append("head_scores[%d] is not an object" % k)
                continue
            where = "head_scores[%d] (layer %d head %d)" % (k, expected["layer"],
                                                            expected["head"])
            if found.get("layer") != expected["layer"] or found.get("head") != expected["head"]:
                problems.append("%s names layer %r head %r" % (where, found.get("layer"),
                                                               found.get("head")))
                continue
            for key in ("previous_token", "induction", "duplicate_token", "first_token"):
                if key not in found:
                    problems.append("%s %s missing" % (where, key))
                    continue
                problem = compare_scalar("%s %s" % (where, key), expected[key], found[key])
                if problem:
                    problems.append(problem)
    if ablated is None:
        for key in ("ablated", "ablate_mode"):
            if key in result:
                problems.append("%s %r without --ablate" % (key, result[key]))
    else:
        if result.get("ablated") != ablated:
            problems.append("ablated %s, expected %s" % (result.get("ablated"), ablated))
        if result.get("ablate_mode") != mode:
            problems.append("ablate_mode %r, expected %r" % (result.get("ablate_mode"), mode))
    return problems


def as_result(ref, ablated=None, mode=None):
    """The JSON the lab should print for a reference run (the keys compared here)."""
    result = {"ids": list(ref.ids), "logits": ref.logits.tolist(),
              "layers": [{"attention": {"heads": [{"weights": p.tolist()} for p in probs],
                                        "output": out.tolist()}}
                         for probs, out in zip(ref.layers, ref.outputs)],
              "token_losses": ref.token_losses.tolist(),
              "head_scores": [dict(s) for s in ref.head_scores]}
    if ref.loss is not None:
        result["loss"] = ref.loss
    if ablated is not None:
        result["ablated"] = [list(p) for p in ablated]
        result["ablate_mode"] = mode
    return result


# ---------------------------------------------------------------------------------------------
# Self-checks of the reference.


def ids_of(folder, text):
    return ck.hand_bpe(text, ck.tokenizer_json(folder.style))


def check_nothing(report, folder, weights, ids):
    plain_out = []
    a, la = ck.forward(folder.config, weights, ids, outputs=plain_out)
    b, lb = ck.forward(folder.config, weights, ids)
    ref = Reference(folder.config, weights, ids, ablate=set(), mode="mean")
    report.close("%s: ablating nothing = the plain run, logits" % folder.name, ref.logits, b)
    report.close("%s: outputs= changes nothing (logits)" % folder.name, a, b)
    report.close("%s: ablating nothing, last layer weights" % folder.name, ref.layers[-1], lb[-1])
    report.close("%s: ablating nothing, every attention output" % folder.name,
                 torch.stack(ref.outputs), torch.stack(plain_out))


def check_whole_layer(report, folder, weights, ids, layer):
    heads = heads_of(folder.config)
    ablate = {(layer, h) for h in range(heads)}
    ref = Reference(folder.config, weights, ids, ablate=ablate, mode="zero")
    plain = Reference(folder.config, weights, ids)
    bias = bias_of(folder.config, weights, layer)
    n, e = ref.outputs[layer].shape
    rows = (bias if bias is not None else torch.zeros(e, dtype=torch.float64)).expand(n, e)
    report.check(torch.equal(ref.outputs[layer], rows),
                 "%s: zero-ablated layer %d, its attention output = %s in every row, exactly" % (
                     folder.name, layer, "b_O" if bias is not None else "0"))
    report.check(torch.equal(ref.layers[layer], plain.layers[layer]),
                 "%s: zero-ablated layer %d keeps its weights" % (folder.name, layer))
    report.check(float((ref.logits - plain.logits).abs().max()) > 1e-3,
                 "%s: zero-ablating layer %d changes the logits" % (folder.name, layer))


def check_zero_columns(report, folder, weights, ids, ablate):
    ref = Reference(folder.config, weights, ids, ablate=ablate, mode="zero")
    cut = Reference(folder.config, without_head_columns(folder.config, weights, ablate), ids)
    report.close("%s: zero-ablating %s = W_O without their columns, logits" % (
        folder.name, sorted(ablate)), ref.logits, cut.logits)
    report.close("%s: zero-ablating %s = W_O without their columns, outputs" % (
        folder.name, sorted(ablate)), torch.stack(ref.outputs), torch.stack(cut.outputs))


def check_mean_keeps_mean(report, folder, weights, ids, ablate):
    first = min(n for n, _ in ablate)
    ref = Reference(folder.config, weights, ids, ablate=ablate, mode="mean")
    plain = Reference(folder.config, weights, ids)
    report.close("%s: mean-ablating %s keeps layer %d's output mean over positions" % (
        folder.name, sorted(ablate), first), ref.outputs[first].mean(0),
        plain.outputs[first].mean(0))
    moved = float((ref.outputs[first] - plain.outputs[first]).abs().max())
    report.check(moved > 1e-3, "%s: mean ablation changes layer %d's output (by %.3g)" % (
        folder.name, first, moved))


def check_one_token(report, folder, weights, ids):
    ids = ids[:1]
    every = {(n, h) for n in range(layers_of(folder.config))
             for h in range(heads_of(folder.config))}
    ref = Reference(folder.config, weights, ids, ablate=every, mode="mean")
    plain = Reference(folder.config, weights, ids)
    report.check(torch.equal(ref.logits, plain.logits)
                 and torch.equal(torch.stack(ref.outputs), torch.stack(plain.outputs)),
                 "%s: mean-ablating every head on one token = the plain run, exactly" % folder.name)
    zero = Reference(folder.config, weights, ids, ablate=every, mode="zero")
    report.check(float((zero.logits - plain.logits).abs().max()) > 1e-3,
                 "%s: zero ablation on one token does change it" % folder.name)
    report.check(ref.loss is None and ref.token_losses.shape == (0,) and all(
        s["previous_token"] is None and s["first_token"] is None and s["induction"] is None
        and s["duplicate_token"] is None for s in ref.head_scores),
        "%s: one token: no loss, no token_losses, every score null" % folder.name)


def check_scores_by_hand(report):
    # W[i, j] = 2 (j + 1) / ((i + 1)(i + 2)) for j <= i (rows sum to 1), ids 7 3 7 3 7:
    # previous (1/3 + 1/3 + 3/10 + 4/15) / 4 = 37/120, first (1/3 + 1/6 + 1/10 + 1/15) / 4 = 1/6,
    # duplicate (W20 + W31 + W40 + W42) = (1/6 + 1/5 + 4/15) / 3 = 19/90,
    # induction (W21 + W32 + W41 + W43) = (1/3 + 3/10 + 2/5) / 3 = 31/90.
    n = 5
    w = [[float(Fraction(2 * (j + 1), (i + 1) * (i + 2))) if j <= i else 0.0 for j in range(n)]
         for i in range(n)]
    expected = {"previous_token": 37 / 120, "first_token": 1 / 6, "duplicate_token": 19 / 90,
                "induction": 31 / 90}
    for name, fn, arg in (("spec form", scores_of, w),
                          ("masked form", scores_masked, torch.tensor(w, dtype=torch.float64))):
        got = fn(arg, [7, 3, 7, 3, 7])
        report.check(all(abs(got[k] - v) < 1e-15 for k, v in expected.items()),
                     "head scores by hand, %s: 37/120, 1/6, 19/90, 31/90" % name, str(got))
        # An adjacent repeat is a duplicate but no induction: W uniform, ids 4 4 9.
        u = [[1 / (i + 1) if j <= i else 0.0 for j in range(3)] for i in range(3)]
        got = fn(u if fn is scores_of else torch.tensor(u, dtype=torch.float64), [4, 4, 9])
        report.check(got["induction"] is None and abs(got["duplicate_token"] - 0.5) < 1e-15
                     and abs(got["previous_token"] - (1 / 2 + 1 / 3) / 2) < 1e-15,
                     "head scores by hand, %s: ids 4 4 9: duplicate 1/2, induction null" % name,
                     str(got))
        got = fn([[1.0]] if fn is scores_of else torch.ones(1, 1, dtype=torch.float64), [4])
        report.check(all(v is None for v in got.values()),
                     "head scores by hand, %s: one token, all null" % name, str(got))


def check_scores_forms(report, ref, label):
    worst = 0.0
    nulls_agree = True
    for s, probs in zip(ref.head_scores, (p[h] for p in ref.layers for h in range(p.shape[0]))):
        other = scores_masked(probs, ref.ids)
        for key, value in other.items():
            if (value is None) != (s[key] is None):
                nulls_agree = False
            elif value is not None:
                worst = max(worst, abs(value - s[key]))
    report.check(nulls_agree and worst <= 1e-14, "%s: head scores, spec form = masked form "
                 "(%.2g)" % (label, worst))


def check_texts(report, folders, weights_of):
    for folder in folders:
        weights = weights_of[folder.name]
        rep = Reference(folder.config, weights, ids_of(folder, REPEATED))
        plain = Reference(folder.config, weights, ids_of(folder, PLAIN))
        report.check(all(s["induction"] is not None and s["duplicate_token"] is not None
                         for s in rep.head_scores)
                     and all(s["induction"] is None and s["duplicate_token"] is None
                             and s["previous_token"] is not None for s in plain.head_scores),
                     "%s: %r has induction and duplicate scores, %r none" % (
                         folder.name, REPEATED, PLAIN))
        check_scores_forms(report, rep, folder.name)


def check_token_losses(report, folder, weights, ids):
    ref = Reference(folder.config, weights, ids)
    logits = ref.logits.numpy()
    z = np.exp(logits - logits.max(1, keepdims=True))
    p = z / z.sum(1, keepdims=True)
    picked = np.array([p[i, ids[i + 1]] for i in range(len(ids) - 1)])
    report.close("%s: exp(-token_losses) = softmax(logits[i])[ids[i+1]]" % folder.name,
                 np.exp(-ref.token_losses.numpy()), picked)
    report.check(abs(ref.loss - float(np.mean(-np.log(picked)))) < 1e-12,
                 "%s: loss = the mean of -log p" % folder.name)


def check_comparer(report, folder, weights):
    ids = ids_of(folder, REPEATED)
    ablate = {(0, 1), (1, 0)}
    ref = Reference(folder.config, weights, ids, ablate=ablate, mode="mean")
    listed = [[0, 1], [1, 0]]
    report.check(compare_ablation(as_result(ref, listed, "mean"), ref, listed, "mean") == [],
                 "comparer passes the reference")
    report.check(compare_ablation(as_result(ref), ref, None, None) == [],
                 "comparer passes the reference without --ablate")

    def perturb(edit, fragment, ablated=listed):
        result = as_result(ref, ablated, "mean" if ablated else None)
        edit(result)
        problems = compare_ablation(result, ref, ablated, "mean" if ablated else None)
        report.check(len(problems) == 1 and fragment in problems[0],
                     "comparer flags %s" % fragment, str(problems))

    def add(path, delta):
        def edit(result):
            node = result
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] += delta * max(1.0, abs(node[path[-1]]))
        return edit
    perturb(add(["logits", 3, 7], 1e-8), "logits max diff")
    perturb(add(["layers", 1, "attention", "output", 5, 2], 2e-9),
            "layer 1 attention output max diff")
    perturb(add(["layers", 0, "attention", "heads", 1, "weights", 6, 4], 2e-9),
            "layer 0 head 1 weights")
    perturb(add(["token_losses", 4], 2e-9), "token_losses max diff")
    perturb(add(["loss"], 2e-9), "loss diff")
    perturb(add(["head_scores", 5, "induction"], 2e-9),
            "head_scores[5] (layer 1 head 1) induction")
    perturb(lambda r: r["head_scores"][1].update(duplicate_token=None),
            "head_scores[1] (layer 0 head 1) duplicate_token None")
    perturb(lambda r: r["head_scores"][0].update(layer=1),
            "head_scores[0] (layer 0 head 0) names layer 1 head 0")
    perturb(lambda r: r.update(ablated=[[1, 0], [0, 1]]), "ablated [[1, 0], [0, 1]]")
    perturb(lambda r: r.update(ablate_mode="zero"), "ablate_mode 'zero'")
    perturb(lambda r: r.pop("token_losses"), "token_losses missing")
    perturb(lambda r: r.update(ablated=[[0, 1]]), "ablated [[0, 1]] without --ablate",
            ablated=None)
    one = Reference(folder.config, weights, ids[:1])
    result = as_result(one)
    result["loss"] = 0.0
    problems = compare_ablation(result, one, None, None)
    report.check(len(problems) == 1 and "loss 0.0 present" in problems[0],
                 "comparer flags a loss on one token", str(problems))


def self_checks(folders, weights_of):
    report = ck.Report()
    by_name = {f.name: f for f in folders}
    check_scores_by_hand(report)
    check_texts(report, folders, weights_of)
    for folder in folders:
        weights = weights_of[folder.name]
        ids = ids_of(folder, REPEATED)
        check_nothing(report, folder, weights, ids)
        check_one_token(report, folder, weights, ids)
        check_token_losses(report, folder, weights, ids)
    for name, layer in (("gpt2", 0), ("llama", 1), ("llama_tied_headdim", 0), ("qwen2", 1)):
        folder = by_name[name]
        check_whole_layer(report, folder, weights_of[name], ids_of(folder, REPEATED), layer)
    for name, ablate in (("gpt2", {(0, 1), (1, 0)}), ("gpt2_prefixed", {(0, 2)}),
                         ("llama", {(0, 1), (1, 3)}), ("llama_tied_headdim", {(1, 1)}),
                         ("qwen2", {(0, 0), (0, 3)}), ("mistral", {(1, 2)})):
        folder = by_name[name]
        check_zero_columns(report, folder, weights_of[name], ids_of(folder, REPEATED), ablate)
    for name, ablate in (("gpt2", {(1, 1)}), ("llama", {(0, 1), (1, 2)}),
                         ("mistral", {(0, 1), (0, 2)}), ("qwen2", {(1, 3)})):
        folder = by_name[name]
        check_mean_keeps_mean(report, folder, weights_of[name], ids_of(folder, REPEATED), ablate)
    check_comparer(report, by_name["llama"], weights_of["llama"])
    return report.failed


# ---------------------------------------------------------------------------------------------
# The lab.


def check_case(binary, folder, weights, text, listing, mode, ablated):
    args = ["run", folder.path, "--text", text, "--json"]
    if listing is not None:
        args += ["--ablate", listing]
    if mode is not None:
        args += ["--ablate-mode", mode]
    result, error = ck.run_lab(binary, args)
    if error:
        return [error]
    ablate = None if ablated is None else {tuple(p) for p in ablated}
    ref = Reference(folder.config, weights, ids_of(folder, text), ablate=ablate,
                    mode=mode or "zero")
    return compare_ablation(result, ref, ablated, None if ablated is None else mode or "zero")


def check_refusal(binary, folder, extra, fragments):
    args = ["run", folder.path, "--text", REPEATED, "--json"] + extra
    try:
        out = subprocess.run([binary] + args, capture_output=True, timeout=LAB_TIMEOUT)
    except subprocess.TimeoutExpired:
        return ["timed out after %d s" % LAB_TIMEOUT]
    stderr = out.stderr.decode("utf-8", "replace").strip()
    problems = []
    if out.returncode != 2:
        problems.append("exit %d, expected 2" % out.returncode)
    missing = [f for f in fragments if f not in stderr]
    if missing:
        problems.append("stderr %r lacks %s" % (stderr[:200], missing))
    elif "unknown option" in stderr:  # a lab without the options refuses them all
        problems.append("stderr %r: the option is unknown" % stderr[:200])
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", help="the attention-lab executable")
    parser.add_argument("--work", required=True, help="folder for the model folders")
    parser.add_argument("--reference-only", action="store_true",
                        help="build the folders and run the self-checks without the lab")
    args = parser.parse_args()
    start = time.monotonic()
    torch.set_num_threads(1)
    if not args.reference_only and (not args.binary or not os.access(args.binary, os.X_OK)):
        print("ablation cross-check: cannot run the binary %r" % args.binary)
        return 2
    os.makedirs(args.work, exist_ok=True)
    folders = ck.all_folders()
    for folder in folders:
        ck.write_folder(folder, args.work)
    weights_of = {f.name: ck.read_folder_weights(f.path) for f in folders}
    by_name = {f.name: f for f in folders}
    failed_checks = self_checks(folders, weights_of)
    if args.reference_only:
        print("ablation reference: %d folders, %d self-checks failed (%.1f s)" % (
            len(folders), failed_checks, time.monotonic() - start))
        return 1 if failed_checks else 0
    failed = 0
    for name, text, listing, mode, ablated in CASES:
        problems = check_case(args.binary, by_name[name], weights_of[name], text, listing, mode,
                              ablated)
        label = "%s: %r --ablate %s --ablate-mode %s" % (name, text, listing, mode)
        if problems:
            failed += 1
            print("FAIL %s: %s" % (label, "; ".join(problems[:6]) + (
                "; and %d more" % (len(problems) - 6) if len(problems) > 6 else "")))
        else:
            print("ok   %s" % label)
    for name, extra, fragments in REFUSALS:
        problems = check_refusal(args.binary, by_name[name], extra, fragments)
        label = "%s: refuses %s" % (name, " ".join(extra))
        if problems:
            failed += 1
            print("FAIL %s: %s" % (label, "; ".join(problems)))
        else:
            print("ok   %s" % label)
    print("ablation cross-check: %d runs, %d refusals, %d failed (%d self-checks failed, %.1f s)"
          % (len(CASES), len(REFUSALS), failed, failed_checks, time.monotonic() - start))
    return 1 if failed or failed_checks else 0


if __name__ == "__main__":
    sys.exit(main())
