#!/usr/bin/env bash
# Builds Attention Lab and runs every test through CTest, twice:
#   1. the Release build in build/: unit tests, scenario files, the fuzz corpus, the NumPy cross-check, and
#      the window under Xvfb (captures, typed keys, crash recovery, the 2000-action soak);
#   2. a Clang build with AddressSanitizer and UndefinedBehaviorSanitizer (and Eigen's index checks) in
#      build-sanitize/: the same suite, then the libFuzzer target over the loader and the engine for 35 s.
#   scripts/test.sh           both (what CI runs)
#   scripts/test.sh --quick   only the first, while developing
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
# Node and npm run the tokenizer's references (tests/crosscheck/tokenizer_crosscheck.py installs them from npm into
# the build folder). A machine with another vendor's nodejs has npm already, and Debian's npm would conflict with it.
command -v npm >/dev/null || install_packages nodejs npm

ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
[[ "${1:-}" == --quick ]] && exit 0

SANITIZE="$ROOT/build-sanitize"
# -O1 and line tables only: the build takes half the time of -O2 -g and stacks still name file and line.
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$SANITIZE" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DATTN_SANITIZE=ON -DATTN_FUZZ=ON >/dev/null
cmake --build "$SANITIZE" -j "$(nproc)"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One run, the window tests with it (tests/CMakeLists.txt turns their leak checks off). Not ui_captures nor
# ui_pages_in_sight: the layout sweep draws every view, step and lesson page again under the sanitizers, and the
# Release pass above compares the captures and checks the pages (one process a page would train the induction
# lesson's model anew each time, minutes under the sanitizers).
ctest --test-dir "$SANITIZE" --output-on-failure -j "$(nproc)" -E '^(ui_captures|ui_pages_in_sight)$'

# After the tests, not beside them: slowed by them, an input could pass the fuzzer's 10 s timeout.
bash "$ROOT/scripts/fuzz.sh" --seconds 35 --build "$SANITIZE"
