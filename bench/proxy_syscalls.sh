#!/usr/bin/env bash
# System calls and CPU per relayed transaction (not a test): PgBouncer
# (session mode) and one or two kanon binaries, pgbench select-only on
# loopback, exempt login (postgres: relayed untouched), so the cells measure
# the relay loop and its I/O backend. Written for issue 28 item 3 (Asio's
# epoll reactor against its io_uring backend); see bench/README.md.
#
#   KANON_BIN=... KANON_BIN_B=... bench/proxy_syscalls.sh [--seconds N] [--rounds N]
#       [--clients "1 8"] [--modes "simple extended"] [--threads N] [--no-strace] [--no-cpu]
#       [--perf]
#
# KANON_BIN: the first kanon (default build/app/kanon); KANON_BIN_B: an
# optional second one, run side by side on its own port (labels KANON_LABEL,
# KANON_LABEL_B). KANON_EXTRA and KANON_EXTRA_B: configuration lines added
# to each (e.g. KANON_BIN_B=build/app/kanon KANON_EXTRA_B="io_placement:
# spread" compares the placements of one binary).
#
# 1. strace: for each proxy and cell, `strace -f -c` on the proxy (all its
#    threads) during `pgbench -t SHORT` and again during `pgbench -t LONG`;
#    the difference of the counts divided by the difference of transactions
#    is what one transaction costs, without connection setup and teardown.
#    These counts do not depend on the machine's load (epoll_wait's a little).
# 2. CPU: `pgbench -T --seconds` against each proxy in turn, the order
#    rotated from cell to cell and round to round, and the proxy's CPU time
#    (user + system, all threads, /proc/<pid>/stat) per 10,000 transactions.
# 3. --perf: `perf record` on each proxy during one `pgbench -T` per cell:
#    samples (cpu-clock, 4 kHz) per 1,000 transactions, the share in the
#    kernel, in finish_task_switch (the cost of being switched back in after
#    a sleep or a preemption; on this VM the interrupts enabled there), and
#    in the proxy's own code and libraries.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_CELL=10
ROUNDS=2
CLIENTS="1 8"
MODES="simple extended"
THREADS=""
STRACE=1
CPU=1
PERF=0
SHORT=100   # transactions per client, strace's first run
LONG=1100   # and its second
SCALE=10
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_CELL="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --clients) CLIENTS="$2"; shift 2 ;;
    --modes) MODES="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --no-strace) STRACE=0; shift ;;
    --no-cpu) CPU=0; shift ;;
    --perf) PERF=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
KANON="${KANON_BIN:-$ROOT/build/app/kanon}"
KANON_B="${KANON_BIN_B:-}"
[ -x "$KANON" ] || { echo "build kanon first: scripts/build.sh" >&2; exit 1; }
[ -z "$KANON_B" ] || [ -x "$KANON_B" ] || { echo "KANON_BIN_B is not executable" >&2; exit 1; }
command -v pgbouncer >/dev/null || { echo "pgbouncer is not installed" >&2; exit 1; }
[ "$STRACE" -eq 0 ] || command -v strace >/dev/null || { echo "strace is not installed" >&2; exit 1; }

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

start_sandbox syscalls

PG_PORT="$KANON_PG_PORT"
psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE bench"
pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "$PG_PORT" -U postgres bench >/dev/null 2>&1

NAMES=()
PORTS=()
PROC=()
start_kanon() {  # label binary extra-config
  local port pid
  port="$(free_port)"
  cat >"$WORK/$1.yaml" <<YAML
listen: {host: 127.0.0.1, port: $port}
backend: {host: 127.0.0.1, port: $PG_PORT, user: postgres, dbname: postgres, sslmode: disable}
log_level: warning
policies: [$ROOT/config/policies/people.yaml, $ROOT/config/policies/adult.yaml]
databases: [bench]
YAML
  [ -z "$THREADS" ] || echo "threads: $THREADS" >>"$WORK/$1.yaml"
  [ -z "$3" ] || echo "$3" >>"$WORK/$1.yaml"
  "$2" proxy --config "$WORK/$1.yaml" 2>"$WORK/$1.log" &
  pid=$!
  PIDS+=("$pid")
  wait_port "$port" || { echo "$1 did not start" >&2; cat "$WORK/$1.log" >&2; exit 1; }
  NAMES+=("$1")
  PORTS+=("$port")
  PROC+=("$pid")
}

start_pgbouncer postgres
NAMES+=(pgbouncer)
PORTS+=("$BOUNCER_PORT")
PROC+=("$(cat "$WORK/pgbouncer.pid")")
start_kanon "${KANON_LABEL:-kanon}" "$KANON" "${KANON_EXTRA:-}"
[ -z "$KANON_B" ] || start_kanon "${KANON_LABEL_B:-kanon-b}" "$KANON_B" "${KANON_EXTRA_B:-}"

echo "pgbench -S, scale $SCALE, $(nproc) cores, loopback, exempt login, kanon threads" \
  "${THREADS:-default}, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!NAMES[@]}"; do echo "  ${NAMES[$i]}: pid ${PROC[$i]}, port ${PORTS[$i]}"; done

pgb() {  # port mode clients pgbench-args... -> pgbench's output
  local port="$1" mode="$2" c="$3"
  shift 3
  pgbench -n -S -M "$mode" -c "$c" -j $((c < 2 ? 1 : 2)) -h 127.0.0.1 -p "$port" -U postgres \
    "$@" bench 2>&1
}

# strace_counts pid port mode clients tx_per_client -> "syscall calls errors" lines
strace_counts() {
  local out="$WORK/strace.out" spid
  rm -f "$out"
  strace -f -c -q -o "$out" -p "$1" 2>/dev/null &
  spid=$!
  sleep 1  # attach to every thread before the first transaction
  pgb "$2" "$3" "$4" -t "$5" >/dev/null || echo "pgbench failed (port $2; counts below too low)" >&2
  sleep 0.3
  kill -INT "$spid"
  wait "$spid" 2>/dev/null || true
  # strace -c: % time, seconds, usecs/call, calls, [errors,] syscall
  awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {
         if (NF == 6) print $6, $4, $5; else print $5, $4, 0 }' "$out"
}

if [ "$STRACE" -eq 1 ]; then
  echo
  echo "System calls per transaction (strace -f -c; pgbench -t $LONG minus -t $SHORT per client;"
  echo "calls/tx, failed calls in brackets; below 0.02/tx left out)"
  for mode in $MODES; do
    for c in $CLIENTS; do
      for i in "${!NAMES[@]}"; do
        strace_counts "${PROC[$i]}" "${PORTS[$i]}" "$mode" "$c" "$SHORT" >"$WORK/short"
        strace_counts "${PROC[$i]}" "${PORTS[$i]}" "$mode" "$c" "$LONG" >"$WORK/long"
        line="$(awk -v n=$(((LONG - SHORT) * c)) '
          FNR == NR { sc[$1] = $2; se[$1] = $3; next }
          { d = ($2 - sc[$1]) / n; e = ($3 - se[$1]) / n; tot += d
            if (d >= 0.02) { s = sprintf("%s %.2f", $1, d); if (e >= 0.02) s = s sprintf(" (%.2f)", e)
                             out = out (out == "" ? "" : ", ") s } }
          END { printf "total %.2f: %s", tot, out }' "$WORK/short" "$WORK/long")"
        printf '| %-8s | %2s | %-14s | %s |\n' "$mode" "$c" "${NAMES[$i]}" "$line"
      done
    done
  done
fi

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

if [ "$CPU" -eq 1 ]; then
  echo
  echo "CPU seconds per 10,000 transactions and tps (pgbench -T $SECONDS_PER_CELL, order rotated)"
  printf '| %-8s | %2s | %5s |' mode cl round
  for n in "${NAMES[@]}"; do printf ' %14s cpu | %9s tps |' "$n" "$n"; done
  echo
  n_proxies=${#NAMES[@]}
  cell=0
  for round in $(seq "$ROUNDS"); do
    for mode in $MODES; do
      for c in $CLIENTS; do
        declare -A cpu=() tps=()
        for k in $(seq 0 $((n_proxies - 1))); do
          i=$(((k + cell) % n_proxies))
          before="$(cpu_ticks "${PROC[$i]}")"
          out="$(pgb "${PORTS[$i]}" "$mode" "$c" -T "$SECONDS_PER_CELL")" ||
            echo "pgbench failed against ${NAMES[$i]}: $out" >&2
          after="$(cpu_ticks "${PROC[$i]}")"
          t="$(sed -nE 's/^tps = ([0-9.]+) .*/\1/p' <<<"$out" | tail -n 1)"
          tx="$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' <<<"$out")"
          tps[$i]="$t"
          cpu[$i]="$(awk -v c=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="${tx:-0}" \
            'BEGIN { printf "%.3f", (n > 0 ? c / hz * 1e4 / n : 0) }')"
        done
        cell=$((cell + 1))
        printf '| %-8s | %2s | %5s |' "$mode" "$c" "$round"
        for i in "${!NAMES[@]}"; do printf ' %18s | %13.0f |' "${cpu[$i]}" "${tps[$i]:-0}"; done
        echo
        unset cpu tps
      done
    done
  done
fi
if [ "$PERF" -eq 1 ]; then
  command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 1; }
  echo
  echo "perf record per proxy and cell (pgbench -T $SECONDS_PER_CELL): samples per 1,000"
  echo "transactions; shares of them in the kernel, in finish_task_switch, in the proxy's"
  echo "own code and libraries (user space)"
  for mode in $MODES; do
    for c in $CLIENTS; do
      for i in "${!NAMES[@]}"; do
        data="$WORK/perf.data"
        perf record -q -F 4000 -g -p "${PROC[$i]}" -o "$data" -- sleep $((SECONDS_PER_CELL + 1)) \
          >/dev/null 2>&1 &
        rpid=$!
        out="$(pgb "${PORTS[$i]}" "$mode" "$c" -T "$SECONDS_PER_CELL")" || true
        wait "$rpid" || true
        tx="$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' <<<"$out")"
        perf report -i "$data" --stdio --no-children --sort dso,sym -g none -n 2>/dev/null |
          awk -v tx="${tx:-0}" -v name="${NAMES[$i]}" -v mode="$mode" -v c="$c" '
            /^#/ || NF < 4 { next }
            { n = $2; total += n
              if ($3 == "[kernel.kallsyms]") { kernel += n; if ($5 ~ /^finish_task_switch/) fts += n }
              else user += n }
            END { if (total == 0 || tx == 0) { printf "| %-8s | %2s | %-14s | no samples |\n", mode, c, name; exit }
                  printf "| %-8s | %2s | %-14s | %7.1f samples/1k tx | kernel %4.1f%% | finish_task_switch %4.1f%% | user %4.1f%% |\n",
                    mode, c, name, total * 1000 / tx, 100 * kernel / total, 100 * fts / total, 100 * user / total }'
        rm -f "$data"
      done
    done
  done
fi
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
