#!/usr/bin/python3
"""Captures every step of the shipped scenarios headlessly and checks each PNG: the asked size, and
not blank (a real frame has many distinct colours). Run under xvfb-run; CTest does.

Usage: check_captures.py --binary PATH --assets DIR --out DIR [--every N]
"""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_info import distinct_colours  # noqa: E402

MIN_COLOURS = 100


def capture(binary, scenario, out, size, extra):
    cmd = [binary, scenario, "--screenshot", out, "--size", "%dx%d" % size] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return "exit %d: %s" % (proc.returncode, proc.stderr.strip())
    width, height, colours = distinct_colours(out)
    if (width, height) != size:
        return "size %dx%d, asked %dx%d" % (width, height, size[0], size[1])
    if colours < MIN_COLOURS:
        return "only %d distinct colours: blank?" % colours
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--assets", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--every", type=int, default=1, help="only every N-th case (the slower sanitizer build)")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cat = os.path.join(a.assets, "scenarios", "the_cat_sat.json")
    dog = os.path.join(a.assets, "scenarios", "the_lazy_dog.json")
    cases = [("cat_sat_step%d" % s, cat, (1600, 900), ["--step", str(s)]) for s in range(10)]
    cases += [("cat_sat_720_step%d" % s, cat, (1280, 720), ["--step", str(s)]) for s in (2, 5, 9)]
    cases += [("lazy_dog_step%d_head%d" % (s, s % 4), dog, (1600, 900), ["--step", str(s), "--head", str(s % 4)])
              for s in range(10)]
    cases += [("cross_attention", os.path.join(a.assets, "scenarios", "cross_attention.json"), (1600, 900),
               ["--step", "softmax"])]
    # The variants and the KV cache: decoding "the cat sat" as each variant, and the model views.
    variants = {"mha": [], "gqa": ["--heads", "4", "--variant", "gqa", "--kv-heads", "2"], "mqa": ["--heads", "4", "--variant", "mqa"],
                "mla": ["--variant", "mla", "--latent-dim", "2"]}
    for name, options in variants.items():
        for tokens in (1, 3):
            cases.append(("decode_%s_token%d" % (name, tokens), cat, (1600, 900),
                          ["--view", "decode", "--decode-tokens", str(tokens)] + options))
    for view in ("compare", "memory", "cost"):
        cases.append(("%s_view" % view, cat, (1600, 900), ["--view", view, "--preset", "llama-3-70b"]))
    cases.append(("memory_view_720", cat, (1280, 720), ["--view", "memory", "--preset", "gemma-3-27b"]))
    # Classroom: the first page of every lesson, the experiment page, presentation mode at 1920x1080.
    for lesson in ("the_cat_sat", "sqrt_dk", "masks", "multi_head", "kv_cache", "variants"):
        cases.append(("lesson_%s_page1" % lesson, cat, (1600, 900), ["--lesson", lesson, "--page", "1"]))
    cases.append(("lesson_sqrt_dk_experiment", cat, (1600, 900), ["--lesson", "sqrt_dk", "--page", "3"]))
    cases.append(("presentation_1080", cat, (1920, 1080), ["--presentation", "--step", "softmax", "--cell", "0,1"]))
    # Tokens in Chinese, an emoji (drawn as the replacement mark) and French: glyphs from the CJK fallback font.
    unicode = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "unicode_tokens.json")
    cases.append(("unicode_tokens_720", unicode, (1280, 720), ["--step", "softmax"]))
    cases.append(("presentation_light_1080", cat, (1920, 1080), ["--presentation", "--theme", "light", "--lesson", "variants", "--page", "5"]))
    # View > Widget gallery, read by the layout check (exit 1 on any finding): the window's part and all of it.
    for size in ((1280, 720), (1600, 900), (1280, 2600)):
        cases.append(("gallery_%dx%d" % size, cat, size, ["--gallery", "--check-layout"]))
    cases.append(("gallery_presentation_1280x2600", cat, (1280, 2600), ["--gallery", "--presentation", "--check-layout"]))
    passed = failed = 0
    for name, scenario, size, extra in cases[::a.every]:
        out = os.path.join(a.out, name + ".png")
        problem = capture(a.binary, scenario, out, size, extra)
        if problem:
            failed += 1
            print("FAIL %-26s %s" % (name, problem))
        else:
            passed += 1
            print("ok   %-26s %s" % (name, out))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
