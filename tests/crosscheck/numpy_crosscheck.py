#!/usr/bin/python3
"""Independent NumPy cross-check of the Attention Lab engine.

Why this exists: the C++ engine's own unit tests are written by the same hands
as the engine, so a misreading of the maths could show up in both.  This script
is a second, independent implementation of the attention pipeline (written from
the specification only, never from the C++ sources).  It generates random
scenarios from a fixed seed, runs ``attention-lab trace FILE --json`` on each,
recomputes every intermediate in float64 NumPy and compares them field by field.

Run:  /usr/bin/python3 numpy_crosscheck.py --binary build/app/attention-lab

Exit status: 0 all configurations agree, 1 at least one mismatch,
2 the binary cannot be run at all.

Numerical notes: ordinary configurations use values with three decimals in
[-2, 2] (or [0, 2] for the linear kernel, so that the normaliser Z is not close
to 0).  The large-magnitude configurations use multiples of 1/4, so Q, K, V and
the scores are exact in float64 whatever the summation order; with the scale
off (or head_dim 4, where sqrt(d) = 2) the softmax inputs are then exact too,
and a 1e-9 tolerance is meaningful even though the scores exceed 1e5.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

SEED = 2026
N_RANDOM = 28
TOL = 1e-9
MASKS = ("none", "causal", "sliding_window", "custom")
MATRIX_FIELDS = ("q", "k", "v", "scores", "scaled", "mask", "masked", "weights", "output")
ROW_FIELDS = ("row_max", "row_sum", "entropy")


class Mismatch(Exception):
    """A field of the binary's output disagrees with the reference."""


# --------------------------------------------------------------------------
# Scenario generation
# --------------------------------------------------------------------------

def values(rng, shape, low, high, step=None):
    """Random matrix; rounded to 3 decimals, or to multiples of `step`."""
    a = rng.uniform(low, high, size=shape)
    if step is None:
        return np.round(a, 3)
    return np.round(a / step) * step


def random_config(i, rng):
    """Configuration number i.  Sizes and modes cycle with co-prime periods so
    every required value is covered; the rest is drawn from rng."""
    cfg = {
        "heads": 1 + i % 4,
        "head_dim": 1 + i % 5,
        "d_model": 1 + i % 6,
        "n_q": 1 + i % 7,
        "mask": MASKS[i % 4],
        "kernel": "linear" if i % 3 == 2 else "softmax",
        "scale": (i // 3) % 2 == 0,
        "cross": i % 5 in (1, 3),
        "wo": (i // 2) % 2 == 0,
        "large": i in (9, 19),
        "omit": {5: ("W_Q", "W_K", "W_V", "W_O"), 11: ("W_Q",),
                 17: ("W_K", "W_V"), 22: ("W_O",)}.get(i, ()),
    }
    if cfg["large"]:
        # Exact softmax inputs: no scaling at all, or sqrt(d) = 2.
        if cfg["scale"]:
            cfg["head_dim"] = 4
    if "W_O" in cfg["omit"]:
        cfg["wo"] = True
    n_q = cfg["n_q"]
    n_kv = n_q
    if cfg["cross"]:
        while n_kv == n_q:
            n_kv = int(rng.integers(1, 8))
    cfg["n_kv"] = n_kv
    cfg["window"] = int(rng.integers(1, n_kv + 2))
    if cfg["mask"] == "custom":
        m = rng.integers(0, 2, size=(n_q, n_kv))
        if i % 8 == 3 or rng.random() < 0.3:     # i = 11 (linear) and 19 (softmax)
            m[int(rng.integers(0, n_q))] = 0     # an all-masked row
        cfg["custom_mask"] = m
    fill_values(cfg, rng)
    return cfg


def fill_values(cfg, rng):
    """Embeddings and weights for cfg (positive for the linear kernel)."""
    dm, hd = cfg["d_model"], cfg["heads"] * cfg["head_dim"]
    if cfg["large"]:
        x_rng, w_rng, step = (-30.0, 30.0), (-2.0, 2.0), 0.25
    elif cfg["kernel"] == "linear":
        x_rng, w_rng, step = (0.0, 2.0), (0.0, 2.0), None
    else:
        x_rng, w_rng, step = (-2.0, 2.0), (-2.0, 2.0), None
    cfg["x"] = values(rng, (cfg["n_q"], dm), *x_rng, step)
    cfg["x_kv"] = values(rng, (cfg["n_kv"], dm), *x_rng, step) if cfg["cross"] else cfg["x"]
    cfg["W"] = {name: values(rng, shape, *w_rng, step) for name, shape in
                (("W_Q", (dm, hd)), ("W_K", (dm, hd)), ("W_V", (dm, hd)), ("W_O", (hd, dm)))}
    if not cfg["wo"]:
        del cfg["W"]["W_O"]


def edge_configs():
    """Hand-made configurations for branches random data rarely reaches.
    Values are dyadic, so every quantity below is exact."""
    base = {"heads": 1, "head_dim": 1, "d_model": 1, "mask": "none", "scale": True,
            "kernel": "linear", "cross": True, "wo": False, "large": False, "omit": (),
            "window": 1}
    # Linear kernel, scores [3, -1]: Z = 2, weights 1.5 and -0.5.
    neg = dict(base, n_q=1, n_kv=2, x=np.array([[1.0]]), x_kv=np.array([[3.0], [-1.0]]),
               W={"W_Q": np.array([[1.0]]), "W_K": np.array([[1.0]]), "W_V": np.array([[2.0]])})
    # Linear kernel, scores [s, -s]: Z == 0 exactly -> zero_sum for the first query;
    # the second sees only one key -> ok.
    zero = dict(base, n_q=2, n_kv=2, mask="custom", heads=2, head_dim=1, wo=True,
                custom_mask=np.array([[1, 1], [0, 1]]),
                x=np.array([[0.5], [1.5]]), x_kv=np.array([[2.0], [-2.0]]),
                W={"W_Q": np.array([[1.0, 1.0]]), "W_K": np.array([[1.0, -0.5]]),
                   "W_V": np.array([[1.0, 0.25]]), "W_O": np.array([[1.0], [2.0]])})
    # Linear kernel, sliding window with fewer keys than queries: queries past the
    # last key see nothing -> all_masked.
    slide = dict(base, n_q=4, n_kv=2, mask="sliding_window", window=1,
                 x=np.array([[1.0], [0.5], [0.25], [2.0]]), x_kv=np.array([[1.0], [0.75]]),
                 W={"W_Q": np.array([[1.0]]), "W_K": np.array([[2.0]]), "W_V": np.array([[1.0]])})
    return [neg, zero, slide]


def scenario_json(cfg, idx):
    """The scenario file contents for cfg."""
    n_q, n_kv = cfg["n_q"], cfg["n_kv"]
    att = {"variant": "mha", "heads": cfg["heads"], "head_dim": cfg["head_dim"],
           "mask": cfg["mask"], "scale": cfg["scale"], "kernel": cfg["kernel"]}
    if cfg["mask"] == "sliding_window":
        att["window"] = cfg["window"]
    if cfg["mask"] == "custom":
        att["custom_mask"] = cfg["custom_mask"].astype(int).tolist()
    if cfg["wo"] and "W_O" in cfg["omit"]:
        att["output_projection"] = True
    elif not cfg["wo"] and idx % 2 == 0:
        att["output_projection"] = False
    weights = {k: v.tolist() for k, v in cfg["W"].items() if k not in cfg["omit"]}
    doc = {"name": "crosscheck %d" % idx, "description": "random NumPy cross-check",
           "tokens": ["q%d" % i for i in range(n_q)], "embeddings": cfg["x"].tolist(),
           "attention": att, "weights": weights, "seed": 7 + idx}
    if cfg["cross"]:
        doc["context"] = {"tokens": ["c%d" % j for j in range(n_kv)],
                          "embeddings": cfg["x_kv"].tolist()}
    return doc


# --------------------------------------------------------------------------
# Reference implementation
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
    """Weights, row_max, row_sum, status for the linear kernel kappa(x) = x."""
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
            w = masked[r] / z if z != 0 else None
        if w is None or not np.isfinite(w).all() or not np.isfinite(w @ v).all():
            status.append("zero_sum")
            continue
        weights[r] = w
        status.append("ok")
    return weights, row_max, row_sum, status


def entropy_rows(weights, status):
    out = np.zeros(weights.shape[0])
    for r, st in enumerate(status):
        if st == "ok":
            w = weights[r][weights[r] > 0]
            out[r] = 0.0 - (w * np.log(w)).sum()
    return out


def reference(cfg, W):
    """Every intermediate, as the spec defines it, from inputs and weights W."""
    d, H = cfg["head_dim"], cfg["heads"]
    X, Xkv = cfg["x"], cfg["x_kv"]
    Q, K, V = X @ W["W_Q"], Xkv @ W["W_K"], Xkv @ W["W_V"]
    mask = mask_matrix(cfg)
    heads = []
    for h in range(H):
        cols = slice(h * d, (h + 1) * d)
        q, k, v = Q[:, cols], K[:, cols], V[:, cols]
        scores = q @ k.T
        scaled = scores / math.sqrt(d) if cfg["scale"] else scores.copy()
        if cfg["kernel"] == "softmax":
            masked = np.where(mask == 1, scaled, -np.inf)
            weights, row_max, row_sum, status = softmax_rows(masked, mask)
        else:
            masked = np.where(mask == 1, scaled, 0.0)
            weights, row_max, row_sum, status = linear_rows(masked, mask, v)
        head = {"head": h, "kv_head": h, "q": q, "k": k, "v": v, "scores": scores,
                "scaled": scaled, "mask": mask, "masked": masked, "weights": weights,
                "output": weights @ v, "row_max": row_max, "row_sum": row_sum,
                "entropy": entropy_rows(weights, status), "row_status": status}
        if "W_O" in W:
            head["contribution"] = head["output"] @ W["W_O"][cols, :]
        heads.append(head)
    concat = np.hstack([hd["output"] for hd in heads])
    output = concat @ W["W_O"] if "W_O" in W else concat
    return {"heads": heads, "concat": concat, "output": output,
            "scale_factor": 1 / math.sqrt(d) if cfg["scale"] else 1.0}


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

def as_array(found, where, null_is_neg_inf=False):
    """JSON rows (or a flat list) -> float64 array; null only where allowed."""
    def conv(x, pos):
        if x is None:
            if null_is_neg_inf:
                return -np.inf
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


def compare(expected, found, where, null_is_neg_inf=False):
    """Raise Mismatch unless found equals expected within tolerance; return max abs err."""
    expected = np.asarray(expected, dtype=float)
    got = as_array(found, where, null_is_neg_inf)
    if got.size == 0 and expected.size == 0:
        return 0.0
    if got.shape != expected.shape:
        raise Mismatch("%s: shape %s, expected %s" % (where, got.shape, expected.shape))
    max_err = 0.0
    for pos in np.ndindex(expected.shape):
        e, f = expected[pos], got[pos]
        if np.isinf(e) or np.isinf(f):
            ok, err = e == f, 0.0
        else:
            err = abs(e - f)
            ok = err <= TOL * max(1.0, abs(e))
        if not ok:
            at = "".join("[%d]" % p for p in pos)
            raise Mismatch("%s%s: expected %r, found %r" % (where, at, float(e), float(f)))
        max_err = max(max_err, err)
    return max_err


def check_equal(expected, found, where):
    if expected != found:
        raise Mismatch("%s: expected %r, found %r" % (where, expected, found))


def weights_used(cfg, out):
    """The weights to compute with: given ones (checked to be echoed), seeded ones read back."""
    echoed = out.get("weights")
    if not isinstance(echoed, dict):
        raise Mismatch("weights: missing from output")
    names = ["W_Q", "W_K", "W_V"] + (["W_O"] if cfg["wo"] else [])
    check_equal(sorted(names), sorted(echoed), "weights (names)")
    dm, hd = cfg["d_model"], cfg["heads"] * cfg["head_dim"]
    W = {}
    for name in names:
        shape = (hd, dm) if name == "W_O" else (dm, hd)
        if name in cfg["omit"]:
            W[name] = as_array(echoed[name], "weights." + name)
            if W[name].shape != shape:
                raise Mismatch("weights.%s: seeded shape %s, expected %s"
                               % (name, W[name].shape, shape))
        else:
            compare(cfg["W"][name], echoed[name], "weights." + name)
            W[name] = cfg["W"][name]
    return W


def check_header(cfg, out):
    check_equal(["q%d" % i for i in range(cfg["n_q"])], out.get("tokens"), "tokens")
    ctx = ["c%d" % j for j in range(cfg["n_kv"])] if cfg["cross"] else \
        ["q%d" % i for i in range(cfg["n_q"])]
    check_equal(ctx, out.get("context_tokens"), "context_tokens")
    att = out.get("attention", {})
    for key in ("heads", "head_dim", "mask", "scale", "kernel"):
        check_equal(cfg[key], att.get(key), "attention." + key)
    check_equal(cfg["wo"], att.get("output_projection"), "attention.output_projection")
    if cfg["mask"] == "sliding_window":
        check_equal(cfg["window"], att.get("window"), "attention.window")


def check_output(cfg, out):
    """Compare the binary's JSON with the reference; return (max abs error, reference)."""
    check_header(cfg, out)
    errs = [compare(cfg["x"], out.get("x"), "x"), compare(cfg["x_kv"], out.get("x_kv"), "x_kv")]
    W = weights_used(cfg, out)
    ref = reference(cfg, W)
    errs.append(compare([ref["scale_factor"]], [out.get("scale_factor")], "scale_factor"))
    heads = out.get("heads")
    if not isinstance(heads, list) or len(heads) != cfg["heads"]:
        raise Mismatch("heads: expected %d entries" % cfg["heads"])
    for h, (rh, fh) in enumerate(zip(ref["heads"], heads)):
        where = "heads[%d]." % h
        check_equal(h, fh.get("head"), where + "head")
        check_equal(h, fh.get("kv_head"), where + "kv_head")
        for field in MATRIX_FIELDS + ROW_FIELDS:
            neg_inf = field == "masked" and cfg["kernel"] == "softmax"
            errs.append(compare(rh[field], fh.get(field), where + field, neg_inf))
        check_equal(rh["row_status"], fh.get("row_status"), where + "row_status")
        if "contribution" in rh:
            errs.append(compare(rh["contribution"], fh.get("contribution"),
                                where + "contribution"))
        elif "contribution" in fh:
            raise Mismatch(where + "contribution: present without W_O")
    errs.append(compare(ref["concat"], out.get("concat"), "concat"))
    errs.append(compare(ref["output"], out.get("output"), "output"))
    if "contribution" in ref["heads"][0]:
        total = sum(np.asarray(fh["contribution"], dtype=float) for fh in heads)
        errs.append(compare(total, out["output"], "output (sum of contributions)"))
    return max(errs), ref


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

def run_binary(binary, path):
    """Run `binary trace path --json`; return (exit code, stdout, stderr)."""
    proc = subprocess.run([binary, "trace", path, "--json"], capture_output=True,
                          text=True, timeout=20)
    return proc.returncode, proc.stdout, proc.stderr


def describe(idx, cfg):
    return "#%-2d heads=%d d=%d dm=%d nq=%d nkv=%d mask=%s kernel=%s scale=%s cross=%s wo=%s%s%s" % (
        idx, cfg["heads"], cfg["head_dim"], cfg["d_model"], cfg["n_q"], cfg["n_kv"],
        cfg["mask"], cfg["kernel"], "on" if cfg["scale"] else "off",
        "yes" if cfg["cross"] else "no", "yes" if cfg["wo"] else "no",
        " seeded=" + ",".join(cfg["omit"]) if cfg["omit"] else "",
        " large" if cfg["large"] else "")


def check_one(binary, tmpdir, idx, cfg, seen):
    """Run and check one configuration; return (passed, message)."""
    path = os.path.join(tmpdir, "scenario_%02d.json" % idx)
    with open(path, "w") as f:
        json.dump(scenario_json(cfg, idx), f)
    code, stdout, stderr = run_binary(binary, path)
    if code != 0:
        return False, "exit code %d: %s" % (code, stderr.strip())
    try:
        out = json.loads(stdout)
    except ValueError as e:
        return False, "output is not JSON: %s" % e
    try:
        err, ref = check_output(cfg, out)
    except Mismatch as e:
        return False, str(e)
    note_coverage(seen, cfg, ref)
    return True, "max_err=%.1e" % err


REQUIRED = {
    "heads": set(range(1, 5)), "head_dim": set(range(1, 6)), "d_model": set(range(1, 7)),
    "n_q": set(range(1, 8)), "n_kv": set(range(1, 8)), "mask": set(MASKS),
    "kernel": {"softmax", "linear"}, "scale": {True, False}, "cross": {True, False},
    "wo": {True, False},
    "feature": {"softmax all_masked", "linear all_masked", "linear zero_sum",
                "linear negative weight", "custom all-zero row", "softmax score > 700",
                "seeded weights x3"},
}


def note_coverage(seen, cfg, ref):
    """Record what a passing configuration exercised."""
    for key in REQUIRED:
        if key != "feature":
            seen.setdefault(key, set()).add(cfg[key])
    feats = seen.setdefault("feature", set())
    seen["seeded"] = seen.get("seeded", 0) + bool(cfg["omit"])
    if seen["seeded"] >= 3:
        feats.add("seeded weights x3")
    for head in ref["heads"]:
        for status in head["row_status"]:
            feats.add("%s %s" % (cfg["kernel"], status))
        if cfg["kernel"] == "linear" and (head["weights"] < 0).any():
            feats.add("linear negative weight")
        if cfg["kernel"] == "softmax" and np.abs(head["scaled"]).max() > 700:
            feats.add("softmax score > 700")
    if cfg["mask"] == "custom" and (np.asarray(cfg["custom_mask"]).sum(axis=1) == 0).any():
        feats.add("custom all-zero row")


def coverage_gaps(seen):
    """Required values or features no passing configuration exercised."""
    return ["%s %s" % (key, sorted(need - seen.get(key, set()), key=str))
            for key, need in REQUIRED.items() if need - seen.get(key, set())]


def probe(binary):
    """Exit 2 unless the binary can be started."""
    try:
        subprocess.run([binary, "--version"], capture_output=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        print("error: cannot run the binary %r: %s" % (binary, e), file=sys.stderr)
        sys.exit(2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="path to attention-lab")
    args = parser.parse_args()
    probe(args.binary)

    rng = np.random.default_rng(SEED)
    configs = [random_config(i, rng) for i in range(N_RANDOM)] + edge_configs()
    passed = failed = 0
    seen = {}
    with tempfile.TemporaryDirectory(prefix="attn_crosscheck_") as tmpdir:
        for idx, cfg in enumerate(configs):
            try:
                ok, msg = check_one(args.binary, tmpdir, idx, cfg, seen)
            except (OSError, subprocess.SubprocessError) as e:
                print("error: cannot run the binary %r: %s" % (args.binary, e), file=sys.stderr)
                return 2
            print("%s %s  %s" % ("ok  " if ok else "FAIL", describe(idx, cfg), msg))
            passed, failed = passed + ok, failed + (not ok)
    gaps = coverage_gaps(seen)
    print("coverage: " + ("complete" if not gaps else "MISSING " + "; ".join(gaps)))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and not gaps else 1


if __name__ == "__main__":
    sys.exit(main())
