#!/usr/bin/env bash
# Builds the benchmarks (Release, default options) into build-bench/ and runs bench/compare.py: the engine
# beside NumPy and PyTorch, at every core and at one thread (docs/PERFORMANCE.md).
#   scripts/bench.sh [--threads N] [compare.py options...]
#     --threads N  one run at N threads instead of the two runs (all cores, then 1)
# Other options go to bench/compare.py (--repetitions, --min-time, --peer-runs).
# Run it on an otherwise idle machine: compare.py prints the load average before and after.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build-bench"
THREADS=()
PASS=()
while (($#)); do
  case "$1" in
    --threads) THREADS=("${2:?--threads needs a number}"); shift 2 ;;
    -h|--help) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) PASS+=("$1"); shift ;;
  esac
done
if ((${#THREADS[@]} == 0)); then
  THREADS=("$(nproc)")
  (($(nproc) > 1)) && THREADS+=(1)
fi

# What building attention-lab and attention-bench needs (a subset of scripts/setup.sh's list), and the peers:
# PyTorch, and OpenBLAS so that NumPy and PyTorch do not run on the reference BLAS.
PACKAGES=(
  cmake g++ make pkg-config
  libeigen3-dev libopenblas-pthread-dev nlohmann-json3-dev
  libimgui-dev libstb-dev libglfw3-dev libgl-dev fonts-dejavu-core
  doctest-dev
  python3-numpy
  python3-torch libopenblas0-pthread
  libbenchmark-dev                # Google Benchmark: attention-bench
)

source "$ROOT/scripts/packages.sh"
install_packages "${PACKAGES[@]}"

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target attention-bench attention-lab

cd "$ROOT"
for n in "${THREADS[@]}"; do
  echo
  /usr/bin/python3 bench/compare.py "$BUILD/bench/attention-bench" --threads "$n" "${PASS[@]}"
done
