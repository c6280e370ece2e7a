#!/usr/bin/env python3
"""Runs the window (under xvfb-run) on a scenario made here with a memory budget: refused at start with exit 2 and the
sentence with both numbers, or run to the end with its peak resident memory (the child's ru_maxrss) within the budget.

Cases:
  one_head_4096  a capture of one head of 4 at 4,096 tokens (d_model 8, causal) at 1280x720: 400M is refused (it was
                 accepted and peaked at 755 MiB), 2G runs within it
  big_window     a capture of 3 tokens at 8192x8192 within 64M, and at 1280x720 within 16M, are refused (they peaked
                 at 1.7 GiB and 150 MB); at 1280x720 within 256M it runs within it
  settings_budget the window opened by a person (no capture) with "memory_budget": "64M" in its settings file: refused
                 at start like --memory-budget 64M (it opened and ran)
  document_and_model the document at 2,500 tokens of one head and the Model view on 2,048 tokens of 8 heads at 1G:
                 each fits alone, not both (the model is refused, naming what the window holds); at 2G both run
                 within it
  zoom_cjk       a capture at 300% in presentation mode on a 1920x1080 window of 40 tokens that write 3,200
                 distinct Chinese characters, within 400M (every glyph rasterised at that size peaked at 591 MiB
                 without the zoom)
  soak_256_heads random actions from 2 tokens and 256 heads of 32 (the tokens slider, tokens added, undo, the worker
                 recomputing while the old trace is shown) within 256M (100 actions peaked at 400 MiB)
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20
SIZES = {"settings:64M": 64 * MIB, "16M": 16 * MIB, "64M": 64 * MIB, "256M": 256 * MIB, "400M": 400 * MIB,
         "1G": 1024 * MIB, "2G": 2048 * MIB}


def one_head(tokens):
    return {"name": "one head", "tokens": ["t%d" % i for i in range(tokens)],
            "embeddings": [[(i + k) % 5 - 2 for k in range(8)] for i in range(tokens)],
            "attention": {"heads": 1, "head_dim": 4, "mask": "causal"}, "seed": 3}


SMALL = {"name": "small", "tokens": ["the", "cat", "sat"], "embeddings": [[1, 0], [0, 1], [1, 1]],
         "attention": {"heads": 1, "head_dim": 2}, "seed": 1}
HEADS_256 = {"name": "x", "tokens": ["a", "b"], "embeddings": [[0.1, 0.1], [0.2, 0.2]],
             "attention": {"heads": 256, "head_dim": 32}, "seed": 1}

# 40 tokens of 80 characters each, none written twice.
MANY_CHARACTERS = {"name": "many characters",
                   "tokens": ["".join(chr(0x4E00 + t * 80 + i) for i in range(80)) for t in range(40)],
                   "embeddings": [[i % 3 - 1, i % 5 - 2] for i in range(40)],
                   "attention": {"heads": 1, "head_dim": 2}, "seed": 1}

# One layer of 8 heads of 8 over d_model 64, and 2,048 of its tokens.
WIDE_MODEL = {"name": "wide", "vocab": ["a", "b"], "d_model": 64, "max_positions": 4096, "positions": "none",
              "norm": "none", "layers": [{"attention": {"heads": 8, "head_dim": 8, "mask": "causal"}}]}
WIDE_TOKENS = " ".join("ab"[i % 2] for i in range(2048))
WITH_MODEL = ["--model", "{model}", "--model-tokens", WIDE_TOKENS, "--screenshot", "{out}", "--size", "1280x720"]

# name: the scenario, then (window words after the file, --memory-budget, expected exit) for each run
CASES = {
    "one_head_4096": (one_head(4096), [(["--screenshot", "{out}", "--size", "1280x720"], "400M", 2),
                                       (["--screenshot", "{out}", "--size", "1280x720"], "2G", 0)]),
    "big_window": (SMALL, [(["--screenshot", "{out}", "--size", "8192x8192"], "64M", 2),
                           (["--screenshot", "{out}", "--size", "1280x720"], "16M", 2),
                           (["--screenshot", "{out}", "--size", "1280x720"], "256M", 0)]),
    "settings_budget": (SMALL, [([], "settings:64M", 2)]),
    "document_and_model": (one_head(2500), [(WITH_MODEL, "1G", 2), (WITH_MODEL, "2G", 0)]),
    "zoom_cjk": (MANY_CHARACTERS, [(["--zoom", "300", "--presentation", "--screenshot", "{out}",
                                     "--size", "1920x1080"], "400M", 0)]),
    "soak_256_heads": (HEADS_256, [(["--soak", "100", "--seed", "5", "--size", "1280x720"], "256M", 0)]),
}
REFUSED = re.compile(r"needs [0-9,]+ bytes \([0-9.]+ [MG]iB\) but the memory budget is [0-9,]+ bytes "
                     r"\([0-9.]+ [MG]iB\)(, of which [0-9,]+ bytes \([0-9.]+ [MG]iB\) are held by [a-zA-Z ]+)?; "
                     r"use --memory-budget, ")


def run_one(binary, path, out, words, budget, expected):
    model = os.path.join(os.path.dirname(out), "model.json")
    command = [binary, path] + [w.replace("{out}", out).replace("{model}", model) for w in words]
    env = dict(os.environ)
    if budget.startswith("settings:"):  # the settings file's, in a configuration folder of its own
        config = os.path.join(os.path.dirname(out), "config")
        os.makedirs(os.path.join(config, "attention-lab"), exist_ok=True)
        with open(os.path.join(config, "attention-lab", "settings.json"), "w") as f:
            json.dump({"memory_budget": budget.split(":")[1]}, f)
        env["XDG_CONFIG_HOME"] = config
    else:
        command += ["--memory-budget", budget]
    env.setdefault("OMP_NUM_THREADS", "2")  # as on the 2-core machine the suite is sized for
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        err = os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(err, 2)
        os.execvpe(command[0], command, env)
    # A window that opens for a person runs until closed: past 30 s it was not refused (the others end by themselves).
    for _ in range(300 if budget.startswith("settings:") else 6000):
        waited, status, usage = os.wait4(pid, os.WNOHANG)  # this child's own peak, not the earlier runs'
        if waited:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss << 10
    with open(out + ".err", encoding="utf-8", errors="replace") as f:
        err = f.read().strip()
    shown = " ".join(w if len(w) < 40 else w[:20] + "..." for w in words if w not in ("--screenshot", "{out}"))
    print("%s within %s: exit %d, peak RSS %d MiB%s" % (shown, budget, code, peak >> 20,
                                                        (": " + err) if err else ""))
    if code != expected:
        print("FAIL: expected exit %d" % expected)
        return False
    if code == 2 and not REFUSED.search(err):
        print("FAIL: the budget's sentence with both numbers was expected on stderr")
        return False
    if code == 0 and peak > SIZES[budget]:
        print("FAIL: peak resident memory %d MiB past the %s budget" % (peak >> 20, budget))
        return False
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--case", required=True, choices=sorted(CASES))
    a = p.parse_args()
    scenario, runs = CASES[a.case]
    ok = True
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "scenario.json")
        with open(path, "w") as f:
            json.dump(scenario, f, separators=(",", ":"))
        with open(os.path.join(d, "model.json"), "w") as f:
            json.dump(WIDE_MODEL, f)
        for words, budget, expected in runs:
            ok = run_one(a.binary, path, os.path.join(d, "out.png"), words, budget, expected) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
