#!/usr/bin/env bash
# The Compare view's measured trade-off in the window, and a converted model folder opened by it: on a tiny byte-level
# GPT-2 folder (byte_gpt2_folder.py), --measure on the sonnets and on the typed text at the projector's size (dark and
# light) with the layout check clean; then its layer 0 converted to mla by `convert --out`, opened and measured again.
# Usage (under xvfb-run): measured_tradeoff_e2e.sh BINARY FOLDER_WRITER
set -euo pipefail
binary=$1
writer=$2
work=$(mktemp -d)
export XDG_CONFIG_HOME=$(mktemp -d)  # never the user's settings
trap 'rm -rf "$work" "$XDG_CONFIG_HOME"' EXIT
/usr/bin/python3 "$writer" "$work/byte-gpt2"

check() {  # FOLDER TEXT THEME
  if ! out=$("$binary" --model "$1" --measure "$2" --size 1280x720 --presentation --theme "$3" --check-layout \
      --screenshot "$work/shot.png" 2>&1); then
    echo "FAIL --model $1 --measure $2 ($3): $out"
    exit 1
  fi
  [[ -s "$work/shot.png" ]] || { echo "FAIL: no capture for $1 $2"; exit 1; }
  rm -f "$work/shot.png"
}

check "$work/byte-gpt2" sonnets dark
check "$work/byte-gpt2" text light
# Layer 0 mla: the measurement converts the other layer.
"$binary" convert "$work/byte-gpt2" --to mla --latent-dim 4 --layers 0 --out "$work/byte-gpt2-mla" >/dev/null
check "$work/byte-gpt2-mla" text dark
# One token predicts nothing: refused, not a table of zeros.
if "$binary" --model "$work/byte-gpt2" --model-text "a" --measure text --screenshot "$work/shot.png" 2>"$work/err"; then
  echo "FAIL: a one-token text was measured"; exit 1
fi
grep -q "the text makes one token: a loss needs a next token to predict" "$work/err" || { echo "FAIL: $(cat "$work/err")"; exit 1; }
# Measuring needs a model folder: without one it is refused before the window opens.
if "$binary" --measure text --screenshot "$work/shot.png" 2>"$work/err"; then echo "FAIL: --measure without --model"; exit 1; fi
grep -q "are for --model FOLDER" "$work/err" || { echo "FAIL: $(cat "$work/err")"; exit 1; }
echo "measured trade-off: all checked"
