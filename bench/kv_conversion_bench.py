#!/usr/bin/python3
"""`attention-lab convert FOLDER --ladder --eval TEXT` on GPT-2 small beside PyTorch doing the same, float64.

The ladder is every cheaper cache the lab measures on one model: GPT-2 small as shipped, GQA at each divisor of its
12 heads below 12 (6, 4, 3, 2 and MQA's 1), and MLA at eight latent widths (768, 576, 384, 288, 192, 96, 48, 24),
each converted from the model's own weights and run on the same 512-token text as the original: loss, perplexity,
top-1 agreement and KL(original || converted) for each of the 14 points. The target: under a minute on two cores,
and no slower than the PyTorch side.

The checkpoint is bench/checkpoint_bench.py's gpt2-small (random weights in GPT-2 small's shapes and names, F32,
548 MB; written into --work when missing, reused while its marker matches). Its tokenizer makes one token per ASCII
character, so TEXT is 512 characters: words drawn with a fixed seed.

What each side computes and how it is timed:
  ours     `attention-lab convert FOLDER --ladder --eval TEXT --json`: the 12 layers' SVDs of [W_K | W_V] once, the
           original's forward pass once, then each conversion's pass, the logits read a block of rows at a time. Wall
           time from process start to exit, and the peak RSS.
  PyTorch  a child process: the same 14 points with torch.linalg.svd of each layer's [W_K | W_V] once, each
           conversion as the original architecture with W_K and W_V replaced by their pooled (group means,
           repeated per head, the biases too) or rank-C (U_C S_C V_C^T, the biases kept) projections, the forward pass of checkpoint_bench.py's
           gpt2_peer (float64, the weights decoded from the mapped file as each layer runs), the original's log
           probabilities kept once and each point's loss, top-1 agreement and KL from its logits. Timed from after
           its imports to the last point; its peak RSS includes torch's.
Both sides report every point; they must agree to 1e-6 (the same arithmetic in another order), or the timing means
nothing and the script says so.

Equal footing as bench/checkpoint_bench.py: float64 on both sides, the same thread count, one untimed warm-up run of
each (the file in the page cache), one process at a time, ours first, the median of --runs timed runs.

Run:  /usr/bin/python3 bench/kv_conversion_bench.py --binary build/app/attention-lab --threads 2

Exit status: 0 done (a missed target is reported, not an error), 1 the two sides disagree, 2 something could not be
run.
"""

import argparse
import json
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import checkpoint_bench as cb  # noqa: E402
from compare import Failure, THREAD_VARS, ensure_openblas, loadavg  # noqa: E402

TOKENS = 512
SECONDS_TARGET = 60.0
RATIO_TARGET = 1.0
AGREEMENT = 1e-6
WORDS = "the cat sat on a mat and dog ran to big red sun in old tree".split()


def bench_text():
    rng = random.Random(2026)
    text = ""
    while len(text) < TOKENS:
        text += rng.choice(WORDS) + " "
    return text[:TOKENS]


def ladder(g0, rank):
    """The points after the original, as the lab orders them."""
    points = [("gqa", g) for g in range(g0 - 1, 0, -1) if g0 % g == 0]
    widths = []
    for num, den in ((1, 1), (3, 4), (1, 2), (3, 8), (1, 4), (1, 8), (1, 16), (1, 32)):
        c = max(1, rank * num // den)
        if c not in widths:
            widths.append(c)
    return points + [("mla", c) for c in widths]


class ConvertedWeights(cb.MappedWeights):
    """The mapped weights with each layer's c_attn K and V columns replaced by a conversion's projections."""

    def __init__(self, base, replaced):
        self.__dict__.update(base.__dict__)
        self.replaced = replaced  # name -> tensor

    def get(self, name):
        return self.replaced[name] if name in self.replaced else super().get(name)


def kv_columns(torch, w, config):
    """Per layer, the c_attn weight and bias names and [W_K | W_V] (E, 2E)."""
    e, out = config["n_embd"], []
    for n in range(config["n_layer"]):
        name = f"h.{n}.attn.c_attn.weight"
        out.append((name, w.get(name)[:, e:]))
    return out


def pooled(kv, heads, groups):
    """Each row of kv (rows, 2E) with every key head and every value head replaced by its group's mean."""
    rows, e = kv.shape[0], kv.shape[1] // 2
    size, dh = heads // groups, e // heads
    blocks = kv.reshape(rows, 2, groups, size, dh).mean(dim=3, keepdim=True)
    return blocks.expand(rows, 2, groups, size, dh).reshape(rows, 2 * e)


def converted_c_attn(torch, base, kv, point, heads, svds):
    """c_attn weight (and, for GQA, bias) name -> the converted tensor for every layer: MLA keeps the biases."""
    replaced = {}
    for layer, (name, a) in enumerate(kv):
        e = a.shape[0]
        if point[0] == "gqa":
            low = pooled(a, heads, point[1])
            bias_name = name.replace(".weight", ".bias")
            bias = base.get(bias_name).clone()
            bias[e:] = pooled(bias[e:].reshape(1, 2 * e), heads, point[1])[0]
            replaced[bias_name] = bias
        else:
            u, s, vt = svds[layer]
            c = point[1]
            low = (u[:, :c] * s[:c]) @ vt[:c]
        full = base.get(name).clone()
        full[:, e:] = low
        replaced[name] = full
    return replaced


def point_stats(torch, log_p, logits, ids):
    """Loss, top-1 agreement and KL of one point's logits against the original's log probabilities."""
    log_q = torch.log_softmax(logits[:-1], dim=-1)
    targets = torch.tensor(ids[1:])
    loss = -log_q[torch.arange(len(ids) - 1), targets].mean().item()
    agree = (log_p.argmax(dim=-1) == log_q.argmax(dim=-1)).double().mean().item()
    kl = (log_p.exp() * (log_p - log_q)).sum(dim=-1).clamp(min=0).mean().item()
    return {"loss": loss, "top1_agreement": agree, "kl": kl}


def peer_child(folder, text, threads):
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    cc = cb.crosscheck()
    start = time.perf_counter()
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    tok = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    ids = cc.hand_bpe(text, tok)
    base = cb.MappedWeights(cc, np, torch, folder)
    heads = config["n_head"]
    with torch.inference_mode():
        logits = cb.gpt2_peer(torch, config, base, ids, cb.UNEMBED_ROWS)
        log_p = torch.log_softmax(logits[:-1], dim=-1)
        targets = torch.tensor(ids[1:])
        original = -log_p[torch.arange(len(ids) - 1), targets].mean().item()
        kv = kv_columns(torch, base, config)
        svds = [torch.linalg.svd(a, full_matrices=False) for _, a in kv]
        points = []
        for point in ladder(heads, min(config["n_embd"], 2 * config["n_embd"])):
            w = ConvertedWeights(base, converted_c_attn(torch, base, kv, point, heads, svds))
            stats = point_stats(torch, log_p, cb.gpt2_peer(torch, config, w, ids, cb.UNEMBED_ROWS), ids)
            points.append({"to": point[0], "size": point[1], **stats})
    json.dump({"seconds": time.perf_counter() - start, "loss": original, "points": points}, sys.stdout)
    return 0


def agreement(ours, peer):
    """The largest difference between the two sides' numbers, and the points that differ in kind."""
    worst = abs(ours["original"]["loss"] - peer["loss"])
    if len(ours["points"]) != len(peer["points"]):
        return math.inf
    for o, p in zip(ours["points"], peer["points"]):
        if o["to"] != p["to"] or o.get("kv_heads", o.get("latent_dim")) != p["size"]:
            return math.inf
        for key in ("loss", "top1_agreement", "kl"):
            worst = max(worst, abs(o[key] - p[key]))
    return worst


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=str(ROOT / "build/app/attention-lab"))
    p.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "attention-lab-checkpoint-bench"),
                   help="where the checkpoint is written and kept (shared with checkpoint_bench.py)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=1, help="timed runs of each side after the warm-up (default 1)")
    p.add_argument("--peer-child", metavar="FOLDER", help=argparse.SUPPRESS)
    p.add_argument("--text", help=argparse.SUPPRESS)
    return p.parse_args()


def main():
    args = parse_args()
    if args.peer_child:
        return peer_child(args.peer_child, args.text, args.threads)
    for var in THREAD_VARS:
        os.environ[var] = str(args.threads)
    env = dict(os.environ)
    work = Path(args.work).resolve()
    text = bench_text()
    try:
        ensure_openblas()
        if not os.access(args.binary, os.X_OK):
            raise Failure(f"{args.binary}: not an executable (build it: cmake --build BUILD --target attention-lab)")
        import numpy as np
        cc = cb.crosscheck()
        work.mkdir(parents=True, exist_ok=True)
        folder, _ = cb.ensure_folder(cc, np, work, cb.gpt2_model())
        text_file = work / "kv_conversion_bench.txt"
        text_file.write_text(text)
        load_before = loadavg()
        ours = cb.measure([args.binary, "convert", str(folder), "--ladder", "--eval", str(text_file), "--json"], env,
                          work / "kv_conversion.ours.json", args.runs)
        if "error" in ours:
            raise Failure(f"attention-lab convert failed: {ours['error']}")
        peer = cb.measure([sys.executable, str(Path(__file__).resolve()), "--peer-child", str(folder), "--threads",
                           str(args.threads), "--text", text], env, work / "kv_conversion.pytorch.json", args.runs,
                          internal_seconds=lambda out: json.loads(out)["seconds"])
        if "error" in peer:
            raise Failure(f"the PyTorch side failed: {peer['error']}")
        load_after = loadavg()
    except Failure as e:
        print(f"kv_conversion_bench.py: {e}", file=sys.stderr)
        return 2
    ours_json = json.loads((work / "kv_conversion.ours.json").read_text())
    peer_json = json.loads((work / "kv_conversion.pytorch.json").read_text())
    worst = agreement(ours_json, peer_json)
    ratio = ours["seconds"] / peer["seconds"]
    print(f"GPT-2 small shape, {TOKENS} tokens, {len(ours_json['points']) + 1} points, {args.threads} thread(s); "
          f"load average {load_before} before, {load_after} after")
    print(f"{'side':<10} {'seconds':>8} {'peak RSS':>10}")
    print(f"{'ours':<10} {ours['seconds']:>8.2f} {cb.gib(ours['rss']):>6.2f} GiB")
    print(f"{'PyTorch':<10} {peer['seconds']:>8.2f} {cb.gib(peer['rss']):>6.2f} GiB")
    print(f"largest difference between the sides' losses, agreements and KLs: {worst:.2e} (at most {AGREEMENT:g})")
    print(f"target: ours under {SECONDS_TARGET:.0f} s: {'met' if ours['seconds'] < SECONDS_TARGET else 'MISSED'} "
          f"({ours['seconds']:.1f} s)")
    print(f"target: ours/PyTorch <= {RATIO_TARGET:.1f}: {'met' if ratio <= RATIO_TARGET else 'MISSED'} "
          f"({ratio:.2f})")
    return 0 if worst <= AGREEMENT else 1


if __name__ == "__main__":
    sys.exit(main())
