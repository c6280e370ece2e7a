#!/usr/bin/env bash
# End to end through the real window: a class types its own sentence in its own script. Click at the end of the
# first token's field ("the"), type "猫cat" and "ネコ" (cat in Chinese, English and Japanese), press Enter, save
# with Ctrl+S, quit with Ctrl+Q, and check the tokens in --dump-state and in the saved file.
# The keys for 猫, ネ and コ are put into the display's keymap first, as an input method would provide them:
# xdotool's own way, remapping a spare key for each character and undoing it at once, races with the app
# reading the key. Enter and the shortcuts are held across frames, since ImGui 1.86 misses a press and release
# that both fall between two frames (a software-rendered frame on a busy machine can take a good part of a second).
# Usage (under xvfb-run): unicode_typing_e2e.sh BINARY SCENARIO
set -euo pipefail
binary=$1
scenario=$2
work=$(mktemp -d)
cp "$scenario" "$work/mine.json"  # saved over, so a copy
export XDG_CONFIG_HOME=$(mktemp -d)  # never the user's settings
trap 'rm -rf "$work" "$XDG_CONFIG_HOME"; kill "$pid" 2>/dev/null || true' EXIT

xkbcomp "$DISPLAY" "$work/keymap.xkb" 2>/dev/null
sed -i 's/key <FK20> {[^}]*};/key <FK20> { [ U732B ] };/; s/key <FK21> {[^}]*};/key <FK21> { [ U30CD ] };/; s/key <FK22> {[^}]*};/key <FK22> { [ U30B3 ] };/' "$work/keymap.xkb"
xkbcomp -w0 "$work/keymap.xkb" "$DISPLAY" 2>/dev/null

source "$(dirname "$0")/xdotool_press.sh"

"$binary" "$work/mine.json" --size 1600x900 --dump-state "$work/state.json" &
pid=$!
window=$(xdotool search --sync --all --onlyvisible --pid "$pid" --name "Attention Lab" | head -n 1)
xdotool windowfocus --sync "$window" 2>/dev/null || xdotool windowfocus "$window"
sleep 0.5  # a few frames, so the app has drawn before the mouse arrives
xdotool mousemove --window "$window" 200 229 click 1  # the first token's field at 1600x900, right of "the"
sleep 0.8
# Characters arrive through their own queue, which keeps every one: tapped, not held (held, they repeat).
xdotool key --delay 300 U732B c a t U30CD U30B3
sleep 1  # on a busy machine a frame can take longer than a key press: let the last character land before Enter
press Return
press ctrl s
press ctrl q 2>/dev/null || true  # the app may take its window before the release arrives
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then echo "FAIL: the app did not quit on Ctrl+Q (was the file saved?)"; exit 1; fi
wait "$pid" || true
tokens() { /usr/bin/python3 -c 'import json,sys; print(" | ".join(json.load(open(sys.argv[1], encoding="utf-8"))["tokens"]))' "$1"; }
in_app=$(tokens "$work/state.json")
in_file=$(tokens "$work/mine.json")
if [[ "$in_app" != "the猫catネコ | cat | sat" || "$in_file" != "$in_app" ]]; then
  echo "FAIL: expected the tokens the猫catネコ | cat | sat after typing and saving, found $in_app in the app, $in_file in the file"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "ok: typed 猫catネコ after the in a token field; the app and the saved file hold it exactly"
echo "1 passed, 0 failed"
