#!/usr/bin/env bash
# End to end through the real window: a class types its own sentence into the Real model view. On a tiny byte-level
# GPT-2 folder (byte_gpt2_folder.py), click the text box, select all, type "the cat", right-click head 1.1's tile to
# knock it out, click head 0.0's tile to open layer 0 in the pipeline (the window's title names it), quit with Ctrl+Q,
# and check in --dump-state that the text was tokenized and computed (the model's pieces) and the head knocked out.
# Keys are held across frames, since ImGui 1.86 misses a press and release that both fall between two frames.
# Usage (under xvfb-run): real_model_typing_e2e.sh BINARY FOLDER_WRITER
set -euo pipefail
binary=$1
writer=$2
work=$(mktemp -d)
export XDG_CONFIG_HOME=$(mktemp -d)  # never the user's settings
trap 'rm -rf "$work" "$XDG_CONFIG_HOME"; kill "$pid" 2>/dev/null || true' EXIT
/usr/bin/python3 "$writer" "$work/byte-gpt2"

source "$(dirname "$0")/xdotool_press.sh"

"$binary" --model "$work/byte-gpt2" --model-text "ab" --size 1600x900 --dump-state "$work/state.json" &
pid=$!
window=$(xdotool search --sync --all --onlyvisible --pid "$pid" --name "Attention Lab" | head -n 1)
xdotool windowfocus --sync "$window" 2>/dev/null || xdotool windowfocus "$window"
sleep 1  # a few frames (slow under the sanitizers), so the app has drawn before the mouse arrives
xdotool mousemove --window "$window" 880 103 click 1  # the text box at 1600x900
sleep 0.8
press ctrl a
xdotool type --delay 300 "the cat"
sleep 3  # tokenized and computed on the worker
xdotool mousemove --window "$window" 1119 692 click 3  # head 1.1's tile: knocked out
sleep 2
xdotool mousemove --window "$window" 879 451 click 1  # head 0.0's tile: layer 0 in the pipeline
sleep 1.5
title=$(xdotool getwindowname "$window")  # quitting ends the visit, so the dump cannot show it: the title does
press ctrl q 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then echo "FAIL: the app did not quit on Ctrl+Q"; exit 1; fi
wait "$pid" || true
found=$(/usr/bin/python3 - "$work/state.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1], encoding="utf-8"))
r = s["real_model"] or {}
print("%s | %s | %s" % (r.get("text"), " ".join(r.get("pieces", [])), r.get("ablated")))
PY
)
found="$found | $title"
expected="the cat | t h e ␣ c a t | 1.1 | Attention Lab — byte-gpt2, layer 0"
if [[ "$found" != "$expected" ]]; then
  echo "FAIL: expected $expected"
  echo "              found $found"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "ok: typed \"the cat\" into the Real model view, knocked out head 1.1, opened layer 0 in the pipeline"
echo "1 passed, 0 failed"
