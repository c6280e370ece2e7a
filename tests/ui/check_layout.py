#!/usr/bin/python3
"""Runs the layout check over every lesson page and every view (attention-lab --check-layout-sweep: 1280x720
and 1600x900, normal and presentation, dark and light) and compares what it finds with layout_known.txt, the
findings not fixed yet. A finding not in the list fails (a layout broke); a listed one no longer found also
fails (it was fixed: take it off the list), so the list only shrinks. Pixel counts are left out of the
comparison, and so is how many of a matrix's cells are too small. Run under xvfb-run; CTest does.

Usage: check_layout.py --binary PATH [--known FILE] [--write]
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def normalise(line):
    line = re.sub(r"\([0-9.]+\u00D7[0-9.]+ px\)", "(W\u00D7H px)", line)
    line = re.sub(r"[0-9]+ of ([0-9]+) cells", r"K of \1 cells", line)
    return re.sub(r"[0-9]+ px", "N px", line)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--known", default=os.path.join(HERE, "layout_known.txt"))
    p.add_argument("--write", action="store_true", help="rewrite the known list with what is found now")
    a = p.parse_args()
    proc = subprocess.run([a.binary, "--check-layout-sweep"], capture_output=True, text=True, timeout=900)
    if not re.search(r"layout sweep: \d+ pictures", proc.stdout):
        print("the sweep did not finish (exit %d):\n%s%s" % (proc.returncode, proc.stdout, proc.stderr[-4000:]))
        return 1
    found = sorted({normalise(l[len("layout: "):]) for l in proc.stderr.splitlines() if l.startswith("layout: ")})
    if a.write:
        with open(a.known, "w", encoding="utf-8") as f:
            f.write("".join(l + "\n" for l in found))
        print("wrote %d findings to %s" % (len(found), a.known))
        return 0
    with open(a.known, encoding="utf-8") as f:
        known = {l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")}
    new = [l for l in found if l not in known]
    fixed = sorted(known - set(found))
    for l in new:
        print("NEW:   " + l)
    for l in fixed:
        print("FIXED: " + l + "   (take it off " + os.path.basename(a.known) + ")")
    print(proc.stdout.strip())
    print("%d findings: %d known, %d new, %d known ones no longer found" % (len(found), len(found) - len(new), len(new), len(fixed)))
    return 1 if new or fixed else 0


if __name__ == "__main__":
    sys.exit(main())
