#!/usr/bin/python3
"""Runs the layout check over every lesson page and every view (attention-lab --check-layout-sweep: 1280x720
and 1600x900, normal and presentation, dark and light) and expects nothing listed: no text cut off or drawn over
other text, no cell without its value, no number shown with fewer decimals than its matrix, no lesson outline
on nothing, no lesson text that needs scrolling.

One kind of finding is not fixed everywhere yet: a number a lesson page quotes that its screen does not show
(scrolled out of view, or never there). Those are compared, per page and number, with quotes_known.txt: a new
one fails, and so does a listed one no longer found, so the list only shrinks. Run under xvfb-run; CTest does.

Usage: check_layout.py --binary PATH [--write]
"""

import argparse
import os
import re
import subprocess
import sys

KNOWN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "quotes_known.txt")
QUOTE = re.compile(r"layout: \S+ \S+ \S+ \| lesson (\S+) page (\d+) \| Lesson: the text quotes (\S+), not on screen$")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--write", action="store_true", help="rewrite quotes_known.txt with the quotes found now")
    a = p.parse_args()
    proc = subprocess.run([a.binary, "--check-layout-sweep"], capture_output=True, text=True, timeout=900)
    if not re.search(r"layout sweep: \d+ pictures", proc.stdout):
        print("the sweep did not finish (exit %d):\n%s%s" % (proc.returncode, proc.stdout, proc.stderr[-4000:]))
        return 1
    findings = sorted({l for l in proc.stderr.splitlines() if l.startswith("layout: ")})
    quotes = sorted({"%s page %s quotes %s" % m.groups() for m in map(QUOTE.match, findings) if m})
    others = [l for l in findings if not QUOTE.match(l)]
    if a.write:
        with open(KNOWN, "w", encoding="utf-8") as f:
            f.write("".join(q + "\n" for q in quotes))
        print("wrote %d quotes to %s" % (len(quotes), KNOWN))
        return 0
    with open(KNOWN, encoding="utf-8") as f:
        known = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    new = [q for q in quotes if q not in known]
    gone = sorted(known - set(quotes))
    for l in others:
        print(l)
    for q in new:
        print("NEW QUOTE OFF SCREEN: " + q)
    for q in gone:
        print("FIXED: " + q + "   (take it off quotes_known.txt)")
    print(proc.stdout.strip())
    print("%d other findings; %d quotes off screen: %d known, %d new, %d known ones fixed" %
          (len(others), len(quotes), len(quotes) - len(new), len(new), len(gone)))
    return 1 if others or new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
