#!/usr/bin/env bash
# Builds Attention Lab and runs every test (unit tests, scenario files, the NumPy cross-check) through CTest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
