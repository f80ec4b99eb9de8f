#!/usr/bin/env bash
# What the catalog guard costs PostgreSQL (not a test): pgbench's point read
# of pgbench_accounts as written, and the same read carrying the guard kanon
# splices into every restricted statement
# ("kanon"."catalog_is"(G::pg_catalog.int8) as the first WHERE conjunct,
# rewriter/catalog_guard.h), and with the guard that also holds the catalog
# still (catalog_stays, for statements that may call a SQL or procedural
# function), all sent directly to PostgreSQL, alternating
# round by round in the same run, with the simple and the extended
# (prepared) protocol. kanon is started once so that it installs the guard
# function (its service account is the sandbox's superuser). Where
# build/maskfn/kanon_mask.so exists, maskfn/install.sql is installed too and
# the guards in C (kanon_mask.catalog_is, catalog_stays) are measured beside
# them ("c-guard", "c-hold"). Last, a new backend per statement (pgbench -C,
# `SELECT 1`, bare and with each guard): what a new session's first guarded
# statement costs.
#
#   bench/catalog_guard.sh [--seconds N] [--rounds R]
#
# Prints, per protocol, the median over the rounds of the TPS of each form,
# the time per statement it gives (1 client: 1/TPS, finer than pgbench's
# latency in ms), and the ratios guarded / plain and holding / plain. The CPU
# cost of placing the guard in kanon is rewriter_bench's "catalog guard" rows.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/bench/lib.sh"
SECONDS_PER_CELL=5
ROUNDS=5
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_CELL="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--rounds R]" >&2; exit 2 ;;
  esac
done
KANON="${KANON_BIN:-$ROOT/build/app/kanon}"
[ -x "$KANON" ] || { echo "build kanon first: scripts/build.sh" >&2; exit 1; }
start_sandbox guard
PSQL=(psql -X -At -q -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres -d postgres)
pgbench -i -q -s 1 -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres postgres >/dev/null 2>&1
start_kanon_with_guard
FORMS="plain guarded holding"
if kanon_mask_built; then
  install_kanon_mask
  FORMS="$FORMS c-guard c-hold"
fi
G="$("${PSQL[@]}" -c "SELECT last_value FROM kanon.catalog_generation")"
[ -n "$G" ] || { echo "kanon installed no guard function" >&2; exit 1; }
printf '%s\n' '\set aid random(1, 100000)' \
  'SELECT abalance FROM pgbench_accounts WHERE aid = :aid;' >"$WORK/plain.sql"
printf '%s\n' '\set aid random(1, 100000)' \
  "SELECT abalance FROM pgbench_accounts WHERE \"kanon\".\"catalog_is\"($G::pg_catalog.int8) AND (aid = :aid);" \
  >"$WORK/guarded.sql"
printf '%s\n' '\set aid random(1, 100000)' \
  "SELECT abalance FROM pgbench_accounts WHERE \"kanon\".\"catalog_stays\"($G::pg_catalog.int8) AND (aid = :aid);" \
  >"$WORK/holding.sql"
sed -e 's/"kanon"\./"kanon_mask"./' "$WORK/guarded.sql" >"$WORK/c-guard.sql"
sed -e 's/"kanon"\./"kanon_mask"./' "$WORK/holding.sql" >"$WORK/c-hold.sql"
cell() {  # form mode -> tps
  pgbench -n -c 1 -T "$SECONDS_PER_CELL" -M "$2" -f "$WORK/$1.sql" \
    -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres postgres 2>&1 | awk '/^tps/ {print $3}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "catalog guard cost: pgbench point read, 1 client, $ROUNDS rounds x ${SECONDS_PER_CELL}s per cell, generation $G"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-9s | %-7s | %10s | %14s |\n' protocol form "TPS p50" "µs/statement"
printf '|%s|%s|%s|%s|\n' ----------- --------- ------------ ----------------
for mode in simple prepared; do
  for form in $FORMS; do : >"$WORK/$form.tps"; done
  for _ in $(seq "$ROUNDS"); do
    for form in $FORMS; do cell "$form" "$mode" >>"$WORK/$form.tps"; done
  done
  p="$(median <"$WORK/plain.tps")"
  for form in $FORMS; do
    t="$(median <"$WORK/$form.tps")"
    awk -v m="$mode" -v f="$form" -v t="$t" 'BEGIN {printf "| %-9s | %-7s | %10.0f | %14.2f |\n", m, f, t, 1e6 / t}'
  done
  for form in $FORMS; do
    [ "$form" = plain ] && continue
    awk -v p="$p" -v g="$(median <"$WORK/$form.tps")" -v m="$mode" -v f="$form" \
      'BEGIN {printf "  %s: %s / plain time per statement = %.3f (%+.2f µs)\n", m, f, p / g, 1e6 / g - 1e6 / p}'
  done
done
# A new backend for every statement: the guard's first call in a session.
echo "a new session per statement (pgbench -C, SELECT 1), ms per statement, median of $ROUNDS rounds:"
printf '%s\n' 'SELECT 1;' >"$WORK/new-plain.sql"
printf '%s\n' "SELECT 1 WHERE \"kanon\".\"catalog_is\"($G::pg_catalog.int8);" >"$WORK/new-guarded.sql"
sed -e 's/"kanon"\./"kanon_mask"./' "$WORK/new-guarded.sql" >"$WORK/new-c-guard.sql"
NEW_FORMS="plain guarded"
[ -f "$WORK/kanon_mask.so" ] && NEW_FORMS="$NEW_FORMS c-guard"
for form in $NEW_FORMS; do : >"$WORK/new-$form.tps"; done
for _ in $(seq "$ROUNDS"); do
  for form in $NEW_FORMS; do
    pgbench -n -C -c 1 -T "$SECONDS_PER_CELL" -f "$WORK/new-$form.sql" \
      -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres postgres 2>&1 | awk '/^tps/ {print $3}' \
      >>"$WORK/new-$form.tps"
  done
done
for form in $NEW_FORMS; do
  awk -v f="$form" -v t="$(median <"$WORK/new-$form.tps")" \
    'BEGIN {printf "  %-8s %.3f ms\n", f, 1e3 / t}'
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
