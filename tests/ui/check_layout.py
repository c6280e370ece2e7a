#!/usr/bin/python3
"""Runs the layout check over every lesson page and every view (attention-lab --check-layout-sweep: 1280x720
and 1600x900, normal and presentation, dark and light) and expects nothing listed: no text cut off or drawn over
other text, no cell without its value, no number shown with fewer decimals than its matrix, no lesson outline
on nothing, no lesson text that needs scrolling, no number a lesson page quotes that its screen does not show.
Run under xvfb-run; CTest does.

Usage: check_layout.py --binary PATH
"""

import argparse
import re
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    a = p.parse_args()
    proc = subprocess.run([a.binary, "--check-layout-sweep"], capture_output=True, text=True, timeout=900)
    if not re.search(r"layout sweep: \d+ pictures", proc.stdout):
        print("the sweep did not finish (exit %d):\n%s%s" % (proc.returncode, proc.stdout, proc.stderr[-4000:]))
        return 1
    found = sorted({l for l in proc.stderr.splitlines() if l.startswith("layout: ")})
    for l in found:
        print(l)
    print(proc.stdout.strip())
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
