#!/usr/bin/env bash
# A crash loses nothing: edit in the real window, wait for the autosave, kill the app (SIGKILL, no chance
# to clean up), start it again, and check that the edit is offered back.
# Usage (under xvfb-run): recovery_e2e.sh BINARY SCENARIO
set -euo pipefail
binary=$1
scenario=$2
export XDG_CONFIG_HOME=$(mktemp -d)
state=$(mktemp --suffix=.json)
pid=
trap 'rm -rf "$XDG_CONFIG_HOME" "$state"; [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true' EXIT
recovery="$XDG_CONFIG_HOME/attention-lab/recovery.json"
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }

start() {  # start the app and wait for its window
  "$binary" "$scenario" "$@" &
  pid=$!
  window=$(xdotool search --sync --all --onlyvisible --pid "$pid" --name "Attention Lab" | head -n 1)
  xdotool windowfocus --sync "$window" 2>/dev/null || xdotool windowfocus "$window"
  sleep 0.5
}

start
xdotool key --window "$window" ctrl+r  # re-seed the weights: the document now has unsaved changes
for _ in $(seq 60); do [[ -f "$recovery" ]] && break; sleep 0.1; done
[[ -f "$recovery" ]] || fail "no recovery file 6 s after an edit"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true

start --dump-state "$state"
# Nothing unsaved yet (the offer is unanswered): quits at once, maybe before xdotool sends the key release.
xdotool key --window "$window" ctrl+q 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "the second start did not quit on Ctrl+Q"
wait "$pid" || true
pid=
offered=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["recovery_offered"])' "$state")
seed=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scenario"]["seed"])' "$recovery")
[[ "$offered" == True && "$seed" == 8 ]] || fail "after SIGKILL the restart offered recovery=$offered, recovered seed=$seed (expected True, 8)"
echo "ok: the edit (seed 7 -> 8) survived SIGKILL and was offered back on the next start; the unanswered offer was kept"
echo "1 passed, 0 failed"
