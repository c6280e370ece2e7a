#!/usr/bin/env bash
# Fuzzes the scenario loader and what a loaded scenario goes through (fuzz/fuzz_scenario_body.cpp), and the
# readers of settings, recovery, lessons, presets and batches files (fuzz/fuzz_files.cpp: an input's first byte
# picks one), with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer, for a bounded time.
#   scripts/fuzz.sh [--seconds N] [--jobs J] [--build DIR]
#     --seconds N  how long each fuzzing job runs (default 60)
#     --jobs J     parallel fuzzing processes (default 1; at most the number of cores)
#     --build DIR  use this Clang build, configured with -DATTN_FUZZ=ON (scripts/test.sh passes its
#                  sanitizer build), instead of configuring build-fuzz/
# Builds build-fuzz/ with Clang (only the fuzz_scenario target), seeds a working corpus under
# build-fuzz/corpus/ (kept between runs, never committed) from assets/scenarios, assets/models, the lessons and
# presets (each after its reader's byte), tests/data/bad and tests/corpus, and fuzzes. Exit 0: nothing found.
# Exit 1: every crash, OOM or timeout found is copied into tests/corpus/ under a name that says what it shows,
# and the files to look at are printed.
# Reproduce one with: build-fuzz/fuzz/fuzz_scenario FILE  (or build-fuzzhelper/fuzz/fuzz_regression FILE)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build-fuzz"
SECONDS_PER_JOB=60
JOBS=1

while (($#)); do
  case "$1" in
    --seconds) SECONDS_PER_JOB=${2:?--seconds needs a number}; shift 2 ;;
    --jobs) JOBS=${2:?--jobs needs a number}; shift 2 ;;
    --build) BUILD=$(cd "${2:?--build needs a directory}" && pwd); CONFIGURED=1; shift 2 ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $SECONDS_PER_JOB =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds must be a positive integer" >&2; exit 2; }
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --jobs must be a positive integer" >&2; exit 2; }
((JOBS <= $(nproc))) || { echo "fuzz.sh: --jobs $JOBS is more than the $(nproc) cores" >&2; exit 2; }

# Clang and its libFuzzer runtime, from Debian (the other packages come from scripts/setup.sh).
have_libfuzzer() {
  command -v clang >/dev/null && command -v clang++ >/dev/null &&
    [[ -f "$(clang -print-resource-dir)/lib/linux/libclang_rt.fuzzer-x86_64.a" ]]
}
if ! have_libfuzzer; then
  source "$ROOT/scripts/packages.sh"
  install_packages clang libclang-rt-14-dev
  have_libfuzzer || { echo "fuzz.sh: libclang_rt.fuzzer still not found after installing" >&2; exit 1; }
fi

if [[ -z ${CONFIGURED:-} ]]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -DATTN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$BUILD" -j "$(nproc)" --target fuzz_scenario
FUZZER="$BUILD/fuzz/fuzz_scenario"

# The working corpus grows from run to run; the seeds are copied in every time (never over a file).
CORPUS="$BUILD/corpus"
ARTIFACTS="$BUILD/artifacts"
RUN="$BUILD/run"
mkdir -p "$CORPUS" "$ARTIFACTS" "$RUN"
rm -f "$ARTIFACTS"/* "$RUN"/fuzz-*.log
for seed in "$ROOT"/assets/scenarios/*.json "$ROOT"/assets/models/*.json "$ROOT"/tests/data/bad/* "$ROOT"/tests/corpus/*; do
  [[ -f $seed ]] && cp -n "$seed" "$CORPUS/"
done
# The other readers take the file after one byte that picks them (fuzz/fuzz_scenario_body.h): l lesson, p presets.
for seed in "$ROOT"/assets/lessons/*.json "$ROOT"/assets/presets/*.json; do
  reader=l; [[ $seed == */presets/* ]] && reader=p
  target="$CORPUS/$reader-$(basename "$seed")"
  [[ -e $target ]] || { printf '%s' "$reader"; cat "$seed"; } >"$target"
done

# libFuzzer adds every reduced input beside the one it replaces: past 4000 files, keep only the inputs that
# cover something (a merge into a fresh directory), or loading the corpus eats the run.
if (($(ls "$CORPUS" | wc -l) > 4000)); then
  echo "Minimising the working corpus ($(ls "$CORPUS" | wc -l) files)"
  rm -rf "$CORPUS.min" && mkdir -p "$CORPUS.min"
  "$FUZZER" -merge=1 -max_len=16384 -rss_limit_mb=2048 -timeout=10 "$CORPUS.min" "$CORPUS" >"$RUN/merge.log" 2>&1
  rm -rf "$CORPUS" && mv "$CORPUS.min" "$CORPUS"
fi

# -max_len: the largest shipped scenario (scale.json) is 9 KiB; 16 KiB leaves room for a few thousand more numbers.
# -rss_limit_mb (also the largest single malloc): a scenario within the limits of core/scenario.h should
# never need more. -timeout: seconds for one input.
FLAGS=(-max_total_time="$SECONDS_PER_JOB" -rss_limit_mb=2048 -timeout=10 -max_len=16384
       -dict="$ROOT/fuzz/json.dict" -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 -report_slow_units=5)
echo "Fuzzing for ${SECONDS_PER_JOB}s with $JOBS job(s); corpus $CORPUS ($(ls "$CORPUS" | wc -l) files)"
cd "$RUN"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
if ((JOBS == 1)); then
  timeout $((SECONDS_PER_JOB + 300)) "$FUZZER" "${FLAGS[@]}" "$CORPUS" >"$RUN/fuzz-0.log" 2>&1 || status=$?
else
  timeout $((SECONDS_PER_JOB + 300)) "$FUZZER" "${FLAGS[@]}" -jobs="$JOBS" -workers="$JOBS" "$CORPUS" \
    >"$RUN/parent.log" 2>&1 || status=$?
fi
# The logs are long (stats lines, the recommended dictionary): show the last progress line, any report
# (from the first "==" or "ERROR" line, 60 lines) and the final statistics of each job.
for log in "$RUN"/fuzz-*.log; do
  echo "== $log"
  grep -E '^#[0-9]+' "$log" | tail -n 1 || true
  report=$(grep -m1 -n -E '^==[0-9]+==|ERROR:|invariant broken|runtime error' "$log" | cut -d: -f1 || true)
  if [[ -n $report ]]; then sed -n "${report},+60p" "$log"; fi
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" | sort -u || true
done

# A short name for what an artifact shows, from the log that wrote it.
describe() {
  local log=$1 line
  first() { grep -m1 -oE "$1" "$log" | sed -E "s/$2//"; }
  line=$(first 'invariant broken: .*' '^invariant broken: ') && [[ -n $line ]] && { echo "invariant-$line"; return; }
  line=$(first 'runtime error: .*' '^runtime error: ') && [[ -n $line ]] && { echo "ubsan-$line"; return; }
  line=$(first 'ERROR: AddressSanitizer: [a-z-]+' '^ERROR: AddressSanitizer: ') && [[ -n $line ]] && { echo "asan-$line"; return; }
  line=$(first "throwing an instance of '[^']+'" "^throwing an instance of ") && [[ -n $line ]] && { echo "uncaught-$line"; return; }
  line=$(first 'out-of-memory \((malloc\([0-9]+\)|used: [0-9]+Mb)' '^out-of-memory ') && [[ -n $line ]] && { echo "oom-$line"; return; }
  grep -q 'ERROR: libFuzzer: timeout' "$log" && { echo "timeout"; return; }
  first 'ERROR: libFuzzer: [a-z-]+' '^ERROR: libFuzzer: ' | grep . || echo "unknown"
}
slug() { tr -c 'A-Za-z0-9\n' '_' | tr -s '_' | cut -c1-60 | sed 's/^_//; s/_$//' | tr 'A-Z' 'a-z'; }

found=()
for artifact in "$ARTIFACTS"/crash-* "$ARTIFACTS"/oom-* "$ARTIFACTS"/timeout-* "$ARTIFACTS"/leak-*; do
  [[ -f $artifact ]] || continue
  name=$(basename "$artifact")
  log=$(grep -l -F "$name" "$RUN"/fuzz-*.log | head -n1 || true)
  what=$( ([[ -n $log ]] && describe "$log" || echo "${name%%-*}") | slug)
  target="$ROOT/tests/corpus/fuzz-${what}-$(sha1sum "$artifact" | cut -c1-8).json"
  cp "$artifact" "$target"
  found+=("$target|${log:-no log}")
done
if ((${#found[@]})); then
  echo
  echo "fuzz.sh: the fuzzer found ${#found[@]} problem(s). Inputs copied into tests/corpus/:"
  for f in "${found[@]}"; do echo "  ${f%%|*}    (log: ${f#*|})"; done
  echo "Reproduce: $FUZZER FILE   Reduce: $FUZZER -minimize_crash=1 -runs=20000 FILE"
  exit 1
fi
if ((status != 0)); then
  echo "fuzz.sh: the fuzzer exited with status $status without leaving an input (see $RUN/fuzz-*.log)" >&2
  exit 1
fi
echo "fuzz.sh: nothing found in ${SECONDS_PER_JOB}s x $JOBS job(s)"
