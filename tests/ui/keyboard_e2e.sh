#!/usr/bin/env bash
# End to end through the real window: start the app on a virtual display, press → three times and
# Ctrl+Q with xdotool, and check from --dump-state that the app stepped from 0 to 3 (scale) and quit.
# Usage (under xvfb-run): keyboard_e2e.sh BINARY SCENARIO
set -euo pipefail
binary=$1
scenario=$2
state=$(mktemp --suffix=.json)
export XDG_CONFIG_HOME=$(mktemp -d)  # never the user's settings
trap 'rm -rf "$state" "$XDG_CONFIG_HOME"; kill "$pid" 2>/dev/null || true' EXIT

"$binary" "$scenario" --dump-state "$state" &
pid=$!
window=$(xdotool search --sync --all --onlyvisible --pid "$pid" --name "Attention Lab" | head -n 1)
xdotool windowfocus --sync "$window" 2>/dev/null || xdotool windowfocus "$window"
sleep 0.5  # a few frames, so the app has drawn before keys arrive
for key in Right Right Right; do
  xdotool key --window "$window" "$key"
  sleep 0.2
done
# The app may quit on the key press and take its window before the release is sent (BadWindow): whether it
# quit is checked below, not by xdotool's exit status.
xdotool key --window "$window" ctrl+q 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then echo "FAIL: the app did not quit on Ctrl+Q"; exit 1; fi
wait "$pid"
step=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["step"])' "$state")
name=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["step_name"])' "$state")
if [[ "$step" != 3 || "$name" != scale ]]; then
  echo "FAIL: expected step 3 (scale) after three presses of Right, found $step ($name)"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "ok: three Right presses moved the app to step 3 (scale), Ctrl+Q quit it"
echo "1 passed, 0 failed"
