#!/usr/bin/python3
"""Captures every step of the shipped scenarios headlessly and checks each PNG: the asked size, and
not blank (a real frame has many distinct colours). Run under xvfb-run; CTest does.

Usage: check_captures.py --binary PATH --assets DIR --out DIR
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
    passed = failed = 0
    for name, scenario, size, extra in cases:
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
