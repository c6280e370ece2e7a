#!/usr/bin/python3
"""Independent PyTorch cross-check of training (`attention-lab train`).

A second implementation, written from the specification only (never from the
C++ sources), of the training command: a Transformer of mha layers with W_O
(norm none, pre or post; ffn none, relu, gelu or swiglu; positions none or
learned) in double precision, row vectors, autograd through the forward pass

  x = embedding[ids] (+ W_P[0..N-1] with learned positions)
  per layer:
    Attn(a): q, k, v = a W_Q, a W_K, a W_V;  head h: softmax(q_h k_h^T
             [/ sqrt(d)], causal: -inf above the diagonal) v_h;
             Attn(a) = concat(heads) W_O
    FFN(a):  relu / gelu: act(a W_1 + b_1) W_2 + b_2 (gelu the exact one,
             0.5 v (1 + erf(v / sqrt 2)));  swiglu: (silu(a W_1) * (a W_3)) W_2,
             silu(v) = v sigmoid(v)
    pre:   x = x + Attn(LN1(x));  x = x + FFN(LN2(x))
    post:  x = LN1(x + Attn(x));  x = LN2(x + FFN(x))
    none:  x = x + Attn(x);       x = x + FFN(x)
    (ffn none: no FFN sublayer and no LN2)
  pre: x = LN_final(x) after the last layer;  logits = x unembedding
  LN(x) = gain (x - mean) / sqrt(var + 1e-5) + bias   (biased variance)

next-token cross-entropy (torch.nn.functional.cross_entropy, mean over every
position that has a target, all sequences of the batch flattened), the
gradient's global 2-norm before clipping (torch.nn.utils.clip_grad_norm_ with
--clip), and torch.optim.AdamW(foreach=False) over every weight (all decayed,
LN gains and biases and FFN biases included).  Batch (s - 1) % count is used
at step s (from 1).

Model files: "norm" none / pre / post, "ffn" {"kind": "none"} or {"kind":
relu | gelu | swiglu, "d_ff": F}; per layer ln1_gain / ln1_bias (pre, post),
ln2_gain / ln2_bias (pre, post with an FFN), W_1 (d_model x F), W_2 (F x
d_model), b_1 / b_2 (relu, gelu) or W_3 (swiglu); final_gain / final_bias
with pre only.  Every model file gives every weight and must load with `run`.

24 seeded random models (fixed seed), 20 steps each: models i and i + 12
share one of the 12 combinations of norm none / pre / post and ffn none /
relu / gelu / swiglu and differ in positions (none / learned), so every
combination is trained with both.  They cover d_model 4-8, d_ff 3-8, 1-3
layers (1-2 with an FFN), 1-3 heads, head_dim 2-5, vocabularies of 3-9 tokens,
masks causal / none, scale on / off, 1-3 batches of 1-4 sequences of 2 ..
max_positions tokens, learning rates 1e-3 .. 3e-2, weight decay 0.01 and
--clip 0.5 (each met by every norm and every ffn kind; clipping must clip on
some steps and not on others) and non-default --beta1 / --beta2 / --eps.
For each model `train --json --save OUT.json` is compared step by step (loss
before the step, grad_norm) and every weight of OUT.json with PyTorch's
parameters after the last step (OUT.json must keep the model's vocab, sizes,
positions, norm and ffn and hold no weight the model has not); OUT.json must
also load with `run` and give the logits of the trained reference.  Finally a
few bad invocations (a token id equal to the vocabulary size, a sequence of
one token, no --steps) must each exit 2 with one line on stderr naming the
problem.  (Every other kind of model, rope included, trains:
train_variants_crosscheck.py checks them.)

Run:  /usr/bin/python3 train_crosscheck.py --binary build/app/attention-lab
      [--keep DIR]  write every model and batches file to DIR

Exit status: 0 all agree, 1 any mismatch (or a coverage gap), 2 the binary
cannot be run.  Tolerance: |expected - found| <= 1e-9 (absolute).
"""

import json
import math
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import (Binary, cannot_run, command_line, normal, probe,  # noqa: E402
                       sublayer_weights, work_folder)
from reference_torch import forward, params_of, train  # noqa: E402

SEED = 20261
TOL = 1e-9
STEPS = 20
N_MODELS = 24
NORMS = ("none", "pre", "post")
FFNS = ("none", "relu", "gelu", "swiglu")
VOCAB_NAMES = ("<bos>", "a", "b", "c", "the", "cat", "sat", "on", "mat")
LRS = (1e-3, 3e-3, 1e-2, 3e-2)


# --------------------------------------------------------------------------
# Random models and batches
# --------------------------------------------------------------------------

def make_case(idx, rng):
    """Model number idx: its configuration, every weight, its batches and the
    optimiser options."""
    # Models idx and idx + 12 share a norm / ffn combination (all 12 of them
    # among 0 .. 11) and differ in positions.
    norm, ffn = NORMS[idx % 3], FFNS[(idx // 3) % 4]
    D = 4 + (idx * 3) % 5                 # 4 .. 8
    V = 3 + (idx * 5) % 7                 # 3 .. 9
    P = 3 + (idx * 2) % 6                 # 3 .. 8
    if ffn == "none":                     # 1 .. 3 layers
        n_layers = 1 + (idx + idx // 12) % 3
    else:                                 # 1 .. 2 layers
        n_layers = 1 + (idx + idx // 3 + idx // 12) % 2
    c = {"idx": idx, "norm": norm, "ffn": ffn,
         "positions": ("none", "learned")[(idx // 2 + idx // 12) % 2],
         "d_model": D, "vocab_size": V, "max_positions": P, "layers": []}
    if ffn != "none":
        c["d_ff"] = 3 + (idx * 5) % 6     # 3 .. 8
    for li in range(n_layers):
        H = 1 + (idx + li) % 3
        d = 2 + (2 * idx + li) % 4        # 2 .. 5
        L = {"heads": H, "head_dim": d,
             "mask": ("causal", "none")[(idx // 3 + li) % 2],
             "scale": (idx + 2 * li) % 3 != 2,
             "W": {"W_Q": normal(rng, (D, H * d), 1 / math.sqrt(D)),
                   "W_K": normal(rng, (D, H * d), 1 / math.sqrt(D)),
                   "W_V": normal(rng, (D, H * d), 1 / math.sqrt(D)),
                   "W_O": normal(rng, (H * d, D), 1 / math.sqrt(H * d))}}
        L["W"].update(sublayer_weights(rng, D, norm, ffn, c.get("d_ff", 0)))
        c["layers"].append(L)
    c["embedding"] = normal(rng, (V, D))
    if c["positions"] == "learned":
        c["W_P"] = normal(rng, (P, D), 0.5)
    if c["norm"] == "pre":
        c["final_gain"] = 1.0 + normal(rng, D, 0.2)
        c["final_bias"] = normal(rng, D, 0.2)
    c["unembedding"] = normal(rng, (D, V), 1 / math.sqrt(D))

    batches = []
    for b in range(1 + idx % 3):
        seqs = []
        for s in range(1 + (idx + b) % 4):
            if s == 0 and b == 0:
                n = P                      # the longest sequence allowed
            elif s == 1:
                n = 2                      # the shortest
            else:
                n = int(rng.integers(2, P + 1))
            seqs.append([int(t) for t in rng.integers(0, V, size=n)])
        batches.append(seqs)
    c["batches"] = batches

    opt = {"lr": LRS[idx % 4], "weight_decay": 0.0, "clip": None,
           "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    flags = ["--lr", repr(opt["lr"])]
    # (idx + idx // 3) % 3 so that decay and clipping meet every norm.
    if (idx + idx // 3) % 3 == 1 or idx in (11, 23):
        opt["weight_decay"] = 0.01
        flags += ["--weight-decay", "0.01"]
    if (idx + idx // 3) % 3 == 2 or idx in (3, 11, 16):
        opt["clip"] = 0.5
        flags += ["--clip", "0.5"]
    if idx % 4 == 3:
        opt.update(beta1=0.8, beta2=0.99, eps=1e-6)
        flags += ["--beta1", "0.8", "--beta2", "0.99", "--eps", "1e-06"]
    c["opt"], c["flags"] = opt, flags
    return c


def ffn_json(c):
    if c["ffn"] == "none":
        return {"kind": "none"}
    return {"kind": c["ffn"], "d_ff": c["d_ff"]}


def model_json(c, weights=None):
    """The model file of case c (weights: numpy arrays overriding c's)."""
    w = weights or {}

    def get(key, default):
        return np.asarray(w.get(key, default)).tolist()

    m = {"name": "train_crosscheck_%d" % c["idx"],
         "vocab": list(VOCAB_NAMES[:c["vocab_size"]]),
         "d_model": c["d_model"], "max_positions": c["max_positions"],
         "positions": c["positions"], "norm": c["norm"], "ffn": ffn_json(c),
         "layers": []}
    for li, L in enumerate(c["layers"]):
        m["layers"].append({
            "attention": {"variant": "mha", "heads": L["heads"], "head_dim": L["head_dim"],
                          "mask": L["mask"], "scale": L["scale"]},
            "weights": {k: get(("layers", li, k), v) for k, v in L["W"].items()}})
    m["embedding"] = get("embedding", c["embedding"])
    if "W_P" in c:
        m["W_P"] = get("W_P", c["W_P"])
    if c["norm"] == "pre":
        m["final_gain"] = get("final_gain", c["final_gain"])
        m["final_bias"] = get("final_bias", c["final_bias"])
    m["unembedding"] = get("unembedding", c["unembedding"])
    m["seed"] = 1
    return m


# --------------------------------------------------------------------------
# The PyTorch reference
# --------------------------------------------------------------------------

def reference_train(c, steps):
    """[(loss, grad_norm, clipped)] per step and the trained parameters."""
    model = model_json(c)
    p = params_of(model)
    return train(model, p, c["batches"], c["opt"], steps), p


# --------------------------------------------------------------------------
# Running the binary and comparing
# --------------------------------------------------------------------------

class Checker(Binary):
    """The binary, and the counts of values compared and models passed."""

    def __init__(self, binary, folder):
        super().__init__(binary, folder)
        self.passed = self.failed = 0
        self.values = 0

    def fail(self, what):
        print("MISMATCH " + what)
        self.failed += 1

    def close(self, where, expected, found):
        """True if found is a number within TOL of expected (else reports)."""
        self.values += 1
        if not isinstance(found, (int, float)) or isinstance(found, bool) \
                or not abs(expected - found) <= TOL:
            self.fail("%s: expected %.17g, found %r (difference %s)" % (
                where, expected, found,
                "%.3g" % abs(expected - found) if isinstance(found, (int, float)) else "-"))
            return False
        return True


def compare_array(ck, where, expected, found):
    expected = np.asarray(expected, dtype=np.float64)
    try:
        arr = np.asarray(found, dtype=np.float64)
    except (TypeError, ValueError):
        ck.fail("%s: not a numeric array: %r" % (where, found))
        return False
    if arr.shape != expected.shape:
        ck.fail("%s: shape %s, expected %s" % (where, arr.shape, expected.shape))
        return False
    ok = True
    for index in np.ndindex(expected.shape):
        ck.values += 1
        e, f = float(expected[index]), float(arr[index])
        if not abs(e - f) <= TOL:
            ck.fail("%s%s: expected %.17g, found %.17g (difference %.3g)" % (
                where, list(index), e, f, abs(e - f)))
            ok = False
            break                 # one report per array is enough
    return ok


def check_case(ck, c, seen):
    name = "model %d" % c["idx"]
    mpath = ck.write("model_%d.json" % c["idx"], model_json(c))
    bpath = ck.write("batches_%d.json" % c["idx"], {"batches": c["batches"]})
    opath = os.path.join(ck.folder, "trained_%d.json" % c["idx"])
    before = ck.failed

    # The file must load as a model as it is (so every key is one the program knows).
    r = ck.run("run", mpath, "--tokens", " ".join(VOCAB_NAMES[:2]), "--json")
    if r.returncode != 0:
        ck.fail("%s: `run` rejects the model file (exit %d): %s" % (
            name, r.returncode, r.stderr.strip()))
        return

    ref, params = reference_train(c, STEPS)
    r = ck.run("train", "--model", mpath, "--batches", bpath, "--steps", str(STEPS),
               "--save", opath, "--json", *c["flags"])
    if r.returncode != 0:
        ck.fail("%s: train exit %d: %s" % (name, r.returncode, r.stderr.strip()))
        return
    try:
        out = json.loads(r.stdout)
    except ValueError:
        ck.fail("%s: train --json printed no JSON: %r" % (name, r.stdout[:200]))
        return
    steps = out.get("steps") if isinstance(out, dict) else None
    if not isinstance(steps, list) or len(steps) != STEPS:
        ck.fail("%s: expected %d steps, found %r" % (name, STEPS, steps if steps is None else len(steps)))
        return
    if not isinstance(out.get("seconds"), (int, float)) or out["seconds"] < 0:
        ck.fail("%s: seconds is %r" % (name, out.get("seconds")))
    for s, (row, (loss, gn, clipped)) in enumerate(zip(steps, ref), start=1):
        if not isinstance(row, dict) or row.get("step") != s:
            ck.fail("%s: step %d: the row is %r" % (name, s, row))
            continue
        ck.close("%s step %d loss" % (name, s), loss, row.get("loss"))
        ck.close("%s step %d grad_norm" % (name, s), gn, row.get("grad_norm"))
        if c["opt"]["clip"] is not None:
            seen.add("clipped" if clipped else "unclipped under --clip")

    # Every trained weight of OUT.json.
    try:
        with open(opath) as f:
            saved = json.load(f)
    except (OSError, ValueError) as e:
        ck.fail("%s: cannot read the saved model %s: %s" % (name, opath, e))
        return
    trained = {k: v.detach().numpy() for k, v in params.items()}
    for key, value in trained.items():
        if isinstance(key, tuple):
            _, li, wname = key
            try:
                found = saved["layers"][li]["weights"][wname]
            except (KeyError, IndexError, TypeError):
                ck.fail("%s: saved file has no layers[%d].weights.%s" % (name, li, wname))
                continue
            where = "%s saved layers[%d].weights.%s" % (name, li, wname)
        else:
            if key not in saved:
                ck.fail("%s: saved file has no %s" % (name, key))
                continue
            found, where = saved[key], "%s saved %s" % (name, key)
        compare_array(ck, where, value, found)
    want = model_json(c)
    for key in ("vocab", "d_model", "max_positions", "positions", "norm", "ffn"):
        got = saved.get(key, {"kind": "none"} if key == "ffn" else None)  # ffn defaults to none
        if got != want[key]:
            ck.fail("%s: saved %s is %r, expected %r" % (name, key, got, want[key]))
    # No weight beyond the model's (no final_gain without pre, no ln2 without an FFN, ...).
    extra = sorted({"W_P", "final_gain", "final_bias"} & set(saved) - set(want))
    for li, L in enumerate(want["layers"]):
        try:
            extra += ["layers[%d].weights.%s" % (li, k)
                      for k in sorted(set(saved["layers"][li]["weights"]) - set(L["weights"]))]
        except (KeyError, IndexError, TypeError):
            pass
    if extra:
        ck.fail("%s: saved file has weights the model has not: %s" % (name, ", ".join(extra)))
    for li, L in enumerate(want["layers"]):
        try:
            att = saved["layers"][li]["attention"]
        except (KeyError, IndexError, TypeError):
            continue
        for key, value in L["attention"].items():
            if att.get(key, value) != value:
                ck.fail("%s: saved layers[%d].attention.%s is %r, expected %r" % (
                    name, li, key, att.get(key), value))

    # The saved file must run, with the trained reference's logits.
    seq = c["batches"][0][0]
    r = ck.run("run", opath, "--tokens", " ".join(VOCAB_NAMES[t] for t in seq), "--json")
    if r.returncode != 0:
        ck.fail("%s: `run` rejects the saved model (exit %d): %s" % (
            name, r.returncode, r.stderr.strip()))
    else:
        with torch.no_grad():
            logits = forward(model_json(c), params, seq).numpy()
        compare_array(ck, "%s run(saved) logits" % name, logits, json.loads(r.stdout).get("logits"))

    if ck.failed == before:
        ck.passed += 1
    seen.update({"norm " + c["norm"], "positions " + c["positions"],
                 "ffn " + c["ffn"], "norm %s ffn %s" % (c["norm"], c["ffn"]),
                 "norm %s %s" % (c["norm"], c["positions"]),
                 "ffn %s %s" % (c["ffn"], c["positions"]),
                 "layers %d" % len(c["layers"]), "batches %d" % len(c["batches"]),
                 "lr %g" % c["opt"]["lr"]})
    if c["ffn"] != "none":
        seen.update({"d_ff %d" % c["d_ff"], "ffn %s layers %d" % (c["ffn"], len(c["layers"]))})
    for L in c["layers"]:
        seen.update({"heads %d" % L["heads"], "head_dim %d" % L["head_dim"],
                     "mask " + L["mask"], "scale %s" % L["scale"]})
    for b in c["batches"]:
        seen.add("sequences %d" % len(b))
    if c["opt"]["weight_decay"]:
        seen.update({"weight decay", "weight decay norm " + c["norm"],
                     "weight decay ffn " + c["ffn"]})
    if c["opt"]["clip"] is not None:
        seen.update({"clip norm " + c["norm"], "clip ffn " + c["ffn"]})
    if c["opt"]["beta1"] != 0.9:
        seen.add("betas eps")


REQUIRED = ({"positions none", "positions learned",
             "mask causal", "mask none", "scale True", "scale False", "weight decay",
             "clipped", "unclipped under --clip", "betas eps"}
            | {"norm " + n for n in NORMS} | {"ffn " + f for f in FFNS}
            | {"norm %s ffn %s" % (n, f) for n in NORMS for f in FFNS}
            | {"norm %s %s" % (n, q) for n in NORMS for q in ("none", "learned")}
            | {"ffn %s %s" % (f, q) for f in FFNS for q in ("none", "learned")}
            | {"ffn %s layers %d" % (f, i) for f in FFNS[1:] for i in (1, 2)}
            | {"d_ff %d" % i for i in range(3, 9)}
            | {"weight decay norm " + n for n in NORMS} | {"clip norm " + n for n in NORMS}
            | {"weight decay ffn " + f for f in FFNS} | {"clip ffn " + f for f in FFNS}
            | {"layers %d" % i for i in (1, 2, 3)} | {"heads %d" % i for i in (1, 2, 3)}
            | {"head_dim %d" % i for i in (2, 3, 4, 5)} | {"batches %d" % i for i in (1, 2, 3)}
            | {"sequences %d" % i for i in (1, 2, 3, 4)} | {"lr %g" % x for x in LRS})


def check_invalid(ck, c):
    """Bad invocations: exit 2 with one line on stderr containing a phrase."""
    mpath = ck.write("bad_model.json", model_json(c))
    good = ck.write("bad_good_batches.json", {"batches": [[[0, 1], [1, 0, 1]]]})
    V = c["vocab_size"]
    assert c["max_positions"] >= 4
    b_vocab = ck.write("bad_vocab.json", {"batches": [[[0, 1], [1, 0, 1, V], [0, 1]]]})
    b_short = ck.write("bad_short.json", {"batches": [[[0, 1]], [[1, 0], [0, 1, 0], [1]]]})
    cases = [
        ("token id equal to the vocabulary size",
         ["train", "--model", mpath, "--batches", b_vocab, "--steps", "2", "--json"],
         "batches[0][1][3]"),
        ("sequence of one token",
         ["train", "--model", mpath, "--batches", b_short, "--steps", "2", "--json"],
         "batches[1][2]"),
        ("missing --steps",
         ["train", "--model", mpath, "--batches", good, "--json"], "--steps"),
    ]
    passed = 0
    for what, args, phrase in cases:
        r = ck.run(*args)
        err = r.stderr.strip()
        if r.returncode != 2:
            ck.fail("invalid (%s): exit %d, expected 2 (stderr %r)" % (what, r.returncode, err))
        elif not err or "\n" in err:
            ck.fail("invalid (%s): stderr is not one line: %r" % (what, err))
        elif phrase not in err:
            ck.fail("invalid (%s): stderr %r does not mention %r" % (what, err, phrase))
        else:
            passed += 1
    return passed, len(cases)


def main():
    args = command_line(__doc__, keep="write the model and batches files here").parse_args()
    probe(args.binary)  # exit 2 unless it starts

    rng = np.random.default_rng(SEED)
    cases = [make_case(i, rng) for i in range(N_MODELS)]
    with work_folder(args.keep, "train_crosscheck_") as folder:
        ck = Checker(args.binary, folder)
        seen = set()
        try:
            for c in cases:
                check_case(ck, c, seen)
            bad_ok, bad_n = check_invalid(ck, next(c for c in cases if c["max_positions"] >= 4))
        except (OSError, subprocess.SubprocessError) as e:
            return cannot_run(args.binary, e)
    gaps = sorted(REQUIRED - seen)
    print("coverage: " + ("complete" if not gaps else "MISSING " + ", ".join(gaps)))
    print("%d models x %d steps: %d passed, %d failed; %d values compared; "
          "%d/%d bad invocations rejected; %d binary runs" % (
              len(cases), STEPS, ck.passed, len(cases) - ck.passed, ck.values,
              bad_ok, bad_n, ck.runs))
    return 0 if ck.failed == 0 and not gaps else 1


if __name__ == "__main__":
    sys.exit(main())
