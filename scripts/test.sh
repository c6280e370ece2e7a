#!/usr/bin/env bash
# Builds Attention Lab and runs every test (unit tests, scenario files, the NumPy cross-check, the window
# under Xvfb) through CTest.
#   scripts/test.sh             the Release build in build/
#   scripts/test.sh --sanitize  also a build with AddressSanitizer and UndefinedBehaviorSanitizer in
#                               build-sanitize/, running the unit tests and the NumPy cross-check there
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"

if [[ "${1:-}" == --sanitize ]]; then
  SANITIZE="$ROOT/build-sanitize"
  cmake -S "$ROOT" -B "$SANITIZE" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_SANITIZE=ON >/dev/null
  cmake --build "$SANITIZE" -j "$(nproc)" --target attn_tests attention-lab
  # The window tests are left out here: Mesa's GL driver is not built with the sanitizers.
  ctest --test-dir "$SANITIZE" --output-on-failure -j "$(nproc)" -E '^ui_'
fi
