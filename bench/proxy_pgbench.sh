#!/usr/bin/env bash
# Proxy throughput benchmark (not a test): pgbench's built-in scripts on
# unprotected tables against PostgreSQL directly, through kanon, and through
# PgBouncer in session mode, all in one run on loopback. kanon runs with the
# demo policies loaded; it is measured twice: as an exempt login (postgres:
# relayed untouched) and as a restricted one (analyst: every statement goes
# through the rewriter, which passes pgbench's statements unchanged). Prints
# TPS, the ratios kanon/PgBouncer, and the CPU seconds PgBouncer and kanon
# (user + system, all threads, from /proc) spent per 10,000 transactions in
# each cell: on two shared cores CPU time is steadier than throughput.
#
#   bench/proxy_pgbench.sh [--seconds N] [--clients "1 8 32"] [--modes "simple extended"]
#                          [--scripts "select-only tpcb-like"] [--threads N]
#                          [--placement spread|pack] [--audit file|table] [--guard c|plpgsql]
#
# --scripts: pgbench -b names (select-only is pgbench -S; tpcb-like is
# pgbench's default script, 7 statements per transaction), or connect:
# select-only with a new connection per transaction (pgbench -C), which
# measures session start-up (PgBouncer hands each new client a pooled
# server connection; kanon and direct start a backend). --threads: kanon's
# I/O threads (default: its own, one per core). --placement: kanon's
# io_placement (default: its own, spread).
#
# --audit measures the audit trail's cost instead: the restricted login
# through a kanon without audit: and through a second kanon writing every
# statement to the given sink (file: JSON lines in the work directory;
# table: public.kanon_audit_bench in the protected database, postgres), cells interleaved,
# with the ratio audited/plain and kanon's own CPU time per transaction
# (less sensitive to a busy machine than throughput).
# --guard: the catalog guard restricted statements carry. c (the default
# when build/maskfn/kanon_mask.so exists): maskfn/install.sql is installed in
# database bench, so kanon writes kanon_mask.catalog_is; plpgsql: it is not,
# so kanon.catalog_is.
# Needs a Release build in build/ (scripts/build.sh) and pgbouncer.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_CELL=20
CLIENTS="1 8 32"
MODES="simple extended"
SCALE=10
AUDIT=""
SCRIPTS="select-only"
THREADS=""
PLACEMENT=""
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
GUARD=plpgsql
kanon_mask_built && GUARD=c
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_CELL="$2"; shift 2 ;;
    --clients) CLIENTS="$2"; shift 2 ;;
    --modes) MODES="$2"; shift 2 ;;
    --audit) AUDIT="$2"; shift 2 ;;
    --scripts) SCRIPTS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --placement) PLACEMENT="$2"; shift 2 ;;
    --guard) GUARD="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
KANON="${KANON_BIN:-$ROOT/build/app/kanon}"
[ -x "$KANON" ] || { echo "build kanon first: scripts/build.sh" >&2; exit 1; }
command -v pgbouncer >/dev/null || { echo "pgbouncer is not installed" >&2; exit 1; }

start_sandbox bench

PG_PORT="$KANON_PG_PORT"
psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE bench"
pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "$PG_PORT" -U postgres bench >/dev/null 2>&1
psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d bench \
  -c "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO analyst"
case "$GUARD" in
  c) install_kanon_mask bench ;;
  plpgsql) ;;
  *) echo "--guard takes c or plpgsql" >&2; exit 2 ;;
esac

KANON_PORT="$(free_port)"
cat >"$WORK/kanon.yaml" <<YAML
listen: {host: 127.0.0.1, port: $KANON_PORT}
backend: {host: 127.0.0.1, port: $PG_PORT, user: postgres, dbname: postgres, sslmode: disable}
log_level: warning
policies: [$ROOT/config/policies/people.yaml, $ROOT/config/policies/adult.yaml]
databases: [bench]  # restricted sessions: statement rules only (no protected table there)
YAML
[ -z "$THREADS" ] || echo "threads: $THREADS" >>"$WORK/kanon.yaml"
[ -z "$PLACEMENT" ] || echo "io_placement: $PLACEMENT" >>"$WORK/kanon.yaml"
"$KANON" proxy --config "$WORK/kanon.yaml" 2>"$WORK/kanon.log" &
KANON_PID=$!
PIDS+=($!)

if [ -n "$AUDIT" ]; then
  case "$AUDIT" in
    file) SINK="file: $WORK/audit.jsonl" ;;
    table) SINK="table: public.kanon_audit_bench" ;;
    *) echo "--audit takes file or table" >&2; exit 2 ;;
  esac
  AUDIT_PORT="$(free_port)"
  sed -e "s/port: $KANON_PORT}/port: $AUDIT_PORT}/" "$WORK/kanon.yaml" >"$WORK/kanon-audit.yaml"
  echo "audit: {$SINK}" >>"$WORK/kanon-audit.yaml"
  "$KANON" proxy --config "$WORK/kanon-audit.yaml" 2>"$WORK/kanon-audit.log" &
  AUDIT_PID=$!
  PIDS+=($!)
fi

start_pgbouncer postgres analyst
wait_port "$KANON_PORT" || { echo "kanon did not start" >&2; cat "$WORK/kanon.log" >&2; exit 1; }
BOUNCER_PID="$(cat "$WORK/pgbouncer.pid")"

# run_cell port script mode clients user [pid] -> "tps latency_ms cpu_s_per_10k_tx"
# (the CPU of process pid during the cell; 0 without one)
run_cell() {
  local jobs=$(($4 < 2 ? 1 : 2)) before=0 after=0 out tps lat tx
  [ -z "${6:-}" ] || before="$(cpu_ticks "$6")"
  local script=(-b "$2")
  [ "$2" != connect ] || script=(-C -b select-only)
  out="$(pgbench -n "${script[@]}" -M "$3" -c "$4" -j "$jobs" -T "$SECONDS_PER_CELL" -h 127.0.0.1 \
    -p "$1" -U "$5" bench 2>&1)" || { echo "pgbench failed: $out" >&2; echo "0 0 0"; return; }
  [ -z "${6:-}" ] || after="$(cpu_ticks "$6")"
  tps="$(sed -nE 's/^tps = ([0-9.]+) .*/\1/p' <<<"$out" | tail -n 1)"
  lat="$(sed -nE 's/^latency average = ([0-9.]+) ms/\1/p' <<<"$out")"
  tx="$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' <<<"$out")"
  awk -v t="$tps" -v l="$lat" -v c=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$tx" \
    'BEGIN { printf "%s %s %.3f\n", t, l, (n > 0 ? c / hz * 1e4 / n : 0) }'
}

cpu_ticks() {  # utime + stime of process $1, in clock ticks
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}
run_cell_cpu() {  # port pid mode clients -> "tps latency_ms kanon_cpu_us_per_tx"
  local before after out tps lat tx
  before="$(cpu_ticks "$2")"
  out="$(pgbench -n -S -M "$3" -c "$4" -j $(($4 < 2 ? 1 : 2)) -T "$SECONDS_PER_CELL" \
    -h 127.0.0.1 -p "$1" -U analyst bench 2>&1)" || { echo "pgbench failed: $out" >&2; echo "0 0 0"; return; }
  after="$(cpu_ticks "$2")"
  tps="$(sed -nE 's/^tps = ([0-9.]+) .*/\1/p' <<<"$out" | tail -n 1)"
  lat="$(sed -nE 's/^latency average = ([0-9.]+) ms/\1/p' <<<"$out")"
  tx="$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' <<<"$out")"
  awk -v t="$tps" -v l="$lat" -v c=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$tx" \
    'BEGIN { printf "%s %s %.1f\n", t, l, (n > 0 ? c / hz * 1e6 / n : 0) }'
}

if [ -n "$AUDIT" ]; then
  wait_port "$KANON_PORT" || { echo "kanon did not start" >&2; cat "$WORK/kanon.log" >&2; exit 1; }
  wait_port "$AUDIT_PORT" || { echo "kanon (audit) did not start" >&2; cat "$WORK/kanon-audit.log" >&2; exit 1; }
  echo "pgbench -S, scale $SCALE, $SECONDS_PER_CELL s per cell, $(nproc) cores, loopback"
  echo "restricted login analyst; plain kanon vs kanon with audit: {$SINK} (cells interleaved)"
  echo "cpu us/tx: kanon's own CPU time (user + system, all threads) per transaction"
  printf '| %-8s | %7s | %10s | %10s | %9s | %9s | %10s | %10s | %8s |\n' \
    mode clients "plain tps" "audit tps" "plain ms" "audit ms" "plain cpu" "audit cpu" "audit/pl"
  printf '|%s|\n' "----------|---------|------------|------------|-----------|-----------|------------|------------|----------"
  cell=0
  for mode in $MODES; do
    for c in $CLIENTS; do
      # Alternate which kanon goes first, so a drift of the machine's load
      # does not always favour the same one.
      if [ $((cell++ % 2)) -eq 0 ]; then
        read -r pt pl pc <<<"$(run_cell_cpu "$KANON_PORT" "$KANON_PID" "$mode" "$c")"
        read -r at al ac <<<"$(run_cell_cpu "$AUDIT_PORT" "$AUDIT_PID" "$mode" "$c")"
      else
        read -r at al ac <<<"$(run_cell_cpu "$AUDIT_PORT" "$AUDIT_PID" "$mode" "$c")"
        read -r pt pl pc <<<"$(run_cell_cpu "$KANON_PORT" "$KANON_PID" "$mode" "$c")"
      fi
      ra="$(awk -v a="$at" -v b="$pt" 'BEGIN { printf (b > 0 ? "%.3f" : "n/a"), a / b }')"
      printf '| %-8s | %7s | %10.0f | %10.0f | %9.3f | %9.3f | %10s | %10s | %8s |\n' \
        "$mode" "$c" "$pt" "$at" "$pl" "$al" "$pc" "$ac" "$ra"
    done
  done
  [ "$AUDIT" = file ] && echo "audit records written: $(wc -l <"$WORK/audit.jsonl")"
  exit 0
fi

echo "pgbench, scale $SCALE, $SECONDS_PER_CELL s per cell, $(nproc) cores, loopback," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), kanon threads ${THREADS:-default}," \
  "placement ${PLACEMENT:-default}, guard $GUARD," \
  "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "kanon exempt: postgres (relayed untouched); kanon restricted: analyst (every statement rewritten-or-passed)"
echo "cpu: CPU seconds of PgBouncer / kanon per 10,000 transactions in that cell"
printf '| %-11s | %-8s | %7s | %8s | %8s | %8s | %8s | %8s | %8s | %8s | %8s | %8s |\n' \
  script mode clients "direct" "bouncer" "exempt" "restr." "ex/bnc" "re/bnc" "bnc cpu" \
  "ex cpu" "re cpu"
printf '|%s|\n' "-------------|----------|---------|----------|----------|----------|----------|----------|----------|----------|----------|----------"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf (b > 0 ? "%.2f" : "n/a"), a / b }'; }
for script in $SCRIPTS; do
  if [ "$script" = tpcb-like ]; then
    # Every run starts from the same tables (tpcb-like updates and inserts).
    pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "$PG_PORT" -U postgres bench >/dev/null 2>&1
    psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d bench \
      -c "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO analyst"
  fi
  for mode in $MODES; do
    for c in $CLIENTS; do
      read -r dt _ _ <<<"$(run_cell "$PG_PORT" "$script" "$mode" "$c" postgres)"
      read -r bt _ bc <<<"$(run_cell "$BOUNCER_PORT" "$script" "$mode" "$c" postgres "$BOUNCER_PID")"
      read -r et _ ec <<<"$(run_cell "$KANON_PORT" "$script" "$mode" "$c" postgres "$KANON_PID")"
      read -r rt _ rc <<<"$(run_cell "$KANON_PORT" "$script" "$mode" "$c" analyst "$KANON_PID")"
      printf '| %-11s | %-8s | %7s | %8.0f | %8.0f | %8.0f | %8.0f | %8s | %8s | %8s | %8s | %8s |\n' \
        "$script" "$mode" "$c" "$dt" "$bt" "$et" "$rt" "$(ratio "$et" "$bt")" "$(ratio "$rt" "$bt")" \
        "$bc" "$ec" "$rc"
    done
  done
done
