#!/usr/bin/env python3
"""The induction task's promise: an induction head forms within 3,000 steps, and assets/models/induction.json is what
the train command makes.

Trains the induction lesson's model (2 layers, 4 heads, d_model 64, learned positions, attention-only, vocabulary 64,
sequences of 32, batches of 32, AdamW lr 1e-3, seed 1) for 3,000 steps with the command the shipped model was made
with, then checks that
  - some head's induction score on the probe batch (repeats farther apart than any in training) is >= 0.3,
  - the evaluation batch (held-out distances too) is predicted: accuracy >= 0.9,
  - the loss shows the phase change: a plateau near ln(64) first, averaging under 0.05 over the last 100 steps,
  - the saved model is assets/models/induction.json: the same fields, every number within 1e-9 of it, relative to
    max(1, |number|) (--regenerate writes it instead). Not byte for byte: the last bits of 3,000 steps depend on the
    CPU's vector width (AVX2 and AVX-512 machines differ by 4e-12).
"""
import argparse
import json
import math
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "assets" / "models" / "induction.json"
COMMAND = ["train", "--task", "induction", "--layers", "2", "--heads", "4", "--d-model", "64", "--positions",
           "learned", "--norm", "pre", "--ffn", "none", "--vocab", "64", "--seq-len", "32", "--batch", "32",
           "--lr", "1e-3", "--seed", "1", "--steps", "3000", "--json"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def differs(made, shipped, path="model"):
    """Where made and shipped first differ by more than rounding, or None."""
    if isinstance(shipped, dict):
        if not isinstance(made, dict) or made.keys() != shipped.keys():
            return "%s: fields %s, expected %s" % (path, sorted(made) if isinstance(made, dict) else made,
                                                   sorted(shipped))
        return next((d for k in shipped for d in [differs(made[k], shipped[k], path + "." + k)] if d), None)
    if isinstance(shipped, list):
        if not isinstance(made, list) or len(made) != len(shipped):
            return "%s: %s, expected %d items" % (path, made if not isinstance(made, list) else len(made),
                                                  len(shipped))
        return next((d for i, (m, s) in enumerate(zip(made, shipped))
                     for d in [differs(m, s, "%s[%d]" % (path, i))] if d), None)
    if isinstance(shipped, float) and isinstance(made, (int, float)) and not isinstance(made, bool):
        if abs(made - shipped) <= 1e-9 * max(1.0, abs(shipped)):
            return None
    elif made == shipped:
        return None
    return "%s: %r, expected %r" % (path, made, shipped)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--regenerate", action="store_true", help="write assets/models/induction.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        saved = pathlib.Path(tmp) / "induction.json"
        run = subprocess.run([args.binary, *COMMAND, "--save", str(saved)], capture_output=True, text=True)
        if run.returncode != 0:
            fail("train exited %d: %s" % (run.returncode, run.stderr.strip()))
        report = json.loads(run.stdout)
        made = saved.read_bytes()
    losses = [s["loss"] for s in report["steps"]]
    if len(losses) != 3000:
        fail("expected 3000 steps but found %d" % len(losses))
    heads = report["eval"]["heads"]
    best = max(heads, key=lambda h: h["induction"])
    print("best induction head %d.%d: %.3f; evaluation accuracy %.3f, loss %.4f; %.1f s" %
          (best["layer"], best["head"], best["induction"], report["eval"]["accuracy"], report["eval"]["loss"],
           report["seconds"]))
    drop = next((i + 1 for i, l in enumerate(losses) if l < 1.0), None)
    print("the loss first falls under 1.0 at step %s" % drop)
    if best["induction"] < 0.3:
        fail("no induction head: the best score is %.3f (head %d.%d), expected >= 0.3" %
             (best["induction"], best["layer"], best["head"]))
    if report["eval"]["accuracy"] < 0.9:
        fail("evaluation accuracy %.3f, expected >= 0.9" % report["eval"]["accuracy"])
    if not (abs(losses[0] - math.log(64)) < 0.5 and losses[199] > 3.0):
        fail("expected a plateau near ln 64 = 4.16 first, found %.3f at step 1 and %.3f at step 200" %
             (losses[0], losses[199]))
    tail = sum(losses[-100:]) / 100
    if tail > 0.05:
        fail("expected the last 100 losses to average under 0.05, found %.4f" % tail)
    if args.regenerate:
        SHIPPED.write_bytes(made)
        print("wrote " + str(SHIPPED))
    else:
        where = differs(json.loads(made), json.loads(SHIPPED.read_bytes()))
        if where:
            fail("%s is not what `attention-lab %s` saves now (%s; run this script with --regenerate after a "
                 "deliberate change)" % (SHIPPED.relative_to(ROOT), " ".join(COMMAND), where))
    print("OK")


if __name__ == "__main__":
    main()
