#!/usr/bin/python3
"""A handful of window captures compared with the reference pictures kept in tests/ui/reference/.

The other window tests check that a capture is drawn, not what it shows; these fail when a number in a cell, a
label or a layout changes. A pixel differs when one of its channels moved by more than TOLERANCE (anti-aliasing may
vary by a few levels between machines); a capture fails when more than ALLOWED pixels differ, so a digit changed or
everything moved by one pixel fails. Before comparing, the script shows that its own comparison fails on both: a
reference shifted by one pixel, and a capture of "the cat sat" with one embedding changed by 0.01.

When a change to the pictures is meant: run with --update, look at every picture it writes, and commit them.
Run under xvfb-run; CTest does.

Usage: reference_captures.py --binary PATH --assets DIR --out DIR [--update]
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_info import read_png  # noqa: E402

REFERENCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference")
TOLERANCE = 24  # levels of 255 a channel may move
ALLOWED = 8     # pixels that may differ by more
SIZE = "1280x720"


def cases(assets):
    """(name, arguments): what a class sees most, each as the window draws it. The scenario's path as the status line
    writes it, from the assets' parent folder (capture's working folder), whichever folder the clone is in."""
    cat = os.path.join(os.path.basename(os.path.normpath(assets)), "scenarios", "the_cat_sat.json")
    return [
        # Presenting: the inputs panel, which writes the last recompute's time, is hidden.
        ("cat_sat_softmax_cell", [cat, "--step", "softmax", "--cell", "1,2", "--presentation"]),
        ("lesson_presentation", [cat, "--lesson", "the_cat_sat", "--page", "5", "--presentation"]),
        ("memory_view", [cat, "--view", "memory", "--preset", "llama-3-70b", "--presentation"]),
        ("model_view", [cat, "--view", "model", "--presentation"]),
        ("gallery", [cat, "--gallery"]),
    ]


def capture(binary, assets, arguments, out):
    # The budget as a number: by default it is a share of the machine's memory, and the views write it.
    cmd = [os.path.abspath(binary)] + arguments + ["--memory-budget", "3G", "--screenshot", os.path.abspath(out),
                                                  "--size", SIZE]
    config = os.path.join(os.path.dirname(os.path.abspath(out)), "config")  # never the user's settings
    env = dict(os.environ, XDG_CONFIG_HOME=config)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env,
                          cwd=os.path.dirname(os.path.normpath(os.path.abspath(assets))))
    if proc.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), proc.returncode, proc.stderr.strip()))


def pixels(path):
    width, height, rows, channels = read_png(path)
    return np.frombuffer(b"".join(rows), np.uint8).reshape(height, width, channels)[:, :, :3].astype(np.int16)


def differing(a, b):
    """How many pixels of two pictures differ by more than TOLERANCE in a channel (all, if their sizes differ)."""
    if a.shape != b.shape:
        return max(a.shape[0] * a.shape[1], b.shape[0] * b.shape[1])
    return int(np.count_nonzero(np.abs(a - b).max(axis=2) > TOLERANCE))


def altered_cat_sat(assets, out_dir):
    """"the cat sat" with its first embedding's first value 0.01 larger: every later number moves a little."""
    with open(os.path.join(assets, "scenarios", "the_cat_sat.json"), encoding="utf-8") as f:
        scenario = json.load(f)
    scenario["embeddings"][0][0] += 0.01
    path = os.path.join(out_dir, "the_cat_sat_altered.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(scenario, f)
    return path


def comparison_can_fail(binary, assets, out_dir):
    """Problems with the comparison itself: a one-pixel shift and a changed number must both fail it."""
    problems = []
    name, arguments = cases(assets)[0]
    reference = pixels(os.path.join(REFERENCE_DIR, name + ".png"))
    shifted = np.roll(reference, 1, axis=1)
    if differing(reference, shifted) <= ALLOWED:
        problems.append("a one-pixel shift of %s passes the comparison" % name)
    altered = os.path.join(out_dir, name + "_altered.png")
    capture(binary, assets, [os.path.abspath(altered_cat_sat(assets, out_dir))] + arguments[1:], altered)
    n = differing(reference, pixels(altered))
    if n <= ALLOWED:
        problems.append("%s with an embedding changed by 0.01 passes the comparison (%d pixels differ)" % (name, n))
    else:
        print("ok   a changed embedding fails the comparison: %d pixels differ" % n)
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--assets", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--update", action="store_true", help="write the references from this build's captures")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.update:
        os.makedirs(REFERENCE_DIR, exist_ok=True)
        for name, arguments in cases(a.assets):
            capture(a.binary, a.assets, arguments, os.path.join(REFERENCE_DIR, name + ".png"))
            print("wrote %s: look at it before committing" % os.path.join(REFERENCE_DIR, name + ".png"))
        return 0
    failed = comparison_can_fail(a.binary, a.assets, a.out)
    for problem in failed:
        print("FAIL " + problem)
    for name, arguments in cases(a.assets):
        out = os.path.join(a.out, name + ".png")
        capture(a.binary, a.assets, arguments, out)
        n = differing(pixels(os.path.join(REFERENCE_DIR, name + ".png")), pixels(out))
        if n > ALLOWED:
            failed.append(name)
            print("FAIL %-22s %d pixels differ from tests/ui/reference/%s.png (see %s)" % (name, n, name, out))
        else:
            print("ok   %-22s %d pixels differ" % (name, n))
    print("reference captures: %d compared, %d failed" % (len(cases(a.assets)), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
