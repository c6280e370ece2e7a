#!/usr/bin/env python3
"""FLOPs per (query, key) pair and numbers cached per token of each preset as MHA, GQA, MQA and MLA, counted
from what each head reads, and checked against `attention-lab kv --compare --json`.

Counting rule: a dot product of two n-vectors is n multiplications and n additions, 2n FLOPs; so is adding
an n-vector scaled by a weight to an accumulator. Per (query, key) pair each of the H query heads
  - scores: one dot product of its query with the key,
  - sums:   adds the weighted value to its output.
MHA/GQA/MQA: the key is head_dim wide, plus the decoupled RoPE part of a model that has one (DeepSeek:
128 + 64 = 192); the value is head_dim wide. MLA in absorbed form: the score reads the d_c latent and the
d_R RoPE key, the sum reads the latent. Cached per token and layer: each KV head's key and value (G of them),
or MLA's latent and RoPE key.

The forms (docs/CLI.md, `kv --compare`): GQA keeps the model's own G, else 8 when 8 divides H and 8 < H, else the
largest divisor of H below H (none: not possible); MLA keeps the model's latent, else d_c = 4 head_dim and
d_R = head_dim / 2. The other forms of an MLA model keep its RoPE part in every key.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import command_line, read_presets  # noqa: E402


def chosen_g(heads):
    if heads > 8 and heads % 8 == 0:
        return 8
    below = [g for g in range(heads - 1, 1, -1) if heads % g == 0]
    return below[0] if below else None


def forms(m):
    """(variant, shape) in the order mha, gqa, mqa, mla; shape None where the form is not possible."""
    H, d = m["heads"], m.get("head_dim", 0)
    rope = m.get("rope_dim", 0) if m["variant"] == "mla" and d > 0 else 0
    own_g = m["variant"] == "gqa" and 1 < m["kv_heads"] < H
    G = m["kv_heads"] if own_g else chosen_g(H)
    plain = lambda g: {"heads": H, "kv_heads": g, "head_dim": d, "key_rope": rope}
    mla = ({"heads": H, "latent_dim": m["latent_dim"], "rope_dim": m.get("rope_dim", 0)} if m["variant"] == "mla"
           else {"heads": H, "latent_dim": 4 * d, "rope_dim": d // 2})
    return [("mha", plain(H)), ("gqa", plain(G) if G else None), ("mqa", plain(1)), ("mla", mla)]


def vectors_per_pair(variant, s):
    """The widths of the vectors one head reads per (query, key) pair: (scored, summed)."""
    if variant == "mla":
        return [s["latent_dim"], s["rope_dim"]], [s["latent_dim"]]
    return [s["head_dim"], s["key_rope"]], [s["head_dim"]]


def flops_per_pair(variant, s):
    scored, summed = vectors_per_pair(variant, s)
    return s["heads"] * (2 * sum(scored) + 2 * sum(summed))


def cached_per_token(variant, s):
    if variant == "mla":
        return s["latent_dim"] + s["rope_dim"]
    return s["kv_heads"] * (s["head_dim"] + s["key_rope"] + s["head_dim"])


def check(name, found, expected, failures):
    if found != expected:
        failures.append(f"FAIL {name}: expected {expected}, found {found}")


def main():
    args = command_line(__doc__, presets=True).parse_args()
    models = read_presets(args.presets)
    # A shape typed on the command line: MLA without a RoPE key.
    typed = {"name": "typed mla, no rope", "variant": "mla", "heads": 4, "kv_heads": 4, "head_dim": 8,
             "latent_dim": 16, "rope_dim": 0}
    runs = [(m, ["--preset", m["name"]]) for m in models]
    runs.append((typed, ["--layers", "2", "--heads", "4", "--latent-dim", "16", "--head-dim", "8"]))
    failures, counts = [], {}
    for m, flags in runs:
        out = json.loads(subprocess.run([args.binary, "kv", *flags, "--compare", "--json"], check=True,
                                        capture_output=True, text=True).stdout)
        for (variant, shape), v in zip(forms(m), out["variants"]):
            where = f"{m['name']} as {variant}"
            check(where + " variant", v["variant"], variant, failures)
            check(where + " possible", v["possible"], shape is not None, failures)
            if shape is None:
                continue
            counts[(m["name"], variant)] = flops_per_pair(variant, shape)
            check(where + " FLOPs per pair", v.get("attention_flops_per_pair"), flops_per_pair(variant, shape),
                  failures)
            check(where + " numbers cached per token", v.get("elements_per_token_per_layer"),
                  cached_per_token(variant, shape), failures)
            if variant != "mla":
                check(where + " key width", v.get("key_dim"), shape["head_dim"] + shape["key_rope"], failures)
    # The counts by hand: DeepSeek V3 as MLA 2·128·(512 + 64) + 2·128·512, as MHA 2·128·192 + 2·128·128;
    # GPT-2 small 4·12·64; the typed MLA 4·4·16.
    for key, expected in {("deepseek-v3", "mla"): 278528, ("deepseek-v3", "mha"): 81920,
                          ("deepseek-v3", "gqa"): 81920, ("gpt-2-small", "mha"): 3072,
                          ("typed mla, no rope", "mla"): 256, ("typed mla, no rope", "mha"): 128}.items():
        check(f"{key[0]} as {key[1]} by hand", counts.get(key), expected, failures)
    for f in failures:
        print(f)
    print(f"cost cross-check: {len(counts)} forms of {len(runs)} models, {len(failures)} wrong")
    return 1 if failures or not counts else 0


if __name__ == "__main__":
    sys.exit(main())
