#!/usr/bin/python3
"""Runs the layout check over every lesson page and every view (attention-lab --check-layout-sweep: 1280x720
and 1600x900, normal and presentation, dark and light) and expects nothing listed: no text cut off or drawn over
other text, no cell without its value, no number shown with fewer decimals than its matrix, no lesson outline
on nothing, no lesson text that needs scrolling, no number a lesson page quotes that its screen does not show, and
(at 1280x720 in presentation mode and 1600x900 in normal mode) nothing a page is about out of sight.

Findings still to fix are listed in layout_known.txt beside this script, one per line as the sweep prints them: the
sweep fails on any finding not listed, and on any listed one it no longer finds (remove the line: it is fixed).
Run under xvfb-run; CTest does.

Usage: check_layout.py --binary PATH
"""

import argparse
import os
import re
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--skip-training-pages", action="store_true",
                   help="under sanitizers: leave out the pages that train a model (the Release sweep judges them)")
    a = p.parse_args()
    command = [a.binary, "--check-layout-sweep"] + (["--skip-training-pages"] if a.skip_training_pages else [])
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if not re.search(r"layout sweep: \d+ pictures", proc.stdout):
        print("the sweep did not finish (exit %d):\n%s%s" % (proc.returncode, proc.stdout, proc.stderr[-4000:]))
        return 1
    found = {l for l in proc.stderr.splitlines() if l.startswith("layout: ")}
    known_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layout_known.txt")
    with open(known_path, encoding="utf-8") as f:
        known = {l.rstrip("\n") for l in f if l.startswith("layout: ")}
    new, fixed = sorted(found - known), sorted(known - found)
    for l in new:
        print("new: " + l)
    for l in fixed:
        print("fixed, remove it from layout_known.txt: " + l)
    print(proc.stdout.strip() + " (%d known, still to fix)" % len(found & known))
    return 1 if new or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
