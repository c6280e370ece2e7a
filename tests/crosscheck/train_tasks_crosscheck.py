#!/usr/bin/python3
"""Independent PyTorch cross-check of the training tasks (`attention-lab train --task`).

Written from the specification only (never from the C++ sources). It checks,
against the binary's `train --task T ... --save OUT.json --json` output:

 1. vocabulary: the saved model's "vocab". Symbol tasks (all but text):
    ["<s>", "|"] + symbols, symbol i = (a..z A..Z 0..9)[i] while it lasts,
    else "s" + i; V entries in all. Text: the distinct characters of the
    text (space and tab "␣", newline "↵", other control characters
    dropped) sorted by their UTF-8 bytes; a token's id is its index.
 2. the evaluation batch (eval.inputs.batch, 64 sequences): the structure of
    each task (induction's repeated segment at an evaluation distance
    N//2 < D <= N-1-L with 3 <= L <= max(3, N//4) and its L-1 targets;
    previous_token's targets; copy / reverse / sort's [<s>] q [|] answer
    with the answer as targets; text's next-character targets, every
    sequence a substring of the text's last tenth).
 3. the probe batch (eval.inputs.probe, 16 sequences of N tokens): <s> first
    (symbol tasks), every token distinct except one repeated segment at an
    evaluation distance.
 4. eval.loss (1e-9 relative) and eval.accuracy (exactly) from a PyTorch
    forward pass of the saved model over the evaluation batch (the
    reference of reference_torch.py, every shape the options make:
    --variant gqa / mqa / mla, --kv-heads, --latent-dim, --positions
    sinusoidal / rope), and the saved model must have
    the asked shape: its variant, kv_heads (default heads / 2, at least 1),
    latent_dim (default d_model / 2), positions, rope_base (10000) and, for
    mla with rope, rope_dim = max(2, 2 floor(head_dim / 4)).
 5. eval.heads: previous_token, first_token, induction and duplicate_token
    scores of every head from the attention weights on the probe batch
    (pooled: sum over every probe sequence / number of terms), to 1e-9.
 6. the learning-rate schedule (the --batches form): linear warm-up, then
    constant or a cosine decay to --min-lr, with torch.optim.AdamW; 12
    steps' losses and grad norms, and the saved weights, to 1e-9.
 7. determinism: the same command twice, and OMP_NUM_THREADS=1 against 2,
    give bit-identical losses, evaluation and saved files.
 8. bad invocations exit 2 with one line on stderr naming the problem
    (--kv-heads that does not divide --heads, an unknown --variant, rope on
    an odd head_dim, ...).

Where the vocabulary is too small for "every symbol distinct except the
segment" (V - 2 < N - 4), that part of 2 and 3 cannot hold for any program;
then only the segment itself is checked (some occurrence of it at an allowed
distance), and the induction / duplicate_token scores only when every probe
sequence has exactly one possible segment.

Run:  /usr/bin/python3 train_tasks_crosscheck.py --binary build/app/attention-lab
      [--keep DIR]  keep every file written (models, outputs) in DIR

Exit status: 0 all agree, 1 any mismatch, 2 the binary cannot be run.
"""

import collections
import json
import math
import os
import subprocess
import sys
import time
import unicodedata

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import Binary, cannot_run, command_line, probe, tolist, work_folder  # noqa: E402
from reference_torch import ffn_kind, params_of, train  # noqa: E402
from reference_torch import forward as model_forward  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
SONNETS = os.path.join(REPO, "assets", "texts", "sonnets.txt")
TINY = os.path.join(REPO, "assets", "models", "tiny.json")

TOL = 1e-9
GLYPHS = ("abcdefghijklmnopqrstuvwxyz" "ABCDEFGHIJKLMNOPQRSTUVWXYZ" "0123456789")
SYMBOL_TASKS = ("induction", "previous_token", "copy", "reverse", "sort")
EVAL_SEQS, PROBE_SEQS = 64, 16


def eval_seqs(N):
    """At most as many tokens as 64 sequences of 32, at least one sequence."""
    return min(EVAL_SEQS, max(1, EVAL_SEQS * 32 // N))


def probe_seqs(N):
    return min(PROBE_SEQS, max(1, PROBE_SEQS * 32 // N))

# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------

class Checker(Binary):
    """The binary (run from the repository, for its assets), failures and notes."""

    def __init__(self, binary, folder):
        super().__init__(binary, folder, timeout=120, cwd=REPO)
        self.failures = []
        self.notes = []
        self.values = 0

    def fail(self, what):
        print("MISMATCH " + what)
        self.failures.append(what)

    def note(self, what):
        self.notes.append(what)


class Group:
    """Counts the failures of one group of checks for its summary line."""

    def __init__(self, ck, name):
        self.ck, self.name = ck, name
        self.start = len(ck.failures)
        self.checked = 0

    def ok(self, cond, what):
        self.checked += 1
        if not cond:
            self.ck.fail("%s: %s" % (self.name, what))
        return cond

    def close_rel(self, where, expected, found, tol=TOL):
        self.checked += 1
        self.ck.values += 1
        if not isinstance(found, (int, float)) or isinstance(found, bool) or \
                not abs(expected - found) <= tol * max(1.0, abs(expected)):
            self.ck.fail("%s: %s: expected %.17g, found %r%s" % (
                self.name, where, expected, found,
                " (difference %.3g)" % abs(expected - found)
                if isinstance(found, (int, float)) else ""))
            return False
        return True

    def summary(self, extra=""):
        n = len(self.ck.failures) - self.start
        print("%-40s %s (%d checks%s)" % (self.name, "ok" if n == 0 else "FAILED: %d" % n,
                                          self.checked, ", " + extra if extra else ""))
        return n == 0

# --------------------------------------------------------------------------
# Vocabularies and texts (spec 1)
# --------------------------------------------------------------------------

def symbol_vocab(V):
    syms = [GLYPHS[i] if i < len(GLYPHS) else "s%d" % i for i in range(V - 2)]
    return ["<s>", "|"] + syms


def text_tokens(raw):
    """The text as a list of tokens: space / tab -> ␣, newline -> ↵, other
    control characters dropped."""
    out = []
    for ch in raw:
        if ch in (" ", "\t"):
            out.append("\u2423")
        elif ch == "\n":
            out.append("\u21b5")
        elif unicodedata.category(ch) == "Cc":
            continue
        else:
            out.append(ch)
    return out


def text_vocab(tokens):
    return sorted(set(tokens), key=lambda s: s.encode("utf-8"))

# --------------------------------------------------------------------------
# The PyTorch forward pass of a saved model file
# --------------------------------------------------------------------------

def forward(model, p, ids, want_attention=False):
    """Logits (n x V) and, if asked, [layer][head] attention weights (n x n)."""
    record = [] if want_attention else None
    logits = model_forward(model, p, ids, {}, record)
    if want_attention:
        return logits, [[P for P, _ in heads] for heads in record]
    return logits

# --------------------------------------------------------------------------
# Segments (spec 2, 3)
# --------------------------------------------------------------------------

def l_max(N):
    return max(3, N // 4)


def eval_distance_ok(N, L, D):
    return N // 2 < D <= N - 1 - L


def strict_segment(ids, start):
    """(first, second, L) if ids[start:] are distinct except one repeated
    segment (each repeated token exactly twice, the second occurrences one
    block at a single distance), else a string saying what is wrong."""
    body = ids[start:]
    where = collections.defaultdict(list)
    for i, t in enumerate(body):
        where[t].append(i + start)
    if any(len(v) > 2 for v in where.values()):
        t = next(t for t, v in where.items() if len(v) > 2)
        return "token %d appears %d times (positions %s)" % (t, len(where[t]), where[t])
    pairs = sorted(v for v in where.values() if len(v) == 2)
    if not pairs:
        return "no repeated segment"
    first, second = pairs[0]
    L = len(pairs)
    expect = [[first + k, second + k] for k in range(L)]
    if pairs != expect:
        return "repeated tokens are not one contiguous segment at one distance: pairs %s" % pairs
    return (first, second, L)


def candidate_segments(ids, start, N):
    """Every (first, second, L) allowed at an evaluation distance whose
    copies are equal."""
    out = []
    for L in range(3, l_max(N) + 1):
        for first in range(start, len(ids)):
            for second in range(first + N // 2 + 1, len(ids) - L + 1):
                if eval_distance_ok(N, L, second - first) and \
                        ids[first:first + L] == ids[second:second + L]:
                    out.append((first, second, L))
    return out

# --------------------------------------------------------------------------
# Evaluation inputs (spec 2, 3)
# --------------------------------------------------------------------------

def check_eval_batch(g, task, batch, N, V, text_ids=None, tail_start=None, strict=True):
    """Every sequence of the evaluation batch has the task's structure."""
    if not g.ok(isinstance(batch, list) and len(batch) == eval_seqs(N),
                "eval.inputs.batch has %r sequences, expected %d" % (
                    len(batch) if isinstance(batch, list) else batch, eval_seqs(N))):
        return False
    bad = 0
    m = (N - 2) // 2
    for si, row in enumerate(batch):
        ids, tg = row.get("ids"), row.get("targets")
        where = "batch[%d] ids=%s targets=%s" % (si, ids, tg)
        problems = []
        if not isinstance(ids, list) or not isinstance(tg, list) or len(ids) != len(tg):
            problems.append("ids and targets are not lists of one length")
        elif task == "text":
            if len(ids) != N:
                problems.append("length %d, expected %d" % (len(ids), N))
            if tg[:-1] != ids[1:]:
                problems.append("targets[:-1] != ids[1:]")
            if not (isinstance(tg[-1], int) and 0 <= tg[-1] < V):
                problems.append("last target %r is not a token id" % tg[-1])
            if not problems:
                needle = ids + [tg[-1]]
                starts = [s for s in range(tail_start, len(text_ids) - len(needle) + 1)
                          if text_ids[s:s + len(needle)] == needle]
                if not starts:
                    problems.append("ids + last target is no substring of the text's last "
                                    "tenth (characters %d..%d)" % (tail_start, len(text_ids) - 1))
        else:
            if any(not isinstance(t, int) or not 0 <= t < V for t in ids):
                problems.append("token id outside 0..%d" % (V - 1))
            elif ids[0] != 0:
                problems.append("ids[0] = %r, expected 0 (<s>)" % ids[0])
            elif task in ("induction", "previous_token"):
                if len(ids) != N:
                    problems.append("length %d, expected %d" % (len(ids), N))
                elif any(t < 2 for t in ids[1:]):
                    problems.append("a token after <s> is not a symbol (id < 2)")
                elif task == "previous_token":
                    if tg != [-1] + ids[:-1]:
                        problems.append("targets != [-1] + ids[:-1]")
                else:
                    problems += induction_batch_problems(ids, tg, N, V, strict)
            else:
                if len(ids) != 2 * m + 2:
                    problems.append("length %d, expected 2m+2 = %d (m = %d)" % (len(ids), 2 * m + 2, m))
                else:
                    q, sep, ans = ids[1:m + 1], ids[m + 1], ids[m + 2:]
                    if any(t < 2 for t in q):
                        problems.append("q %s holds a non-symbol" % q)
                    if sep != 1:
                        problems.append("ids[m+1] = %r, expected 1 (|)" % sep)
                    want = {"copy": q, "reverse": q[::-1], "sort": sorted(q)}[task]
                    if ans != want:
                        problems.append("answer %s, expected %s" % (ans, want))
                    want_tg = [-1] * (m + 1) + want + [-1]
                    if tg != want_tg:
                        problems.append("targets %s, expected %s" % (tg, want_tg))
        if problems:
            bad += 1
            if bad <= 3:
                g.ok(False, "%s %s: %s" % (task, where, "; ".join(problems)))
        else:
            g.checked += 1
    if bad > 3:
        g.ok(False, "%s: %d of %d evaluation sequences are wrong (first 3 shown)" % (
            task, bad, len(batch)))
    return bad == 0


def induction_batch_problems(ids, tg, N, V, strict):
    pos = [i for i, t in enumerate(tg) if t != -1]
    if not pos:
        return ["no targets"]
    second, L = pos[0], len(pos) + 1
    out = []
    if pos != list(range(second, second + L - 1)):
        out.append("targets are not one block")
    if not 3 <= L <= l_max(N):
        out.append("L = %d not in 3..%d" % (L, l_max(N)))
    for i in pos:
        if i + 1 >= len(ids) or tg[i] != ids[i + 1]:
            out.append("targets[%d] = %r, expected ids[%d]" % (i, tg[i], i + 1))
            break
    if out:
        return out
    if strict:
        seg = strict_segment(ids, 1)
        if isinstance(seg, str):
            return [seg]
        first, s2, L2 = seg
        if (s2, L2) != (second, L):
            return ["repeated segment at %d (L %d) but targets say %d (L %d)" % (s2, L2, second, L)]
        if not eval_distance_ok(N, L, second - first):
            return ["distance %d not in (%d, %d]" % (second - first, N // 2, N - 1 - L)]
        return []
    firsts = [f for f in range(1, second)
              if eval_distance_ok(N, L, second - f) and ids[f:f + L] == ids[second:second + L]]
    if not firsts:
        return ["no earlier copy of ids[%d:%d] at a distance in (%d, %d]" % (
            second, second + L, N // 2, N - 1 - L)]
    return []


def check_probe(g, task, probe, N, V, strict):
    """Probe structure; returns the segments ([(first, second, L)] or None
    when they cannot be told from the ids)."""
    if not g.ok(isinstance(probe, list) and len(probe) == probe_seqs(N),
                "eval.inputs.probe has %r sequences, expected %d" % (
                    len(probe) if isinstance(probe, list) else probe, probe_seqs(N))):
        return None
    start = 0 if task == "text" else 1
    segs, bad, ambiguous = [], 0, 0
    for si, ids in enumerate(probe):
        problems = []
        if not isinstance(ids, list) or len(ids) != N:
            problems.append("length %r, expected %d" % (len(ids) if isinstance(ids, list) else ids, N))
        elif any(not isinstance(t, int) or not 0 <= t < V for t in ids):
            problems.append("token id outside 0..%d" % (V - 1))
        elif task != "text" and ids[0] != 0:
            problems.append("ids[0] = %r, expected 0 (<s>)" % ids[0])
        elif task != "text" and any(t < 2 for t in ids[1:]):
            problems.append("a token after <s> is not a symbol")
        else:
            if strict:
                seg = strict_segment(ids, start)
                if isinstance(seg, str):
                    problems.append(seg)
                else:
                    first, second, L = seg
                    if not 3 <= L <= l_max(N):
                        problems.append("L = %d not in 3..%d" % (L, l_max(N)))
                    elif not eval_distance_ok(N, L, second - first):
                        problems.append("distance %d not in (%d, %d] (L %d)" % (
                            second - first, N // 2, N - 1 - L, L))
                    else:
                        segs.append(seg)
            else:
                cands = candidate_segments(ids, start, N)
                if not cands:
                    problems.append("no repeated segment at an evaluation distance")
                elif len(cands) > 1:
                    ambiguous += 1
                else:
                    segs.append(cands[0])
        if problems:
            bad += 1
            if bad <= 3:
                g.ok(False, "%s probe[%d] %s: %s" % (task, si, ids, "; ".join(problems)))
        else:
            g.checked += 1
    if bad > 3:
        g.ok(False, "%s: %d of %d probe sequences are wrong (first 3 shown)" % (task, bad, len(probe)))
    if bad or ambiguous:
        return None
    return segs

# --------------------------------------------------------------------------
# Evaluation numbers (spec 4, 5)
# --------------------------------------------------------------------------

def check_eval_numbers(g, model, p, ev, segs):
    batch = ev["inputs"]["batch"]
    total, correct, nll = 0, 0, 0.0
    with torch.no_grad():
        for row in batch:
            logits = forward(model, p, row["ids"])
            tg = torch.tensor(row["targets"])
            sel = tg != -1
            if sel.any():
                lp = torch.log_softmax(logits[sel], dim=-1)
                nll += float(-lp.gather(1, tg[sel].unsqueeze(1)).sum())
                correct += int((logits[sel].argmax(dim=-1) == tg[sel]).sum())
                total += int(sel.sum())
    loss = nll / total
    g.close_rel("eval.loss (%d target positions)" % total, loss, ev.get("loss"))
    acc = ev.get("accuracy")
    g.ok(isinstance(acc, (int, float)) and abs(acc - correct / total) <= 1e-15,
         "eval.accuracy: expected %d/%d = %.17g, found %r" % (correct, total, correct / total, acc))

    # Head scores on the probe batch.
    probe = ev["inputs"]["probe"]
    heads = ev.get("heads")
    want_n = sum(layer["attention"]["heads"] for layer in model["layers"])
    if not g.ok(isinstance(heads, list) and len(heads) == want_n,
                "eval.heads has %r entries, expected %d" % (
                    len(heads) if isinstance(heads, list) else heads, want_n)):
        return
    sums = {}
    with torch.no_grad():
        atts = [forward(model, p, ids, want_attention=True)[1] for ids in probe]
    idx = 0
    alt_msgs = []
    for li, layer in enumerate(model["layers"]):
        for h in range(layer["attention"]["heads"]):
            row = heads[idx]
            idx += 1
            if not g.ok(isinstance(row, dict) and row.get("layer") == li and row.get("head") == h,
                        "eval.heads[%d] is %r, expected layer %d head %d" % (idx - 1, row, li, h)):
                continue
            prev = firstt = 0.0
            n_pf = 0
            ind = dup = 0.0
            n_seg = 0
            ind_means, dup_means = [], []
            for si, ids in enumerate(probe):
                A = atts[si][li][h]
                n = len(ids)
                ii = torch.arange(1, n)
                prev += float(A[ii, ii - 1].sum())
                firstt += float(A[ii, 0].sum())
                n_pf += n - 1
                if segs is not None:
                    first, second, L = segs[si]
                    kk = torch.arange(L)
                    a_ind = A[second + kk, first + kk + 1]
                    a_dup = A[second + kk, first + kk]
                    ind += float(a_ind.sum())
                    dup += float(a_dup.sum())
                    n_seg += L
                    ind_means.append(float(a_ind.mean()))
                    dup_means.append(float(a_dup.mean()))
            where = "layer %d head %d" % (li, h)
            g.close_rel(where + " previous_token", prev / n_pf, row.get("previous_token"))
            g.close_rel(where + " first_token", firstt / n_pf, row.get("first_token"))
            if segs is not None:
                for key, pooled, means in (("induction", ind / n_seg, ind_means),
                                           ("duplicate_token", dup / n_seg, dup_means)):
                    if not g.close_rel(where + " " + key + " (pooled over %d terms)" % n_seg,
                                       pooled, row.get(key)):
                        mm = sum(means) / len(means)
                        if isinstance(row.get(key), (int, float)) and abs(mm - row[key]) <= TOL:
                            alt_msgs.append("%s %s matches the mean of per-sequence means "
                                            "(%.17g) instead of the pooled mean" % (where, key, mm))
    for msg in alt_msgs:
        g.ck.fail("%s: note: %s" % (g.name, msg))

# --------------------------------------------------------------------------
# Task runs
# --------------------------------------------------------------------------

def task_cmd(spec, save):
    args = ["train", "--task", spec["task"]]
    for k in ("layers", "heads", "d-model", "positions", "norm", "ffn", "d-ff", "variant",
              "kv-heads", "latent-dim", "vocab", "seq-len", "steps", "batch", "seed", "lr", "text"):
        if k in spec:
            args += ["--" + k, str(spec[k])]
    return args + ["--save", save, "--json"]


def run_task(ck, spec, label):
    g = Group(ck, "task %s" % label)
    save = ck.file("task_%s.json" % label)
    args = task_cmd(spec, save)
    cmd = "attention-lab " + " ".join(args)
    r = ck.run(*args)
    if not g.ok(r.returncode == 0, "`%s` exit %d: %s" % (cmd, r.returncode, r.stderr.strip())):
        return g.summary()
    try:
        out = json.loads(r.stdout)
        with open(save) as f:
            model = json.load(f)
    except (ValueError, OSError) as e:
        g.ok(False, "`%s`: unreadable output or saved model: %s" % (cmd, e))
        return g.summary()
    task, N, S = spec["task"], spec["seq-len"], spec["steps"]

    # Output shape.
    g.ok(out.get("task") == task, "\"task\" is %r, expected %r" % (out.get("task"), task))
    steps = out.get("steps")
    if g.ok(isinstance(steps, list) and len(steps) == S, "%r steps, expected %d" % (
            len(steps) if isinstance(steps, list) else steps, S)):
        for s, row in enumerate(steps, start=1):
            g.ok(isinstance(row, dict) and row.get("step") == s and
                 all(isinstance(row.get(k), (int, float)) and math.isfinite(row[k])
                     for k in ("loss", "grad_norm")), "step row %d is %r" % (s, row))
    g.ok(isinstance(out.get("seconds"), (int, float)) and out["seconds"] >= 0,
         "\"seconds\" is %r" % out.get("seconds"))
    ev = out.get("eval")
    if not g.ok(isinstance(ev, dict) and isinstance(ev.get("inputs"), dict),
                "no eval / eval.inputs: %r" % (ev if not isinstance(ev, dict) else list(ev))):
        return g.summary()

    # The saved model's shape follows the options.
    D = spec.get("d-model", 64)
    shape = {"d_model": D, "positions": spec.get("positions", "learned"),
             "norm": spec.get("norm", "pre")}
    for k, v in shape.items():
        g.ok(model.get(k) == v, "saved %s is %r, expected %r" % (k, model.get(k), v))
    kind = spec.get("ffn", "none")
    g.ok(ffn_kind(model) == kind, "saved ffn is %r, expected kind %r" % (model.get("ffn"), kind))
    if kind != "none":
        g.ok(model.get("ffn", {}).get("d_ff") == spec.get("d-ff", 4 * D),
             "saved ffn.d_ff is %r, expected %r" % (model.get("ffn", {}).get("d_ff"),
                                                    spec.get("d-ff", 4 * D)))
    layers = model.get("layers", [])
    g.ok(len(layers) == spec.get("layers", 2), "saved model has %d layers, expected %d" % (
        len(layers), spec.get("layers", 2)))
    H = spec.get("heads", 4)
    hd = D // H
    variant = spec.get("variant", "mha")
    positions = spec.get("positions", "learned")
    # The attention block each layer must have: what the options ask, and the
    # defaults for what they leave out.
    want_att = {"variant": variant, "heads": H, "head_dim": hd}
    if variant == "gqa":
        want_att["kv_heads"] = spec.get("kv-heads", max(1, H // 2))
    if variant == "mla":
        want_att["latent_dim"] = spec.get("latent-dim", D // 2)
        if positions == "rope":
            want_att["rope_dim"] = max(2, 2 * (hd // 4))
    G = {"mha": H, "gqa": want_att.get("kv_heads"), "mqa": 1, "mla": H}[variant]
    if variant == "mla":
        want_w = {"W_Q": (D, H * hd), "W_DKV": (D, want_att["latent_dim"]),
                  "W_UK": (want_att["latent_dim"], H * hd),
                  "W_UV": (want_att["latent_dim"], H * hd), "W_O": (H * hd, D)}
        if positions == "rope":
            want_w.update(W_QR=(D, H * want_att["rope_dim"]), W_KR=(D, want_att["rope_dim"]))
    else:
        want_w = {"W_Q": (D, H * hd), "W_K": (D, G * hd), "W_V": (D, G * hd), "W_O": (H * hd, D)}
    for li, layer in enumerate(layers):
        a = layer.get("attention", {})
        got = {k: a.get(k, "mha" if k == "variant" else None) for k in want_att}
        g.ok(got == want_att, "saved layers[%d].attention has %r, expected %r" % (li, got, want_att))
        for k in ("kv_heads", "latent_dim", "query_latent_dim", "rope_dim", "sparse"):
            if k not in want_att:
                g.ok(k not in a or (k == "kv_heads" and variant == "mha" and a[k] == H),
                     "saved layers[%d].attention has %s %r (variant %s, positions %s)" % (
                         li, k, a.get(k), variant, positions))
        g.ok(a.get("mask", "causal") == "causal" and a.get("kernel", "softmax") == "softmax"
             and a.get("scale", True) is True,
             "saved layers[%d].attention is not causal, softmax, scaled: %r" % (li, a))
        w = layer.get("weights", {})
        shapes = {k: np.asarray(w[k]).shape for k in want_w if k in w}
        attn_w = {k for k in w if k.startswith("W_") and k not in ("W_1", "W_2", "W_3")}
        g.ok(shapes == want_w and attn_w == set(want_w),
             "saved layers[%d] attention weights %r, expected %r" % (
                 li, {k: np.asarray(w[k]).shape for k in sorted(attn_w)}, want_w))
    if positions in ("sinusoidal", "rope"):
        g.ok(model.get("rope_base", 10000) == 10000,
             "saved rope_base is %r, expected 10000" % model.get("rope_base"))
    g.ok("W_P" in model if positions == "learned" else "W_P" not in model,
         "saved W_P %s with positions %s" % ("missing" if positions == "learned" else "present",
                                             positions))
    g.ok(isinstance(model.get("max_positions"), int) and model["max_positions"] >= N,
         "saved max_positions %r < seq_len %d" % (model.get("max_positions"), N))

    # 1. Vocabulary.
    text_ids = tail = None
    if task == "text":
        with open(spec.get("text", SONNETS), encoding="utf-8") as f:
            toks = text_tokens(f.read())
        vocab = text_vocab(toks)
        index = {t: i for i, t in enumerate(vocab)}
        text_ids = [index[t] for t in toks]
        n = len(text_ids)
        tail = n - n // 10
    else:
        vocab = symbol_vocab(spec.get("vocab", 64))
    V = len(vocab)
    if model.get("vocab") != vocab:
        got = model.get("vocab")
        diff = [i for i in range(min(len(got), V)) if got[i] != vocab[i]] if isinstance(got, list) else []
        g.ok(False, "saved vocab (%d tokens) differs from the specification (%d tokens)%s" % (
            len(got) if isinstance(got, list) else -1, V,
            ": first at %d: %r, expected %r" % (diff[0], got[diff[0]], vocab[diff[0]]) if diff else
            ": %r vs %r" % (got, vocab)))
    else:
        g.checked += 1

    # 2, 3. Inputs.
    if task == "text":
        strict = V >= N - 3
    else:
        strict = V - 2 >= N - 4
    if not strict:
        ck.note("task %s: V = %d, N = %d: 'every symbol distinct except the segment' cannot hold; "
                "only the segment was checked" % (label, V, N))
    check_eval_batch(g, task, ev["inputs"].get("batch"), N, V, text_ids, tail, strict)
    segs = check_probe(g, task, ev["inputs"].get("probe"), N, V, strict)
    if segs is None and not strict:
        ck.note("task %s: some probe segment is ambiguous (small vocabulary): induction and "
                "duplicate_token scores not checked" % label)

    # 4, 5. Loss, accuracy, head scores on the saved model.
    try:
        p = params_of(model, grad=False)
        batch_ok = all(isinstance(r_, dict) and isinstance(r_.get("ids"), list)
                       for r_ in ev["inputs"]["batch"])
        if batch_ok:
            check_eval_numbers(g, model, p, ev, segs)
    except (KeyError, IndexError, TypeError, RuntimeError, ValueError) as e:
        g.ok(False, "cannot evaluate the saved model / eval: %s: %s" % (type(e).__name__, e))
    shape = "" if variant == "mha" and positions in ("none", "learned") else ", %s %s" % (
        variant + "".join(" %s %d" % (k, want_att[k]) for k in ("kv_heads", "latent_dim",
                                                                 "rope_dim") if k in want_att),
        positions)
    return g.summary("%s, N %d, V %d%s%s" % (task, N, V, "" if strict else ", small vocab", shape))


def write_custom_text(ck):
    """A text with tabs, CR LF, a form feed, non-ASCII letters and a CJK character."""
    lines = []
    words = ["Crème", "brûlée", "naïve", "Zoë", "猫", "café", "jalapeño", "façade",
             "über", "quixotic", "wolf", "jumps", "vex", "—", "dash", "Ωmega", "tab"]
    for i in range(60):
        w = [words[(i * 7 + j * 3) % len(words)] for j in range(4)]
        sep = "\t" if i % 5 == 0 else " "
        lines.append(sep.join(w) + ("," if i % 2 else ".") + ("\f" if i % 11 == 3 else ""))
    raw = "\r\n".join(lines) + "\r\n"
    p = ck.file("custom_text.txt")
    with open(p, "w", encoding="utf-8", newline="") as f:
        f.write(raw)
    return p

# --------------------------------------------------------------------------
# 6. Learning-rate schedule (the --batches form)
# --------------------------------------------------------------------------

def schedule_model():
    rng = np.random.default_rng(7)
    D, H, d, V, P, Fd = 8, 2, 4, 6, 8, 12

    def nrm(shape, s):
        return rng.standard_normal(shape) * s

    layers = []
    for _ in range(2):
        layers.append({
            "attention": {"variant": "mha", "heads": H, "head_dim": d, "mask": "causal",
                          "scale": True},
            "weights": {"W_Q": nrm((D, H * d), 1 / math.sqrt(D)),
                        "W_K": nrm((D, H * d), 1 / math.sqrt(D)),
                        "W_V": nrm((D, H * d), 1 / math.sqrt(D)),
                        "W_O": nrm((H * d, D), 1 / math.sqrt(H * d)),
                        "ln1_gain": 1 + nrm(D, 0.2), "ln1_bias": nrm(D, 0.2),
                        "ln2_gain": 1 + nrm(D, 0.2), "ln2_bias": nrm(D, 0.2),
                        "W_1": nrm((D, Fd), 1 / math.sqrt(D)), "b_1": nrm(Fd, 0.2),
                        "W_2": nrm((Fd, D), 1 / math.sqrt(Fd)), "b_2": nrm(D, 0.2)}})
    model = {"name": "schedule_crosscheck", "vocab": ["<s>", "a", "b", "c", "d", "e"],
             "d_model": D, "max_positions": P, "positions": "learned", "norm": "pre",
             "ffn": {"kind": "gelu", "d_ff": Fd}, "layers": layers,
             "embedding": nrm((V, D), 1.0), "W_P": nrm((P, D), 0.5),
             "final_gain": 1 + nrm(D, 0.2), "final_bias": nrm(D, 0.2),
             "unembedding": nrm((D, V), 1 / math.sqrt(D)), "seed": 1}

    model = tolist(model)
    batches = []
    for b in range(3):
        batches.append([[int(t) for t in rng.integers(0, V, size=int(rng.integers(3, P + 1)))]
                        for _ in range(2 + b % 2)])
    return model, batches


def lr_at(s, lr, warmup, cosine, min_lr, S):
    if warmup and s <= warmup:
        return lr * s / warmup
    if not cosine:
        return lr
    if s <= S:
        return min_lr + (lr - min_lr) * (1 + math.cos(math.pi * (s - warmup) / (S - warmup))) / 2
    return min_lr


def check_schedule(ck):
    g = Group(ck, "lr schedule (--batches)")
    model, batches = schedule_model()
    mpath = ck.write("schedule_model.json", model)
    bpath = ck.write("schedule_batches.json", {"batches": batches})
    S, lr = 12, 0.01
    for label, flags, warmup, cosine, min_lr in (
            ("--warmup 3 --cosine --min-lr 0.001",
             ["--warmup", "3", "--cosine", "--min-lr", "0.001"], 3, True, 0.001),
            ("--warmup 4", ["--warmup", "4"], 4, False, 0.0)):
        save = ck.file("schedule_out_%d.json" % warmup)
        args = ["train", "--model", mpath, "--batches", bpath, "--steps", str(S),
                "--lr", repr(lr), "--save", save, "--json"] + flags
        r = ck.run(*args)
        if not g.ok(r.returncode == 0, "%s: exit %d: %s" % (label, r.returncode, r.stderr.strip())):
            continue
        out = json.loads(r.stdout)
        # Reference.
        p = params_of(model)
        o = {"lr": lr, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0,
             "clip": None}
        ref = train(model, p, batches, o, S,
                    lr_at=lambda s: lr_at(s, lr, warmup, cosine, min_lr, S))
        steps = out.get("steps", [])
        if not g.ok(len(steps) == S, "%s: %d steps, expected %d" % (label, len(steps), S)):
            continue
        for s, (row, (loss, gn, _)) in enumerate(zip(steps, ref), start=1):
            g.close_rel("%s step %d loss (lr %.6g)" % (label, s, lr_at(s, lr, warmup, cosine, min_lr, S)),
                        loss, row.get("loss"))
            g.close_rel("%s step %d grad_norm" % (label, s), gn, row.get("grad_norm"))
        # The saved weights hold step 12's update too (lr at S).
        with open(save) as f:
            saved = json.load(f)
        worst = (0.0, None)
        for key, t in p.items():
            if isinstance(key, tuple):
                found = saved["layers"][key[1]]["weights"].get(key[2])
                name = "layers[%d].%s" % (key[1], key[2])
            else:
                found, name = saved.get(key), key
            want = t.detach().numpy()
            arr = np.asarray(found, dtype=np.float64) if found is not None else None
            if arr is None or arr.shape != want.shape:
                g.ok(False, "%s: saved %s missing or shape %s" % (
                    label, name, None if arr is None else arr.shape))
                continue
            diff = float(np.max(np.abs(arr - want)))
            if diff > worst[0]:
                worst = (diff, name)
        g.ok(worst[0] <= TOL, "%s: saved weights after step %d differ from AdamW's by %.3g (%s)" % (
            label, S, worst[0], worst[1]))
    return g.summary("2 schedules x %d steps" % S)

# --------------------------------------------------------------------------
# 7. Determinism
# --------------------------------------------------------------------------

def check_determinism(ck):
    g = Group(ck, "determinism")
    base = ["train", "--task", "induction", "--layers", "2", "--heads", "4", "--d-model", "32",
            "--ffn", "relu", "--vocab", "64", "--seq-len", "32", "--steps", "4", "--batch", "16",
            "--seed", "5", "--lr", "0.003"]
    runs = []
    for i, env in enumerate((None, None, {"OMP_NUM_THREADS": "1"}, {"OMP_NUM_THREADS": "2"})):
        save = ck.file("det_%d.json" % i)
        r = ck.run(*base, "--save", save, "--json", env=env)
        if not g.ok(r.returncode == 0, "run %d exit %d: %s" % (i, r.returncode, r.stderr.strip())):
            return g.summary()
        out = json.loads(r.stdout)
        with open(save, "rb") as f:
            data = f.read()
        runs.append((out, data, env))
    cmd = "attention-lab " + " ".join(base)

    def losses(o):
        return [(row["loss"], row["grad_norm"]) for row in o["steps"]]

    g.ok(losses(runs[0][0]) == losses(runs[1][0]),
         "`%s` twice: losses differ: %s vs %s" % (cmd, losses(runs[0][0]), losses(runs[1][0])))
    g.ok(runs[0][0]["eval"] == runs[1][0]["eval"], "`%s` twice: eval differs" % cmd)
    a, b = runs[2], runs[3]
    g.ok(losses(a[0]) == losses(b[0]),
         "OMP_NUM_THREADS=1 vs 2: losses differ: %s vs %s" % (losses(a[0]), losses(b[0])))
    g.ok(a[0]["eval"] == b[0]["eval"], "OMP_NUM_THREADS=1 vs 2: eval differs")
    g.ok(a[1] == b[1], "OMP_NUM_THREADS=1 vs 2: saved files differ (%d vs %d bytes)" % (
        len(a[1]), len(b[1])))
    g.ok(runs[0][1] == runs[1][1], "`%s` twice: saved files differ" % cmd)
    return g.summary("4 runs")

# --------------------------------------------------------------------------
# 8. Bad invocations
# --------------------------------------------------------------------------

def check_invalid(ck):
    g = Group(ck, "bad invocations")
    both = ck.write("bad_batches.json", {"batches": [[[0, 2, 3], [0, 3, 2]]]})
    small = ["--layers", "1", "--heads", "2", "--d-model", "8", "--vocab", "12", "--seq-len", "16",
             "--steps", "2", "--batch", "2", "--json"]
    cases = [
        ("unknown task", ["train", "--task", "jump"] + small, ["--task", "jump"]),
        ("--text missing file", ["train", "--task", "text", "--text",
                                 os.path.join(ck.folder, "no_such_text.txt"), "--layers", "1",
                                 "--heads", "2", "--d-model", "8", "--seq-len", "16", "--steps", "2",
                                 "--batch", "2", "--json"], ["no_such_text.txt"]),
        ("tiny.json with --task copy", ["train", "--task", "copy", "--model", TINY, "--vocab", "12",
                                        "--seq-len", "16", "--steps", "2", "--json"], ["vocab"]),
        ("--d-model 10 --heads 4", ["train", "--task", "copy", "--d-model", "10", "--heads", "4",
                                    "--vocab", "12", "--seq-len", "16", "--steps", "2", "--json"],
         ["d_model|--d-model", "heads"]),
        ("both --task and --batches", ["train", "--task", "copy", "--batches", both] + small,
         ["--task", "--batches"]),
        ("--cosine with --warmup >= --steps", ["train", "--task", "copy", "--cosine", "--warmup", "2"]
         + small, ["--warmup", "--steps"]),
        ("--seq-len 8", ["train", "--task", "induction", "--seq-len", "8", "--vocab", "12",
                         "--steps", "2", "--json"], ["--seq-len"]),
        ("--variant gqa --kv-heads 3, 4 heads", ["train", "--task", "copy", "--variant", "gqa",
                                                 "--kv-heads", "3", "--heads", "4", "--d-model",
                                                 "8", "--vocab", "12", "--seq-len", "16",
                                                 "--steps", "2", "--json"], ["kv_heads|--kv-heads"]),
        ("--variant bogus", ["train", "--task", "copy", "--variant", "bogus"] + small,
         ["--variant", "bogus", "mha", "gqa", "mqa", "mla"]),
        ("--positions bogus", ["train", "--task", "copy", "--positions", "bogus"] + small,
         ["--positions", "bogus", "none", "sinusoidal", "learned", "rope"]),
        ("rope on head_dim 3", ["train", "--task", "copy", "--positions", "rope", "--heads", "4",
                                "--d-model", "12", "--layers", "1", "--vocab", "12",
                                "--seq-len", "16", "--steps", "2", "--json"],
         ["head_dim", "even"]),
    ]
    messages = []
    for what, args, phrases in cases:
        r = ck.run(*args)
        err = r.stderr.strip()
        messages.append((what, r.returncode, err))
        if not g.ok(r.returncode == 2, "%s: exit %d, expected 2 (stderr %r, stdout %r)" % (
                what, r.returncode, err, r.stdout[:100])):
            continue
        if not g.ok(err and "\n" not in err, "%s: stderr is not one line: %r" % (what, err)):
            continue
        for ph in phrases:
            alts = ph.split("|")
            g.ok(any(a in err for a in alts), "%s: stderr %r does not mention %s" % (
                what, err, " or ".join(repr(a) for a in alts)))
    ok = g.summary("%d invocations" % len(cases))
    for what, rc, err in messages:
        print("    %-36s exit %d: %s" % (what, rc, err))
    return ok

# --------------------------------------------------------------------------

TASK_RUNS = [
    # label, options
    ("induction_v12", dict(task="induction", layers=2, heads=2, **{"d-model": 16}, vocab=12,
                           **{"seq-len": 16}, steps=3, batch=4)),
    ("induction_v64_post_gelu", dict(task="induction", layers=2, heads=2, **{"d-model": 16},
                                     norm="post", ffn="gelu", vocab=64, **{"seq-len": 16},
                                     steps=3, batch=4, seed=3)),
    ("induction_v70_n20", dict(task="induction", layers=1, heads=2, **{"d-model": 16}, vocab=70,
                               **{"seq-len": 20}, steps=2, batch=4, seed=9, lr=0.01)),
    # The tightest vocabularies where "every symbol distinct" still can hold (V - 2 = N - 4).
    ("induction_v14_tight", dict(task="induction", layers=1, heads=2, **{"d-model": 8}, vocab=14,
                                 **{"seq-len": 16}, steps=1, batch=2, seed=30)),
    ("copy_v28_n30_tight", dict(task="copy", layers=1, heads=2, **{"d-model": 8}, vocab=28,
                                **{"seq-len": 30}, steps=1, batch=2, seed=58)),
    ("previous_token_swiglu", dict(task="previous_token", layers=2, heads=2, **{"d-model": 16},
                                   positions="none", norm="none", ffn="swiglu", **{"d-ff": 24},
                                   vocab=12, **{"seq-len": 16}, steps=3, batch=4)),
    ("previous_token_v20", dict(task="previous_token", layers=2, heads=2, **{"d-model": 16},
                                vocab=20, **{"seq-len": 16}, steps=3, batch=4, seed=2)),
    ("copy_v12", dict(task="copy", layers=2, heads=2, **{"d-model": 16}, vocab=12,
                      **{"seq-len": 16}, steps=3, batch=4)),
    ("copy_n13_relu", dict(task="copy", layers=2, heads=2, **{"d-model": 16}, ffn="relu",
                           vocab=20, **{"seq-len": 13}, steps=3, batch=4, seed=4)),
    ("reverse_v12", dict(task="reverse", layers=2, heads=2, **{"d-model": 16}, vocab=12,
                         **{"seq-len": 16}, steps=3, batch=4)),
    ("reverse_post_none", dict(task="reverse", layers=1, heads=4, **{"d-model": 16}, norm="post",
                               vocab=24, **{"seq-len": 17}, steps=2, batch=4, seed=6)),
    ("sort_v12", dict(task="sort", layers=2, heads=2, **{"d-model": 16}, vocab=12,
                      **{"seq-len": 16}, steps=3, batch=4)),
    ("sort_gelu_nopos", dict(task="sort", layers=2, heads=2, **{"d-model": 16}, positions="none",
                             ffn="gelu", vocab=30, **{"seq-len": 18}, steps=2, batch=4, seed=8)),
    ("text_sonnets", dict(task="text", layers=2, heads=2, **{"d-model": 16}, **{"seq-len": 16},
                          steps=3, batch=4)),
    ("text_custom_swiglu", dict(task="text", layers=1, heads=2, **{"d-model": 16},
                                positions="none", norm="none", ffn="swiglu", **{"seq-len": 16},
                                steps=2, batch=4, seed=11)),
    # Every variant and positions kind the shape options make (defaults and given values).
    ("copy_gqa_rope", dict(task="copy", layers=2, heads=4, **{"d-model": 16}, variant="gqa",
                           positions="rope", vocab=20, **{"seq-len": 16}, steps=3, batch=4,
                           seed=12)),
    ("induction_gqa_kv4_sinusoidal", dict(task="induction", layers=2, heads=4, **{"d-model": 16},
                                          variant="gqa", **{"kv-heads": 4},
                                          positions="sinusoidal", ffn="gelu", vocab=32,
                                          **{"seq-len": 16}, steps=3, batch=4, seed=13)),
    ("previous_token_gqa_h2", dict(task="previous_token", layers=1, heads=2, **{"d-model": 16},
                                   variant="gqa", norm="post", vocab=20, **{"seq-len": 16},
                                   steps=3, batch=4, seed=14)),
    ("reverse_mqa_none", dict(task="reverse", layers=2, heads=4, **{"d-model": 16},
                              variant="mqa", positions="none", ffn="relu", vocab=24,
                              **{"seq-len": 17}, steps=3, batch=4, seed=15)),
    ("sort_mla_learned", dict(task="sort", layers=2, heads=2, **{"d-model": 16}, variant="mla",
                              vocab=30, **{"seq-len": 18}, steps=3, batch=4, seed=16)),
    ("copy_mla_rope_hd8", dict(task="copy", layers=1, heads=2, **{"d-model": 16}, variant="mla",
                               **{"latent-dim": 5}, positions="rope", norm="none",
                               ffn="swiglu", **{"d-ff": 12}, vocab=20, **{"seq-len": 16},
                               steps=3, batch=4, seed=17)),
    ("induction_mla_rope_hd3", dict(task="induction", layers=2, heads=4, **{"d-model": 12},
                                    variant="mla", **{"latent-dim": 4}, positions="rope",
                                    vocab=32, **{"seq-len": 16}, steps=3, batch=4, seed=18)),
    ("text_mha_rope", dict(task="text", layers=2, heads=4, **{"d-model": 16}, positions="rope",
                           **{"seq-len": 16}, steps=3, batch=4, seed=19)),
    ("sort_mla_sinusoidal", dict(task="sort", layers=1, heads=4, **{"d-model": 16},
                                 variant="mla", positions="sinusoidal", vocab=30,
                                 **{"seq-len": 18}, steps=2, batch=4, seed=20)),
]


def main():
    args = command_line(__doc__, keep="keep every file written in this folder").parse_args()
    binary = os.path.abspath(args.binary)
    probe(binary, "train", "--help")  # exit 2 unless it starts
    with work_folder(args.keep, "train_tasks_crosscheck_") as folder:
        ck = Checker(binary, folder)
        t0 = time.time()
        try:
            custom = write_custom_text(ck)
            for label, spec in TASK_RUNS:
                spec = dict(spec)
                if label == "text_custom_swiglu":
                    spec["text"] = custom
                run_task(ck, spec, label)
            check_schedule(ck)
            check_determinism(ck)
            check_invalid(ck)
        except (OSError, subprocess.SubprocessError) as e:
            return cannot_run(binary, e)
    for n in ck.notes:
        print("note: " + n)
    print("train tasks crosscheck: %s; %d binary runs, %d numbers compared, %.1f s" % (
        "all agree" if not ck.failures else "%d MISMATCHES" % len(ck.failures),
        ck.runs, ck.values, time.time() - t0))
    if ck.failures:
        print("first mismatch: " + ck.failures[0])
    return 0 if not ck.failures else 1


if __name__ == "__main__":
    sys.exit(main())
