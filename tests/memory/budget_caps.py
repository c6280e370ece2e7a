#!/usr/bin/env python3
"""Runs attention-lab on a scenario made here (no big file is committed) under a memory cap a regression would hit.

Release: `prlimit --as=CAP` (the address space; CAP = the memory budget + 1 GiB). The sanitizer build cannot run under
RLIMIT_AS, so there AddressSanitizer's own hard_rss_limit_mb holds the same cap. Standard output goes to /dev/null;
what is checked is the exit code, and for a refusal the budget's message with both numbers.

Cases:
  json_8_heads_refused  trace --json of 8 heads at 4,096 tokens (a 50 KB file, exactly at the cell limit) past a
                        1 GiB budget: exit 2 with the message, before anything is computed
  text_long_names       trace (text) of a scenario of 512 tokens named by 250 letters each (every column was padded to
                        the longest: hundreds of MB of text): exit 0, and at most 64 MB printed
  json_1_head           trace --json of one head at 4,096 tokens (5.1 GB before output was streamed): exit 0
  decode_json_1_head    decode --json of the same (4.5 GB before): exit 0
  markdown_1_head       trace --markdown of the same (4.25 GB before, for an 88 KB handout): exit 0
  decode_text_1_head    decode (text) of the same within 256 MiB, as it predicts 204 MiB (its mask was made from
                        three 4,096 x 4,096 matrices at once: 395 MiB)

In Release, a run that completes must also have stayed within its budget: its peak resident memory (the child's
ru_maxrss) is at most the budget it was given.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

GIB = 1 << 30


def scenario(heads, tokens, d_model=1, label=""):
    # Short labels and one small integer per token: 4,096 tokens is a 50 KB file.
    return {
        "name": "budget %d heads at %d tokens" % (heads, tokens),
        "tokens": ["%st%d" % (label, i) for i in range(tokens)],
        "embeddings": [[i % 7 - 3 + k for k in range(d_model)] for i in range(tokens)],
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
    "text_long_names": (1, 512, ["trace"], "1G", 0),
    "decode_text_1_head": (1, 4096, ["decode"], "256M", 0),
}
LONG_LABEL = "x" * 250  # a token label may have 256 bytes
MAX_TEXT_BYTES = 64 << 20
# Under the sanitizers a run is several times slower: the streamed cases run at 2,048 tokens within 384 MiB (the
# trees they were built as took over 1.3 GB there).
SANITIZER_SIZE = (2048, "384M")
BUDGET_BYTES = {"1G": GIB, "1536M": 1536 << 20, "384M": 384 << 20, "256M": 256 << 20}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--case", required=True, choices=sorted(CASES))
    p.add_argument("--sanitize", action="store_true", help="cap with ASAN_OPTIONS=hard_rss_limit_mb, not prlimit")
    a = p.parse_args()
    heads, tokens, words, budget, expected = CASES[a.case]
    if a.sanitize and expected == 0 and a.case != "text_long_names":
        tokens, budget = SANITIZER_SIZE
    cap = BUDGET_BYTES[budget] + GIB
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "scenario.json")
        with open(path, "w") as f:
            label = LONG_LABEL if a.case == "text_long_names" else ""
            json.dump(scenario(heads, tokens, label=label), f, separators=(",", ":"))
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
        printed = 0
        if a.case == "text_long_names":
            # Counted as it arrives, and stopped past the bound, rather than kept.
            with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
                while printed <= MAX_TEXT_BYTES:
                    chunk = proc.stdout.read(1 << 20)
                    if not chunk:
                        break
                    printed += len(chunk)
                if printed > MAX_TEXT_BYTES:
                    proc.kill()
                err_bytes = proc.stderr.read()
                proc.wait()
            r = subprocess.CompletedProcess(command, proc.returncode, None, err_bytes)
        else:
            with open(os.devnull, "wb") as null:
                r = subprocess.run(command, stdout=null, stderr=subprocess.PIPE, env=env)
    err = r.stderr.decode("utf-8", "replace")
    if printed > MAX_TEXT_BYTES:
        print("FAIL: more than %d bytes of text for a %d x %d table" % (MAX_TEXT_BYTES, tokens, tokens))
        return 1
    if printed:
        print("%s: %d bytes of text" % (a.case, printed))
    print("%s: %s, cap %d MiB, exit %d%s" % (a.case, " ".join(words), cap >> 20, r.returncode,
                                              (": " + err.strip()) if err.strip() else ""))
    if r.returncode != expected:
        print("FAIL: expected exit %d" % expected)
        return 1
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10  # the one child this script ran
    if expected == 0 and not a.sanitize and peak > BUDGET_BYTES[budget]:
        print("FAIL: peak resident memory %d MiB past the %s budget" % (peak >> 20, budget))
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
