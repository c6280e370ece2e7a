#!/usr/bin/python3
"""The Real model view's captures that need no npm: the models this computer has, the pipeline on a head of GPT-2
small's width, and heads knocked out beside the model as trained.

Why this exists: a real model's matrices are hundreds of columns wide and its heads a dozen or more; the pipeline's
steps were laid out for the worked example's sizes (the output step once drew twelve 23x768 contributions a pixel
tall). This writes a Hugging Face cache (HF_HUB_CACHE) holding a byte-level GPT-2 folder of one layer of 12 heads at
n_embd 768 (byte_gpt2_folder.py --real-width), the tiny byte-level folder and a folder that cannot be opened, then
captures every pipeline step on head 1 of that layer (`--model FOLDER --layer 0 --head 1 --step S`), the model list
(`--view real` with nothing open) and two heads knocked out (`--ablate`), at 1280x720 normal and presenting and at
1600x900, light and dark. Each capture must exit 0 under --check-layout (nothing clipped, covered, faint or too
small), be a real frame of the size asked for, and --dump-state must say what is on screen: the view, the step and
head, the listed models and whether each opens, the heads knocked out.

Run:  /usr/bin/python3 real_model_captures.py --binary build/app/attention-lab --work build/tests/real_model_captures
Exit status: 0 all pass, 1 a failure.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import png_info  # noqa: E402

TIMEOUT = 120
TEXT = "The cat sat on the mat."
STEPS = ["inputs", "projections", "scores", "scale", "mask", "softmax", "weighted_sum", "head_outputs", "concat",
         "output"]
# (id, what the folder holds): the real-width GPT-2, the tiny one and one without weights.
MODELS = [("lab-test/broken", None), ("lab-test/byte-gpt2", []), ("lab-test/gpt2-real-width", ["--real-width"])]
ROOMS = [("1280x720", []), ("1280x720", ["--presentation"]), ("1600x900", []),
         ("1280x720", ["--presentation", "--theme", "light"])]


def fail(message):
    print("FAIL: " + message, flush=True)
    return 1


def write_cache(work):
    """A Hugging Face hub cache: models--ORG--NAME/snapshots/REV with refs/main naming REV."""
    hub = os.path.join(work, "hub")
    folders = {}
    for model_id, args in MODELS:
        repo = os.path.join(hub, "models--" + model_id.replace("/", "--"))
        snapshot = os.path.join(repo, "snapshots", "r1")
        os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
        with open(os.path.join(repo, "refs", "main"), "w") as f:
            f.write("r1")
        if args is None:  # a download that stopped after the config
            os.makedirs(snapshot, exist_ok=True)
            with open(os.path.join(snapshot, "config.json"), "w") as f:
                json.dump({"model_type": "gpt2", "n_embd": 8, "n_head": 2, "n_layer": 2, "vocab_size": 256}, f)
        else:
            subprocess.run([sys.executable, os.path.join(HERE, "byte_gpt2_folder.py"), snapshot] + args, check=True,
                           timeout=TIMEOUT)
        folders[model_id] = snapshot
    return hub, folders


def capture(binary, hub, work, name, args, size, room):
    """Runs the window once; returns (its --dump-state, problems)."""
    png, state = os.path.join(work, name + ".png"), os.path.join(work, name + ".json")
    env = dict(os.environ, HF_HUB_CACHE=hub)
    command = [binary] + args + room + ["--size", size, "--check-layout", "--screenshot", png, "--dump-state", state]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    if proc.returncode != 0:
        return None, ["exit %d: %s" % (proc.returncode, proc.stderr.strip())]
    problems = []
    width, height, colours = png_info.distinct_colours(png)
    if "%dx%d" % (width, height) != size:
        problems.append("the capture is %dx%d" % (width, height))
    if colours < 50:
        problems.append("the capture is blank (%d colours)" % colours)
    with open(state, encoding="utf-8") as f:
        return json.load(f), problems


def expect(found, expected):
    return ["%s is %r, expected %r" % (k, found.get(k), v) for k, v in expected.items() if found.get(k) != v]


def cases(folders):
    """(name, window arguments, what --dump-state must say)."""
    wide = folders["lab-test/gpt2-real-width"]
    listed = [{"id": m, "opens": args is not None} for m, args in MODELS]
    out = []
    for size, room in ROOMS:
        tag = size + "".join(a.strip("-") for a in room)
        out.append(("list_" + tag, ["--view", "real"], size, room,
                    {"view": "real", "real_model": None, "models_on_this_computer": listed}))
        out.append(("ablated_" + tag, ["--model", wide, "--model-text", TEXT, "--ablate", "0.1,0.5"], size, room,
                    {"view": "real", "real_model.ablated": "0.1,0.5"}))
        steps = range(len(STEPS)) if size == "1280x720" and len(room) < 2 else (2, 8, 9)
        for s in steps:
            out.append(("pipeline_%s_%s" % (STEPS[s], tag),
                        ["--model", wide, "--model-text", TEXT, "--layer", "0", "--head", "1", "--step", STEPS[s]],
                        size, room, {"view": "pipeline", "step": s, "head": 1, "real_model.folder": wide}))
    return out


def flatten(state):
    """--dump-state with real_model's keys as real_model.KEY beside the rest."""
    flat = dict(state)
    for k, v in (state.get("real_model") or {}).items():
        flat["real_model." + k] = v
    return flat


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    hub, folders = write_cache(args.work)
    failures, count = 0, 0
    for name, window_args, size, room, expected in cases(folders):
        count += 1
        state, problems = capture(args.binary, hub, args.work, name, window_args, size, room)
        if state is not None:
            problems += expect(flatten(state), expected)
        for problem in problems:
            failures += fail("%s: %s" % (name, problem))
        if not problems:
            print("ok " + name, flush=True)
    print("real model captures: %d captures, %d failures" % (count, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
