#!/usr/bin/env bash
# The Compare view's measured trade-off in the window, and a converted model folder opened by it: on a tiny byte-level
# GPT-2 folder (byte_gpt2_folder.py), --measure on the sonnets and on the typed text at 1280x720, presenting and not,
# dark and light, with the layout check clean; then its layer 0 converted to mla by `convert --out`, opened and
# measured again; the real-model lesson's measuring page; a conversion opened in memory (--to), as a point of the
# table opens it.
# Usage (under xvfb-run): measured_tradeoff_e2e.sh BINARY FOLDER_WRITER
set -euo pipefail
binary=$1
writer=$2
work=$(mktemp -d)
export XDG_CONFIG_HOME=$(mktemp -d)  # never the user's settings
trap 'rm -rf "$work" "$XDG_CONFIG_HOME"' EXIT
/usr/bin/python3 "$writer" "$work/byte-gpt2"

check() {  # FOLDER TEXT THEME [--presentation]
  if ! out=$("$binary" --model "$1" --measure "$2" --size 1280x720 ${4:-} --theme "$3" --check-layout \
      --screenshot "$work/shot.png" 2>&1); then
    echo "FAIL --model $1 --measure $2 ($3): $out"
    exit 1
  fi
  [[ -s "$work/shot.png" ]] || { echo "FAIL: no capture for $1 $2"; exit 1; }
  rm -f "$work/shot.png"
}

check "$work/byte-gpt2" sonnets dark --presentation
check "$work/byte-gpt2" sonnets dark
check "$work/byte-gpt2" text light --presentation
# Layer 0 mla: the measurement converts the other layer.
"$binary" convert "$work/byte-gpt2" --to mla --latent-dim 4 --layers 0 --out "$work/byte-gpt2-mla" >/dev/null
check "$work/byte-gpt2-mla" text dark --presentation
# The lesson's page on it, presenting at the projector's size and at 1600x900: measured, the layout check clean.
page() {  # SIZE THEME [--presentation]
  if ! out=$("$binary" --model "$work/byte-gpt2" --lesson real_model --page 6 --size "$1" --theme "$2" ${3:-} \
      --check-layout --screenshot "$work/shot.png" --dump-state "$work/state.json" 2>&1); then
    echo "FAIL: the lesson's measuring page at $1 $2 ${3:-}: $out"
    exit 1
  fi
  grep -q '"view": *"compare"' "$work/state.json" || { echo "FAIL: page 6 is not on the Compare view"; exit 1; }
}
page 1280x720 dark --presentation
page 1600x900 light
# A point opened from the command line as from the table: the Real model view on the model converted in memory.
"$binary" --model "$work/byte-gpt2" --to gqa --kv-heads 1 --size 1280x720 --check-layout \
  --screenshot "$work/shot.png" --dump-state "$work/state.json" >/dev/null
grep -q '"model": *"byte-gpt2 as mqa"' "$work/state.json" || { echo "FAIL: --to gqa: $(cat "$work/state.json")"; exit 1; }
if "$binary" --model "$work/byte-gpt2" --to gqa --kv-heads 3 --screenshot "$work/shot.png" 2>"$work/err"; then
  echo "FAIL: 3 key/value heads of 2 were made"; exit 1
fi
grep -q "kv-heads: must divide the 2 key/value heads of layer 0 (1, 2) but found 3" "$work/err" || { echo "FAIL: $(cat "$work/err")"; exit 1; }
# One token predicts nothing: refused, not a table of zeros.
if "$binary" --model "$work/byte-gpt2" --model-text "a" --measure text --screenshot "$work/shot.png" 2>"$work/err"; then
  echo "FAIL: a one-token text was measured"; exit 1
fi
grep -q "the text makes one token: a loss needs a next token to predict" "$work/err" || { echo "FAIL: $(cat "$work/err")"; exit 1; }
# Measuring needs a model folder: without one it is refused before the window opens.
if "$binary" --measure text --screenshot "$work/shot.png" 2>"$work/err"; then echo "FAIL: --measure without --model"; exit 1; fi
grep -q "are for --model FOLDER" "$work/err" || { echo "FAIL: $(cat "$work/err")"; exit 1; }
echo "measured trade-off: all checked"
