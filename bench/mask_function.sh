#!/usr/bin/env bash
# Masks evaluated by kanon_mask.released, the C function of maskfn/ (issue 28
# item 2; not a test): a scratch PostgreSQL 15 with ADULT x 32 (as
# bench/mask_layouts2.sh makes it), the function installed from the build,
# kanon's masks in the cost-based SQL form and in the function form (`kanon
# tree --form function`), then bench/mask_function.py with the given options.
# The server is stopped and removed on exit, even on failure. Needs a Release
# build (scripts/build.sh) with the server headers, or KANON_BIN and
# KANON_MASK_SO.
#
#   bench/mask_function.sh [--reps N] [--no-check]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KANON="${KANON_BIN:-$ROOT/build/app/kanon}"
[ -x "$KANON" ] || { echo "build kanon first: scripts/build.sh (or set KANON_BIN)" >&2; exit 1; }
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
kanon_mask_built || { echo "no kanon_mask.so: install postgresql-server-dev-15 and build again" >&2; exit 1; }
start_sandbox maskfn
PSQL=(psql -X -q -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1)
make_adult_inline
install_kanon_mask
"$KANON" tree --config "$WORK/kanon.yaml" --table public.adult_inline --format sql >"$WORK/masks.sql"
"$KANON" tree --config "$WORK/kanon.yaml" --table public.adult_inline --format sql \
  --form function >"$WORK/fn.sql"
echo "PostgreSQL $("${PSQL[@]}" -Atc 'SHOW server_version'), $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$ROOT" rev-parse --short HEAD)," \
  "masks $(wc -c <"$WORK/masks.sql") bytes (SQL) and $(wc -c <"$WORK/fn.sql") (function)"
python3 "$ROOT/bench/mask_function.py" --port "$KANON_PG_PORT" --masks "$WORK/masks.sql" \
  --fn-masks "$WORK/fn.sql" --table public.adult_inline "$@"
