#!/bin/bash
# Output that cannot be written is noticed: every command with its standard output on a full device (/dev/full)
# exits 2 naming the reason; a file that cannot be written (a file size limit, a full file system) is exit 2 with
# the reason, and the good file before it stays whole with no temporary file beside it. The real binary, in real
# processes: the output is the process's own standard output.
# usage: output_failures.sh BINARY ASSETS_DIR
set -u
binary=$1
assets=$2
cat_sat=$assets/scenarios/the_cat_sat.json
tiny=$assets/models/tiny.json
source "$(dirname "${BASH_SOURCE[0]}")/../lib/output_checks.sh"

# expect_failure NAME EXPECTED_MESSAGE COMMAND...: exit 2 and the message on stderr.
expect_failure() {
  local name=$1 message=$2
  shift 2
  "$@" >/dev/null 2>"$work/err"
  local code=$?
  [ "$code" = 2 ] || fail "$name: exit $code, expected 2 (stderr: $(cat "$work/err"))"
  grep -qF -- "$message" "$work/err" || fail "$name: stderr does not say '$message': $(cat "$work/err")"
}

full_stdout() { "$@" >/dev/full; }

# Every command, its output on a device that is always full.
message="attention-lab: cannot write the output: No space left on device"
expect_failure "trace" "$message" full_stdout "$binary" trace "$cat_sat"
expect_failure "trace --json" "$message" full_stdout "$binary" trace "$cat_sat" --json
expect_failure "trace --markdown" "$message" full_stdout "$binary" trace "$cat_sat" --markdown
expect_failure "trace --latex" "$message" full_stdout "$binary" trace "$cat_sat" --latex
expect_failure "trace --help" "$message" full_stdout "$binary" trace --help
expect_failure "decode" "$message" full_stdout "$binary" decode "$cat_sat"
expect_failure "online" "$message" full_stdout "$binary" online "$cat_sat" --head 0 --row 0 --block 2
expect_failure "run" "$message" full_stdout "$binary" run "$tiny" --tokens "<s> a b"
expect_failure "kv" "$message" full_stdout "$binary" kv --preset llama-3-70b
expect_failure "train" "$message" full_stdout "$binary" train --task copy --steps 1 --batch 2
expect_failure "--help" "$message" full_stdout "$binary" --help
expect_failure "--version" "$message" full_stdout "$binary" --version

# A pipe whose reader has gone: reported, not a silent death by SIGPIPE.
( "$binary" trace "$cat_sat" --json 2>"$work/err"; echo $? >"$work/code" ) | true
[ "$(cat "$work/code")" = 2 ] || fail "closed pipe: exit $(cat "$work/code"), expected 2"
grep -qF "cannot write the output: Broken pipe" "$work/err" || fail "closed pipe: stderr $(cat "$work/err")"

# A file size limit (64 KiB): the trained model (about 800 KB) cannot be written; the model saved before stays.
echo '{"the": "good file"}' >"$work/model.json"
cp "$work/model.json" "$work/model.before"
(
  trap '' XFSZ
  ulimit -f 64
  exec "$binary" train --task copy --steps 1 --batch 2 --save "$work/model.json"
) >/dev/null 2>"$work/err"
code=$?
[ "$code" = 2 ] || fail "--save over the file size limit: exit $code, expected 2"
grep -qF "attention-lab: --save: cannot write $work/model.json: File too large" "$work/err" ||
  fail "--save over the file size limit: $(cat "$work/err")"
cmp -s "$work/model.json" "$work/model.before" || fail "--save over the file size limit changed the good file"
[ "$(ls -A "$work" | sort | tr '\n' ' ')" = "code err model.before model.json " ] ||
  fail "--save over the file size limit left $(ls -A "$work")"

# A full file system (a 64 KiB tmpfs: only where this may mount one, as root in a container that allows it).
if mount_small; then
  expect_failure "trace --json to a full disk" "attention-lab: cannot write the output: No space left on device" \
    sh -c "exec \"\$0\" trace \"\$1\" --json >\"\$2\"" "$binary" "$assets/scenarios/scale.json" \
    "$work/small/trace.json"
  rm -f "$work/small/trace.json"
  echo '{"the": "good file"}' >"$work/small/model.json"
  dd if=/dev/zero of="$work/small/filler" bs=1k count=1024 2>/dev/null  # fills what is left
  expect_failure "--save to a full disk" \
    "attention-lab: --save: cannot write $work/small/model.json: No space left on device" \
    "$binary" train --task copy --steps 1 --batch 2 --save "$work/small/model.json"
  cmp -s "$work/small/model.json" "$work/model.before" || fail "--save to a full disk changed the good file"
  [ "$(ls -A "$work/small" | sort | tr '\n' ' ')" = "filler model.json " ] ||
    fail "--save to a full disk left $(ls -A "$work/small")"
  expect_failure "--scenario to a full disk" "No space left on device" \
    "$binary" trace "$cat_sat" --scenario "$work/small/model.json"
  cmp -s "$work/small/model.json" "$work/model.before" || fail "--scenario to a full disk changed the good file"
else
  echo "note: no tmpfs could be mounted here; the full file system is checked through the file size limit only"
fi

finish "output failures: all reported"
