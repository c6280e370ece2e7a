#!/usr/bin/python3
"""The lesson pages a lecturer found out of sight on a projector, each checked by the layout check: at 1280x720 in
presentation mode (dark and light) nothing may be listed; squeezed to 1280x400 the same page must be a finding that
names what it is about (its check line, result, named matrices or outlined parts), which shows the check sees them.
The induction page, which trains its model first, is judged at 1280x720 by the layout sweep alone (ui_layout_sweep
checks every lesson page there in both themes, with the same check): here it is only squeezed.
Run under xvfb-run; CTest does.

Usage: pages_in_sight.py --binary PATH
"""

import argparse
import subprocess
import sys

# (lesson, page, what a squeezed window must report out of sight)
PAGES = [
    ("multi_head", 5, "Pipeline: matrix W_O"),
    ("online_softmax", 5, "Pipeline: the dense output"),
    ("kv_cache", 2, "Decode: \"\u2714 The same numbers"),
    ("kv_cache", 5, "Decode: \"\u2714 The same numbers"),
    ("sparse_attention", 5, "Decode: \"\u2714 The same numbers"),
    ("model", 2, "Model: the outlined box layer 0"),
    ("variants", 5, "Compare: the model's squares and their sizes"),
    ("induction", 5, "Train: the strip \u2202L/\u2202s"),
]


def check(binary, lesson, page, size, theme):
    cmd = [binary, "--lesson", lesson, "--page", str(page), "--size", size, "--presentation", "--theme", theme,
           "--check-layout"]
    # The induction page trains its model to step 3,000 first: 75 s alone on two cores, twice that beside other tests.
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    return proc.returncode, [l for l in proc.stderr.splitlines() if l.startswith("layout: ")]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    a = p.parse_args()
    failed = 0
    for lesson, page, squeezed in PAGES:
        # The induction page trains its model first (over a minute each time): the layout sweep judges it at 1280x720.
        for theme in () if lesson == "induction" else ("dark", "light"):
            code, found = check(a.binary, lesson, page, "1280x720", theme)
            if code != 0 or found:
                failed += 1
                print("FAIL %s page %d (%s): %s" % (lesson, page, theme, "; ".join(found) or "exit %d" % code))
        code, found = check(a.binary, lesson, page, "1280x400", "dark")
        if not any(l.startswith("layout: " + squeezed) for l in found):
            failed += 1
            print("FAIL %s page %d at 1280x400: expected a finding \"%s...\", got: %s" %
                  (lesson, page, squeezed, "; ".join(found) or "none"))
        else:
            print("ok   %s page %d" % (lesson, page))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
