#!/bin/bash
# The window's own outputs: --screenshot and --dump-state are checked before the window opens (a missing folder is
# exit 2 at once), a screenshot that does not fit on the disk is exit 2 with the reason and leaves no truncated PNG
# (a 64 KiB tmpfs, where one can be mounted), and --dump-state of a document whose path is not UTF-8 writes valid
# JSON with the path's byte escaped; neither writes over what the window reads without being told (the shipped
# scenario and model, the open lesson: files of the assets folder). Run under xvfb-run.
# usage: output_files_e2e.sh BINARY SCENARIO
set -u
binary=$1
scenario=$2
source "$(dirname "${BASH_SOURCE[0]}")/../lib/output_checks.sh"

"$binary" "$scenario" --screenshot "$work/missing/shot.png" --size 640x480 2>"$work/err"
code=$?
[ "$code" = 2 ] || fail "--screenshot to a missing folder: exit $code, expected 2"
grep -qF "attention-lab: --screenshot: cannot write $work/missing/shot.png: the folder $work/missing does not exist" \
  "$work/err" || fail "--screenshot to a missing folder: $(cat "$work/err")"

"$binary" "$scenario" --screenshot "$work/shot.png" --dump-state "$work/missing/state.json" --size 640x480 \
  2>"$work/err"
code=$?
[ "$code" = 2 ] || fail "--dump-state to a missing folder: exit $code, expected 2"
grep -qF "does not exist" "$work/err" || fail "--dump-state to a missing folder: $(cat "$work/err")"
[ ! -e "$work/shot.png" ] || fail "--dump-state to a missing folder: the window ran and wrote its screenshot"

cp "$scenario" "$work/b$(printf '\377').json"
"$binary" "$work/b$(printf '\377').json" --screenshot "$work/shot.png" --dump-state "$work/state.json" \
  --size 640x480 2>"$work/err"
code=$?
[ "$code" = 0 ] || fail "a document whose path is not UTF-8: exit $code, expected 0 ($(cat "$work/err"))"
python3 - "$work/state.json" "$work" <<'PY' || fail "--dump-state of a path that is not UTF-8"
import json, sys
state = json.load(open(sys.argv[1]))
expected = sys.argv[2] + "/b\\xff.json"
if state["file"] != expected:
    sys.exit("file is %r, expected %r" % (state["file"], expected))
PY

# The files the window reads by default, in a copy of the assets folder: refused, and left as they were.
fa="$work/fa"
cp -r "$(dirname "$(dirname "$scenario")")" "$fa"
implicit() {  # implicit TARGET EXPECTED-MESSAGE OPTIONS...
  local target=$1 expected=$2
  shift 2
  local before
  before=$(md5sum <"$target")
  ATTENTION_LAB_ASSETS="$fa" XDG_CONFIG_HOME="$work/cfg" "$binary" "$@" --size 640x480 2>"$work/err"
  local code=$?
  [ "$code" = 2 ] || fail "$* : exit $code, expected 2"
  grep -qF "$expected" "$work/err" || fail "$* : $(cat "$work/err")"
  [ "$(md5sum <"$target")" = "$before" ] || fail "$* : $target was written over"
}
tail_words=": write to another file (nothing was written)"
implicit "$fa/models/tiny.json" \
  "attention-lab: --screenshot: $fa/models/tiny.json is also the model this command reads$tail_words" \
  --view model --screenshot "$fa/models/tiny.json"
implicit "$fa/scenarios/the_cat_sat.json" \
  "attention-lab: --dump-state: $fa/scenarios/the_cat_sat.json is also the scenario this command reads$tail_words" \
  --screenshot "$work/x.png" --dump-state "$fa/scenarios/the_cat_sat.json"
implicit "$fa/lessons/3_masks.json" \
  "attention-lab: --dump-state: $fa/lessons/3_masks.json is in the assets folder ($fa) the lab reads$tail_words" \
  --lesson masks --screenshot "$work/x.png" --dump-state "$fa/lessons/3_masks.json"
[ ! -e "$work/x.png" ] || fail "an output over a default input: the window ran and wrote its screenshot"

if mount_small; then
  "$binary" "$scenario" --screenshot "$work/small/shot.png" --size 1280x720 2>"$work/err"
  code=$?
  [ "$code" = 2 ] || fail "--screenshot to a full disk: exit $code, expected 2"
  grep -qF "attention-lab: --screenshot: cannot write $work/small/shot.png: No space left on device" "$work/err" ||
    fail "--screenshot to a full disk: $(cat "$work/err")"
  [ -z "$(ls -A "$work/small")" ] || fail "--screenshot to a full disk left $(ls -A "$work/small")"
else
  echo "note: no tmpfs could be mounted here; the full disk is not tried"
fi

finish "window outputs: all checked"
