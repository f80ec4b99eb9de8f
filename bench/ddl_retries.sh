#!/usr/bin/env bash
# What an administrator's DDL costs restricted sessions (not a test): the
# analyst reads public.people through kanon with pgbench while another
# connection replaces a view (unrelated to what is read) in a loop, and
# without the loop, in the same run. Every DDL advances the catalog
# generation, so statements decided before kanon re-read the catalog fail
# their guard (rewriter/catalog_guard.h): a simple Query outside a
# transaction block is sent again by kanon (guard_retries in SHOW STATS),
# anything else reaches pgbench as 40001, which pgbench retries
# (--max-tries) and counts.
#
#   bench/ddl_retries.sh [--seconds N] [--pause-ms MS]
#
# --pause-ms: the pause between two DDL statements of the loop (default 20).
# Prints, per protocol, TPS with and without the loop, pgbench's retried and
# failed transactions, and kanon's transparent retries.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/bench/lib.sh"
SECONDS_PER_CELL=10
PAUSE_MS=20
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_CELL="$2"; shift 2 ;;
    --pause-ms) PAUSE_MS="$2"; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--pause-ms MS]" >&2; exit 2 ;;
  esac
done
KANON="${KANON_BIN:-$ROOT/build/app/kanon}"
[ -x "$KANON" ] || { echo "build kanon first: scripts/build.sh" >&2; exit 1; }
start_sandbox ddl
PSQL=(psql -X -At -q -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres -d postgres)
start_kanon_with_guard
printf '%s\n' 'SELECT occupation, city, state FROM people WHERE id > 0;' >"$WORK/read.sql"
guard_retries() {
  psql -X -At -h 127.0.0.1 -p "$KANON_PORT" -U postgres -d kanon -c "SHOW STATS" |
    awk -F'|' '$1 == "guard_retries" {print $2}'
}
cell() {  # mode -> "tps retried failed"
  pgbench -n -c 1 -T "$SECONDS_PER_CELL" -M "$1" --max-tries=10 --verbose-errors -f "$WORK/read.sql" \
    -h 127.0.0.1 -p "$KANON_PORT" -U analyst postgres 2>"$WORK/pgbench-$1-err.log" |
    awk '/^tps/ {t=$3} /number of transactions retried/ {r=$5} /number of failed transactions/ {f=$5}
         END {print t, (r == "" ? 0 : r), (f == "" ? 0 : f)}'
}
ddl_loop() {
  local i=0
  while :; do
    "${PSQL[@]}" -c "CREATE OR REPLACE VIEW public.ddl_noise AS SELECT $((i++ % 2)) AS n" >/dev/null
    sleep "$(awk -v m="$PAUSE_MS" 'BEGIN {print m / 1000}')"
  done
}
echo "DDL loop against restricted reads: 1 client, ${SECONDS_PER_CELL}s per cell, pause ${PAUSE_MS} ms between DDL statements"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-8s | %-7s | %9s | %16s | %14s | %21s | %10s |\n' protocol DDL TPS "pgbench retried" "pgbench failed" "kanon sent again" "DDL run"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' ---------- --------- ----------- ------------------ ---------------- ----------------------- ------------
for mode in simple extended; do
  for loop in off on; do
    before="$(guard_retries)"
    g0="$("${PSQL[@]}" -c "SELECT last_value FROM kanon.catalog_generation")"
    if [ "$loop" = on ]; then ddl_loop & LOOP=$!; fi
    read -r tps retried failed <<<"$(cell "$mode")"
    if [ "$loop" = on ]; then kill "$LOOP"; wait "$LOOP" 2>/dev/null || true; fi
    g1="$("${PSQL[@]}" -c "SELECT last_value FROM kanon.catalog_generation")"
    printf '| %-8s | %-7s | %9.0f | %16s | %14s | %21s | %10s |\n' "$mode" "$loop" "$tps" \
      "$retried" "$failed" "$(($(guard_retries) - before))" "$((g1 - g0))"
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in simple extended; do
  grep -v "retried\|^$" "$WORK/pgbench-$mode-err.log" | grep -i "error\|fail" | sort | uniq -c | sort -rn | head -5 |
    sed "s/^/  $mode errors: /" || true
done
