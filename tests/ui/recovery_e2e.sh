#!/usr/bin/env bash
# A crash loses nothing and restoring writes nowhere else: edit in the real window, wait for the autosave, kill
# the app (SIGKILL, no chance to clean up), start it again, and check what is offered and where it goes.
#   1. the edit is offered back on the next start;
#   2. A.json edited and killed, the next start on B.json in another folder: restoring (Enter) opens A's work,
#      Ctrl+S writes A.json and B.json is untouched;
#   3. the same with A.json changed on disk since: restored without a file, Ctrl+S writes neither file;
#   4. a recovery file that cannot be read is moved to recovery.json.unreadable, kept after a normal quit;
#   5. a file whose name is not UTF-8 is autosaved too, its path kept byte for byte;
#   6. two windows: B started while A runs is not offered A's work; A killed, the next start is offered it, and
#      Escape keeps it for later;
#   7. Ctrl+S over a file changed on disk since it was opened writes nothing: it asks.
# Each window keeps its own entry, recovery/window-<pid>.json; the recovery.json of earlier versions is still read.
# Usage (under xvfb-run): recovery_e2e.sh BINARY SCENARIO
set -euo pipefail
binary=$1
scenario=$2
export XDG_CONFIG_HOME=$(mktemp -d)
state=$(mktemp --suffix=.json)
work=$(mktemp -d)
pid=
pid_a=
trap 'rm -rf "$XDG_CONFIG_HOME" "$state" "$work"; for p in $pid $pid_a; do kill -9 "$p" 2>/dev/null; done; true' EXIT
entries="$XDG_CONFIG_HOME/attention-lab/recovery"
legacy="$XDG_CONFIG_HOME/attention-lab/recovery.json"
recovery=  # the entry of the window edited last
passed=0
fail() { echo "FAIL: $*"; echo "$passed passed, 1 failed"; exit 1; }
ok() { echo "ok: $*"; passed=$((passed + 1)); }
field() { /usr/bin/python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); [v := v[k] for k in sys.argv[2:]]; print(v)' "$@"; }

start() {  # start the app in folder $1 on the rest of the arguments, and wait for its window
  local folder=$1
  shift
  (cd "$folder" && exec "$binary" "$@") &
  pid=$!
  window=$(xdotool search --sync --all --onlyvisible --pid "$pid" --name "Attention Lab" | head -n 1)
  xdotool windowfocus --sync "$window" 2>/dev/null || xdotool windowfocus "$window"
  sleep 0.5
}
edit() {  # re-seed the weights (unsaved changes), wait for the autosave of this window's entry
  recovery="$entries/window-$pid.json"
  xdotool key --window "$window" ctrl+r
  for _ in $(seq 60); do [[ -f "$recovery" ]] && break; sleep 0.1; done
  [[ -f "$recovery" ]] || fail "no recovery entry 6 s after an edit"
}
edit_and_kill() {  # edit, SIGKILL
  edit
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
}
quit() {  # Ctrl+Q with nothing unsaved quits at once, maybe before xdotool sends the key release
  xdotool key --window "$window" ctrl+q 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "$1: the app did not quit on Ctrl+Q"
  wait "$pid" || true
  pid=
}
fresh_config() { rm -rf "$XDG_CONFIG_HOME/attention-lab"; }

wait_title() {  # the window's title once it holds TEXT, or as it is after 20 s (a sanitized window is slow)
  local title
  for _ in $(seq 200); do
    title=$(xdotool getwindowname "$window")
    [[ "$title" == *"$1"* ]] && break
    sleep 0.1
  done
  echo "$title"
}

# 1. Offered back.
start "$work" "$scenario"
edit_and_kill
start "$work" "$scenario" --dump-state "$state"
quit "the second start"
offered=$(field "$state" recovery_offered)
seed=$(field "$recovery" scenario seed)
[[ "$offered" == True && "$seed" == 8 ]] || fail "after SIGKILL the restart offered recovery=$offered, recovered seed=$seed (expected True, 8)"
ok "the edit (seed 7 -> 8) survived SIGKILL and was offered back on the next start; the unanswered offer was kept"

# 2. A's work restored while B is open: A is saved, B untouched.
mkdir -p "$work/a" "$work/b"
cp "$scenario" "$work/a/A.json"
cp "$scenario" "$work/b/B.json"
cp "$scenario" "$work/B.orig"
fresh_config
start "$work/a" A.json
edit_and_kill
[[ "$(field "$recovery" original)" == "$(realpath "$work/a/A.json")" ]] || fail "the recovery names $(field "$recovery" original), not A.json's full path"
start "$work/b" B.json --dump-state "$state"
xdotool key --window "$window" Return  # Restore them
title=$(wait_title "(A.json, recovered)")
[[ "$title" == *"(A.json, recovered)"* ]] || fail "the restored window is titled '$title', not after A.json (recovered)"
xdotool key --window "$window" ctrl+s
sleep 0.5
quit "after restoring and saving"
cmp -s "$work/b/B.json" "$work/B.orig" || fail "restoring A's work changed B.json"
[[ "$(field "$work/a/A.json" seed)" == 8 ]] || fail "Ctrl+S after restoring did not write A's work (seed 8) to A.json"
[[ "$(field "$state" file)" == "$(realpath "$work/a/A.json")" ]] || fail "the restored document's file is $(field "$state" file), not A.json"
[[ -n "$(ls "$entries"/*.json 2>/dev/null)" ]] && fail "a recovery entry stayed after its work was restored and saved"
ok "A's work restored while B.json was open opened on its own; Ctrl+S wrote A.json, B.json untouched"

# 3. A changed on disk since: restored without a file; Ctrl+S asks and writes neither file.
cp "$scenario" "$work/a/A.json"
fresh_config
start "$work/a" A.json
edit_and_kill
touch -d "@$(($(stat -c %Y "$work/a/A.json") + 5))" "$work/a/A.json"
cp -p "$work/a/A.json" "$work/A.changed"
start "$work/b" B.json
xdotool key --window "$window" Return
title=$(wait_title "(A.json, recovered)")
[[ "$title" == *"(A.json, recovered)"*"unsaved"* ]] || fail "the work of a changed A.json is titled '$title'"
xdotool key --window "$window" ctrl+s  # opens the Save dialog
sleep 1
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=
cmp -s "$work/a/A.json" "$work/A.changed" || fail "Ctrl+S wrote over A.json, changed on disk since the work began"
cmp -s "$work/b/B.json" "$work/B.orig" || fail "Ctrl+S wrote A's work into B.json"
ok "the work of an A.json changed since opened without a file: Ctrl+S wrote neither A.json nor B.json"

# 4. Unreadable: moved aside, kept through a normal quit.
recovery=$legacy  # as earlier versions left it
for garbage in '{"scenario": {"tokens": [' '' 'not json at all'; do
  fresh_config
  mkdir -p "$(dirname "$recovery")"
  printf '%s' "$garbage" > "$recovery"
  start "$work" "$scenario" --dump-state "$state"
  quit "with an unreadable recovery file"
  [[ -f "$recovery.unreadable" ]] || fail "the unreadable recovery file ('$garbage') was not kept as recovery.json.unreadable"
  [[ "$(cat "$recovery.unreadable")" == "$garbage" ]] || fail "recovery.json.unreadable is not the unreadable file's bytes"
  [[ -e "$recovery" ]] && fail "recovery.json is still there after it was moved aside"
  message=$(field "$state" message)
  [[ "$message" == *"could not be read"*"moved to $recovery.unreadable and kept there"* ]] ||
    fail "the status line says '$message'"
done
ok "three unreadable recovery files were moved to recovery.json.unreadable, kept after a normal quit, and said so"

# 5. A path that is not UTF-8: autosaved, named by its bytes, restored onto it.
bytes_file="$work/a/b"$'\xff'".json"
cp "$scenario" "$bytes_file"
fresh_config
start "$work/a" "$bytes_file"
edit_and_kill
kept=$(/usr/bin/python3 -c 'import json,sys; print(bytes(json.load(open(sys.argv[1]))["original"]).hex())' "$recovery")
[[ "$kept" == "$(printf '%s' "$(realpath "$bytes_file")" | od -An -tx1 | tr -d ' \n')" ]] ||
  fail "the recovery file names the original by bytes $kept, not by its path's"
start "$work/b" B.json
xdotool key --window "$window" Return
title=$(wait_title '(b\xff.json, recovered)')
[[ "$title" == *'(b\xff.json, recovered)'* ]] || fail "the work of b\\xff.json is titled '$title'"
xdotool key --window "$window" ctrl+s
sleep 0.5
quit "after restoring a file whose name is not UTF-8"
[[ "$(field "$bytes_file" seed)" == 8 ]] || fail "Ctrl+S did not write the restored work to b\\xff.json"
ok "a file whose name is not UTF-8 was autosaved, named by its bytes, restored and saved to it"

# 6. Two windows: a live window's work is not offered; once it is killed, it is, and Escape keeps it for later.
fresh_config
cp "$scenario" "$work/a/A.json"
start "$work/a" A.json
edit
pid_a=$pid
entry_a=$recovery
start "$work/b" B.json --dump-state "$state"
quit "the second window"
[[ "$(field "$state" recovery_offered)" == False ]] || fail "a window started while A ran was offered A's unsaved work"
[[ "$(field "$entry_a" original)" == "$(realpath "$work/a/A.json")" ]] || fail "A's entry no longer names A.json"
kill -9 "$pid_a"
wait "$pid_a" 2>/dev/null || true
pid_a=
start "$work/b" B.json --dump-state "$state"
xdotool key --window "$window" Escape  # Later: neither restored nor deleted
sleep 0.5
quit "after Escape on the offer"
[[ "$(field "$state" recovery_offered)" == False && "$(field "$state" file)" == B.json && "$(field "$state" unsaved)" == False ]] ||
  fail "Escape on the offer did not put it away unrestored"
[[ "$(field "$entry_a" scenario seed)" == 8 ]] || fail "Escape on the offer did not keep A's entry"
start "$work/b" B.json --dump-state "$state"
quit "the start after Escape"
[[ "$(field "$state" recovery_offered)" == True ]] || fail "A's work was not offered once A was killed"
ok "B started while A ran was not offered A's work; A killed, it was offered, and Escape kept it for later"

# 7. Saving over a file another program changed.
fresh_config
cp "$scenario" "$work/C.json"
start "$work" C.json
xdotool key --window "$window" ctrl+r
sleep 0.3
printf '{"changed": "by another program"}\n' > "$work/C.json"
cp "$work/C.json" "$work/C.outside"
xdotool key --window "$window" ctrl+s
sleep 0.5
title=$(xdotool getwindowname "$window")
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=
cmp -s "$work/C.json" "$work/C.outside" || fail "Ctrl+S wrote over C.json, changed by another program since it was opened"
[[ "$title" == *"(C.json)"*"unsaved"* ]] || fail "after Ctrl+S over a changed C.json the window is titled '$title'"
ok "Ctrl+S over a C.json changed on disk since it was opened wrote nothing and left the work unsaved"
echo "$passed passed, 0 failed"
