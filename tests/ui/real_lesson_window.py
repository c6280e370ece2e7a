#!/usr/bin/python3
"""The lesson "A real model" in the window, on the GPT-2 stand-in (real_model_standins.py).

Why this exists: the lesson's pages only say something once a model is open, and the Real model
view's layout changes with the model's heads and the lesson's column beside it. This writes the
GPT-2 stand-in (12 layers x 12 heads, GPT-2's tokenizer), checks that its planted heads are what
the view will find (`attention-lab run FOLDER --json`: a previous-token head in layer 4, induction
heads in layer 5, and the loss on the repeat far below the first copy's), then opens every page of
the lesson with `--model FOLDER --lesson real_model --page N --check-layout`: each capture must be
clean, a real frame (hundreds of colours) of the size asked for, show the page's text in the text
box and, on the last page, the top 3 induction heads knocked out (--dump-state's real_model). A few
pages are captured again presenting at 1280x720 and at 1600x900, and the last on the SmolLM2
stand-in (30 layers x 9 heads, 3 KV heads).

Run:  /usr/bin/python3 real_lesson_window.py --binary build/app/attention-lab --npm build/npm
          --work build/tests/real_lesson_window

Exit status: 0 all pass, 1 a failure, 77 the stand-in cannot be written (no node or npm for GPT-2's
tokenizer: CTest reports a skip).
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import png_info  # noqa: E402

SKIP = 77
TIMEOUT = 120
PAGES = 5
CAT = "The cat sat on the mat. The cat sat on the mat."
LAMPS = "Purple lamps eat quiet bridges. Purple lamps eat quiet bridges."
PAGE_TEXTS = [CAT, CAT, LAMPS, CAT, LAMPS]
# (page, size, presenting): every page at 1280x720, the busiest again where the room is different.
CAPTURES = ([(p, "1280x720", False) for p in range(1, PAGES + 1)] +
            [(3, "1280x720", True), (5, "1280x720", True), (3, "1600x900", False),
             (5, "1600x900", True)])
# SmolLM2's 30 layers of 9 heads (3 KV heads), where the grid scrolls.
SMOLLM2_CAPTURES = [(5, "1280x720", False), (5, "1280x720", True)]


def fail(message):
    print("FAIL: " + message, flush=True)
    return 1


def write_standin(work, npm):
    proc = subprocess.run([sys.executable, os.path.join(HERE, "real_model_standins.py"), "--out", work,
                           "--npm", npm], capture_output=True, text=True,
                          timeout=900)
    print(proc.stdout.strip(), flush=True)
    if proc.returncode not in (0, SKIP):
        print(proc.stderr.strip()[-2000:])
    return proc.returncode


def check_planted(binary, folder):
    """The stand-in's heads, as the lab finds them on the lesson's repeat."""
    proc = subprocess.run([binary, "run", folder, "--text", LAMPS, "--json"], capture_output=True,
                          text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        return ["run FOLDER exit %d: %s" % (proc.returncode, proc.stderr.strip()[-500:])]
    j = json.loads(proc.stdout)
    scores = {(s["layer"], s["head"]): s for s in j["head_scores"]}
    problems = []
    if not (scores[(4, 11)]["previous_token"] or 0) > 0.9:
        problems.append("head 4.11 is not a previous-token head: %s" % scores[(4, 11)])
    for head in ((5, 1), (5, 5), (5, 8)):
        if not (scores[head]["induction"] or 0) > 0.9:
            problems.append("head %d.%d is not an induction head: %s" % (head + (scores[head],)))
    # The repeat: the positions whose next token follows an earlier copy of their own token there too.
    ids, losses = j["ids"], j["token_losses"]
    at = [i for i in range(1, len(ids) - 1)
          if any(ids[k] == ids[i] and ids[k + 1] == ids[i + 1] for k in range(i))]
    rest = [i for i in range(len(losses)) if i not in at]
    if not at or not rest:
        return problems + ["the lesson's text has no repeat: %s" % j["tokens"]]
    repeat = sum(losses[i] for i in at) / len(at)
    first = sum(losses[i] for i in rest) / len(rest)
    if not repeat < first / 4:
        problems.append("the repeat's loss %.3f is not far below the first copy's %.3f" % (repeat, first))
    return problems


def capture(binary, folder, work, page, size, presenting):
    name = "%s_page%d_%s%s" % (os.path.basename(folder), page, size, "_presenting" if presenting else "")
    png, state = os.path.join(work, name + ".png"), os.path.join(work, name + ".json")
    command = [binary, "--model", folder, "--lesson", "real_model", "--page", str(page),
               "--size", size, "--check-layout", "--screenshot", png, "--dump-state", state]
    if presenting:
        command.append("--presentation")
    proc = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    problems = []
    if proc.returncode != 0:
        problems.append("exit %d: %s" % (proc.returncode, proc.stderr.strip()))
        return name, problems
    width, height, colours = png_info.distinct_colours(png)
    if "%dx%d" % (width, height) != size:
        problems.append("the capture is %dx%d" % (width, height))
    if colours < 100:
        problems.append("the capture is blank")
    with open(state, encoding="utf-8") as f:
        s = json.load(f)
    real = s.get("real_model") or {}
    found = {"view": s.get("view"), "lesson": s.get("lesson"), "lesson_page": s.get("lesson_page"),
             "text": real.get("text")}
    expected = {"view": "real", "lesson": "real_model", "lesson_page": page, "text": PAGE_TEXTS[page - 1]}
    ablated = real.get("ablated", "")
    if folder.endswith("gpt2"):  # the planted induction heads; SmolLM2's random ones are three of its own
        found["ablated"], expected["ablated"] = ablated, "5.1,5.5,5.8" if page == 5 else ""
    elif len([h for h in ablated.split(",") if h]) != (3 if page == 5 else 0):
        problems.append("ablated is %r" % ablated)
    for key, value in expected.items():
        if found[key] != value:
            problems.append("%s is %r, expected %r" % (key, found[key], value))
    return name, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--npm", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    written = write_standin(args.work, args.npm)
    if written != 0:
        return written if written == SKIP else fail("the stand-in was not written")
    gpt2, smollm2 = os.path.join(args.work, "gpt2"), os.path.join(args.work, "smollm2")
    failures = 0
    for problem in check_planted(args.binary, gpt2):
        failures += fail("stand-in: " + problem)
    for folder, page, size, presenting in ([(gpt2,) + c for c in CAPTURES] +
                                           [(smollm2,) + c for c in SMOLLM2_CAPTURES]):
        name, problems = capture(args.binary, folder, args.work, page, size, presenting)
        for problem in problems:
            failures += fail("%s: %s" % (name, problem))
        if not problems:
            print("ok %s" % name, flush=True)
    print("real model lesson: %d captures, %d failures" % (len(CAPTURES) + len(SMOLLM2_CAPTURES), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
