#!/usr/bin/env python3
"""The longest context each preset's KV cache fits in 24, 80 and 141 GB, solved in closed form from the
preset shapes and checked against `attention-lab kv --json`.

A cache of seq tokens holds, per layer, seq keys and values in a global layer and min(seq, window) in a
sliding-window one, for every sequence of the batch:
    bits(seq) = e * b * batch * (n_global * seq + n_local * min(seq, window))
with e the numbers cached per token per layer (mha 2*H*d, gqa 2*G*d, mqa 2*d, mla d_c + d_rope) and b the
bits per number. The cache fits in B bytes when ceil(bits / 8) <= B, that is bits <= 8 * B.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import command_line, read_presets  # noqa: E402

ACCELERATORS = (24_000_000_000, 80_000_000_000, 141_000_000_000)
BITS = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}
LIMIT = 1 << 30  # kv accepts at most this many tokens


def per_token_numbers(m):
    v = m["variant"]
    if v == "mha":
        return 2 * m["heads"] * m["head_dim"]
    if v == "gqa":
        return 2 * m["kv_heads"] * m["head_dim"]
    if v == "mqa":
        return 2 * m["head_dim"]
    return m["latent_dim"] + m.get("rope_dim", 0)


def layer_counts(m):
    """(global, local): layers repeat as local_layers local then global_layers global."""
    if not m.get("window"):
        return m["layers"], 0
    a, b = m.get("local_layers", 0), m.get("global_layers", 0)
    if b == 0:
        return 0, m["layers"]
    n_global = sum(1 for i in range(m["layers"]) if i % (a + b) >= a)
    return n_global, m["layers"] - n_global


def longest(m, capacity, batch, bits):
    budget = 8 * capacity // (per_token_numbers(m) * bits * batch)  # token-layer slots that fit
    n_global, n_local = layer_counts(m)
    window = m.get("window") or LIMIT
    # Below the window every layer holds seq tokens.
    seq = budget // (n_global + n_local)
    if seq >= window:  # past it the local layers stop growing
        if n_global == 0:
            return None
        seq = (budget - n_local * window) // n_global
    return None if seq >= LIMIT else seq


def main():
    args = command_line(__doc__, presets=True).parse_args()
    models = read_presets(args.presets)
    failures = checked = 0
    for m in models:
        for dtype in ("fp32", "bf16", "int4"):
            for batch in (1, 3, 64):
                out = json.loads(subprocess.run(
                    [args.binary, "kv", "--preset", m["name"], "--dtype", dtype, "--batch", str(batch), "--json"],
                    check=True, capture_output=True, text=True).stdout)
                found = {e["bytes"]: e["tokens"] for e in out["longest_context"]}
                for capacity in ACCELERATORS:
                    expected = longest(m, capacity, batch, BITS[dtype])
                    checked += 1
                    if found.get(capacity, "missing") != expected:
                        failures += 1
                        print(f"FAIL {m['name']} {dtype} batch {batch} in {capacity:,} bytes: "
                              f"expected {expected}, found {found.get(capacity, 'missing')}")
    print(f"kv fit cross-check: {checked} contexts, {failures} wrong")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
