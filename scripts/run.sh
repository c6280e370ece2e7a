#!/usr/bin/env bash
# Builds Attention Lab and opens it on the worked example "the cat sat".
# Any arguments go to attention-lab itself, e.g.  scripts/run.sh assets/scenarios/the_lazy_dog.json
# or  scripts/run.sh trace assets/scenarios/the_cat_sat.json
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" && ( $# -eq 0 || "$1" != -* && "$1" != trace && "$1" != decode && "$1" != kv ) ]]; then
  echo "No display: the window cannot open here. Try  xvfb-run -a scripts/run.sh --screenshot /tmp/s.png" >&2
  echo "or the command line:  scripts/run.sh trace $ROOT/assets/scenarios/the_cat_sat.json" >&2
fi
exec "$BUILD/app/attention-lab" "$@"
