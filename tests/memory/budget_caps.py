#!/usr/bin/env python3
"""Runs attention-lab on a scenario made here (no big file is committed) under a memory cap a regression would hit.

Release: `prlimit --as=CAP` (the address space; CAP = the memory budget + 1 GiB). The sanitizer build cannot run under
RLIMIT_AS, so there AddressSanitizer's own hard_rss_limit_mb holds the same cap. Standard output goes to /dev/null;
what is checked is the exit code, and for a refusal the budget's message with both numbers.

Cases:
  json_8_heads_refused  trace --json of 8 heads at 4,096 tokens (66 KB, exactly at the cell limit) past a 1 GiB
                        budget: exit 2 with the message, before anything is computed
  json_1_head           trace --json of one head at 4,096 tokens (5.1 GB before output was streamed): exit 0
  decode_json_1_head    decode --json of the same (4.5 GB before): exit 0
  markdown_1_head       trace --markdown of the same (4.25 GB before, for an 88 KB handout): exit 0
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

GIB = 1 << 30


def scenario(heads, tokens, d_model=1):
    # Short labels and one small number per cell: 8 heads at 4,096 tokens is a 66 KB file.
    return {
        "name": "budget %d heads at %d tokens" % (heads, tokens),
        "tokens": ["t%d" % i for i in range(tokens)],
        "embeddings": [[(i % 7) / 7.0 + k for k in range(d_model)] for i in range(tokens)],
        "attention": {"variant": "mha", "heads": heads, "head_dim": 1, "mask": "causal", "scale": True,
                      "kernel": "softmax"},
        "seed": 3,
    }


# name: (heads, tokens, command words after the file, --memory-budget, expected exit)
CASES = {
    "json_8_heads_refused": (8, 4096, ["trace", "--json"], "1G", 2),
    "json_1_head": (1, 4096, ["trace", "--json"], "1536M", 0),
    "decode_json_1_head": (1, 4096, ["decode", "--json"], "1G", 0),
    "markdown_1_head": (1, 4096, ["trace", "--markdown"], "1536M", 0),
}
BUDGET_BYTES = {"1G": GIB, "1536M": 1536 << 20}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--case", required=True, choices=sorted(CASES))
    p.add_argument("--sanitize", action="store_true", help="cap with ASAN_OPTIONS=hard_rss_limit_mb, not prlimit")
    a = p.parse_args()
    heads, tokens, words, budget, expected = CASES[a.case]
    cap = BUDGET_BYTES[budget] + GIB
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "scenario.json")
        with open(path, "w") as f:
            json.dump(scenario(heads, tokens), f, separators=(",", ":"))
        command = [a.binary, words[0], path] + words[1:] + ["--memory-budget", budget]
        env = dict(os.environ)
        if a.sanitize:
            env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":hard_rss_limit_mb=%d" % (cap >> 20)).lstrip(":")
        else:
            command = ["prlimit", "--as=%d" % cap, "--"] + command
        # Two threads, as on the 2-core machine the suite is sized for; glibc's per-thread heaps reserve address
        # space of their own, so they are held to two as well.
        env.setdefault("OMP_NUM_THREADS", "2")
        env.setdefault("MALLOC_ARENA_MAX", "2")
        with open(os.devnull, "wb") as null:
            r = subprocess.run(command, stdout=null, stderr=subprocess.PIPE, env=env)
    err = r.stderr.decode("utf-8", "replace")
    print("%s: %s, cap %d MiB, exit %d%s" % (a.case, " ".join(words), cap >> 20, r.returncode,
                                              (": " + err.strip()) if err.strip() else ""))
    if r.returncode != expected:
        print("FAIL: expected exit %d" % expected)
        return 1
    if expected == 2:
        message = re.compile(r"this trace needs [0-9,]+ bytes \([0-9.]+ GiB\) but the memory budget is "
                             r"1,073,741,824 bytes \(1\.00 GiB\); use --memory-budget, fewer tokens or heads")
        if not message.search(err):
            print("FAIL: the budget's message with both numbers was expected on stderr")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
