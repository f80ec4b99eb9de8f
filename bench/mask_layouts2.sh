#!/usr/bin/env bash
# Mask layouts, round 2 (not a test): a scratch PostgreSQL 15 with ADULT x 32
# (public.adult_inline, k = 320, eight quasi-identifiers, as proxy_masked.sh
# makes it), kanon's masks from `kanon tree --format sql`, then
# bench/mask_layouts2.py with the given options. The server is stopped and
# removed on exit, even on failure. Needs a Release build (scripts/build.sh)
# or KANON_BIN.
#
#   bench/mask_layouts2.sh [--reps N] [--no-check] [--only cur,memo,...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KANON="${KANON_BIN:-$ROOT/build/app/kanon}"
[ -x "$KANON" ] || { echo "build kanon first: scripts/build.sh (or set KANON_BIN)" >&2; exit 1; }
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
start_sandbox masks2
PSQL=(psql -X -q -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1)
make_adult_inline
"$KANON" tree --config "$WORK/kanon.yaml" --table public.adult_inline --format sql >"$WORK/masks.sql"
echo "PostgreSQL $("${PSQL[@]}" -Atc 'SHOW server_version'), $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$ROOT" rev-parse --short HEAD)"
python3 "$ROOT/bench/mask_layouts2.py" --port "$KANON_PG_PORT" --masks "$WORK/masks.sql" \
  --table public.adult_inline "$@"
