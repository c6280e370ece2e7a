#!/usr/bin/env bash
# Builds Attention Lab and runs it. With no arguments: the trace of the worked example "the cat sat".
# Any arguments go to attention-lab itself, e.g.  scripts/run.sh trace assets/scenarios/the_lazy_dog.json
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

if (($# == 0)); then
  exec "$BUILD/app/attention-lab" trace "$ROOT/assets/scenarios/the_cat_sat.json"
fi
exec "$BUILD/app/attention-lab" "$@"
