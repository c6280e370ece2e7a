#!/bin/bash
# The memory budget of models and training, on the real binary under a cap a regression would hit.
#   model_budget.sh BINARY TOKENS CAP_MB [asan]
# A model of 64 layers of 8 heads (d_model 64, 3 KB) run on TOKENS tokens: keeping every layer's heads held about
# 4.8 GiB at 1,024 tokens (1.2 GiB at 512); keeping none (what run does) it holds about 0.2 GiB. Training it at 1,024
# tokens would need about 10 GiB: it must be refused before the first step, not run into the cap. The cap is the
# address space (prlimit --as) in Release, the resident set under AddressSanitizer (which reserves terabytes of
# address space for its shadow, so RLIMIT_AS cannot be used there).
set -u
binary=$1 tokens=$2 cap_mb=$3 mode=${4:-prlimit}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

layers=""
for ((l = 0; l < 64; ++l)); do
  layers+="${layers:+,}{\"attention\":{\"heads\":8,\"head_dim\":8,\"mask\":\"causal\"}}"
done
printf '{"name":"deep","vocab":["a","b"],"d_model":64,"max_positions":4096,"positions":"none","norm":"none","layers":[%s]}' \
  "$layers" >"$dir/deep.json"
text="a"
for ((i = 1; i < tokens; ++i)); do text+=$((i % 2)); done
text=$(echo "$text" | sed 's/0/ a/g; s/1/ b/g')

# Two threads: each thread's heap reserves address space of its own, which a cap on the address space would count
# on a machine of many cores.
export OMP_NUM_THREADS=2
capped() {
  if [ "$mode" = asan ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=$cap_mb" "$@"
  else
    prlimit --as=$((cap_mb * 1024 * 1024)) "$@"
  fi
}

fail=0
capped "$binary" run "$dir/deep.json" --tokens "$text" >"$dir/run.out" 2>"$dir/run.err"
code=$?
if [ $code -ne 0 ] || ! grep -q "^deep: the 2 likeliest next tokens at each position$" "$dir/run.out"; then
  echo "FAIL: run of 64 layers on $tokens tokens under $cap_mb MB: exit $code"
  head -c 2000 "$dir/run.err"
  fail=1
fi
capped "$binary" train --task induction --seq-len 1024 --layers 64 --heads 8 --d-model 64 --steps 1 --batch 2 \
  >"$dir/train.out" 2>"$dir/train.err"
code=$?
if [ $code -ne 2 ] || ! grep -q "^attention-lab: train: training 64 layers on batches of 2 sequences of 1,024 tokens needs .* but the memory budget is .*; use --memory-budget, a smaller batch, shorter sequences or fewer layers$" "$dir/train.err" ||
  [ -s "$dir/train.out" ]; then
  echo "FAIL: train of 64 layers at 1,024 tokens under $cap_mb MB: exit $code (expected 2, refused before a step)"
  head -c 2000 "$dir/train.err"
  fail=1
fi
[ $fail -eq 0 ] && echo "ok: run within $cap_mb MB, train refused before its first step"
exit $fail
