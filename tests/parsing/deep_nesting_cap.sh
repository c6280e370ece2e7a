#!/usr/bin/env bash
# A 60 MiB file of "[" (under the 64 MiB a scenario may have) is refused at once, naming the line, the column and
# the depth limit, within a memory cap that a tree of it would pass many times over (it took 5.5 GB): an
# address-space cap (prlimit --as) in the Release build, AddressSanitizer's own RSS limit in the sanitizer build
# (ASan reserves terabytes of address space, so prlimit --as cannot work there).
#   deep_nesting_cap.sh BINARY WORKDIR release|asan
set -euo pipefail
binary=${1:?binary} work=${2:?work folder} mode=${3:?release or asan}
mkdir -p "$work"
deep="$work/deep.json"
head -c $((60 << 20)) /dev/zero | tr '\0' '[' >"$deep"
expected="attention-lab: $deep: line 1, column 65: nested deeper than 64 levels (the limit for every file)"
status=0
start=$(date +%s)
if [[ $mode == asan ]]; then
  out=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=768" timeout 120 "$binary" trace "$deep" 2>&1) ||
    status=$?
else
  # 1 GiB of address space: the binary's threads and libraries take about 200 MiB, the text 60 MiB; the old tree
  # of this file took 5.5 GB. Two threads, so the threads' stacks do not depend on the machine.
  out=$(OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 timeout 60 prlimit --as=$((1024 << 20)) "$binary" trace "$deep" 2>&1) ||
    status=$?
fi
seconds=$(($(date +%s) - start))
rm -f "$deep"
if [[ $status != 2 || $out != "$expected" ]]; then
  echo "expected exit 2 and: $expected"
  echo "found exit $status and: ${out:0:2000}"
  exit 1
fi
echo "refused in ${seconds}s with exit 2: $out"
