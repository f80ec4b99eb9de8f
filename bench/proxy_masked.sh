#!/usr/bin/env bash
# Masked-query benchmark (not a test): BI queries sent by a restricted user
# through kanon, in every enforcement mode, against the same raw queries sent
# straight to PostgreSQL, all in one run.
#
#   bench/proxy_masked.sh [--copies N] [--reps N] [--modes "inline materialized view"]
#                         [--settings "jit=off"] [--clients N] [--duration S]
#                         [--serial-masks-at N] [--no-preload]
#
# The table is ADULT repeated --copies times (default 32, ~965k rows) with
# k = 10 x copies and eight quasi-identifiers; one copy of it per mode, each
# protected with that mode. Columns:
#   direct        postgres straight to PostgreSQL with the server's defaults
#                 (parallel workers, JIT as configured): what the analyst had
#                 before kanon, the reference of issue 17;
#   direct+rs     the same with kanon's restricted_settings (--settings);
#   <mode>        analyst through kanon, restricted_settings applied; a mode
#                 ending in -fn (inline-fn, view-fn) is that mode with
#                 evaluator: function (maskfn/, installed from the build).
# Each cell is the median over --reps executions (after one warm-up) of the
# latency in ms, and of the CPU ms the whole PostgreSQL cluster (backends and
# parallel workers) plus kanon spent on one execution: on two shared cores
# CPU time is steadier than latency. Ratios are against `direct`.
#
# With --clients N (issue 28 item 4), then N concurrent clients (pgbench -c N)
# send the six aggregate queries, picked at random, for --duration seconds
# (default 30) each: directly, and through kanon to each mode, every column
# with the same random seed (the same sequence of queries per client); the
# table gives queries per second and the ratio to direct. --serial-masks-at N sets
# kanon's serial_masks_at (default: kanon's, one per core); a number above
# the clients keeps the function's masks parallel whatever the load.
#
# With a -fn mode the server loads kanon_mask.so at start
# (shared_preload_libraries, as maskfn/README.md recommends; the direct
# queries never call it); --no-preload leaves it to each session's first
# masked statement (2-3 ms on a new session on this VM, bench/README.md "Stop 66").
#
# With --first-statement N, only a new session's first `SELECT * ... LIMIT
# 1000` is measured, taken apart for each mode: N new sessions per cell,
# cells interleaved, each cell the median (min-max) of the statement's
# duration inside its backend (log_min_duration_statement: parsing to the
# last row sent, no connection set-up) for the plain query directly (as
# postgres, and as analyst with the restricted settings), kanon's rewritten
# text sent directly as analyst (taken from the server's log), the same
# without the catalog guard, with the masks replaced by `true` (inline
# modes), and the plain query through kanon.
#
# Needs a Release build in build/ (scripts/build.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COPIES=32
REPS=5
MODES="inline materialized view"
SETTINGS="jit=off"
CLIENTS=0
DURATION=30
SERIAL_AT=""
PRELOAD=1
FIRST=0
while [ $# -gt 0 ]; do
  case "$1" in
    --copies) COPIES="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --modes) MODES="$2"; shift 2 ;;
    --settings) SETTINGS="$2"; shift 2 ;;
    --clients) CLIENTS="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --serial-masks-at) SERIAL_AT="$2"; shift 2 ;;
    --no-preload) PRELOAD=0; shift ;;
    --first-statement) FIRST="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
KANON="${KANON_BIN:-$ROOT/build/app/kanon}"
[ -x "$KANON" ] || { echo "build kanon first: scripts/build.sh" >&2; exit 1; }

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

start_sandbox masked
PG_PORT="$KANON_PG_PORT"
PSQL=(psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres)
K=$((10 * COPIES))
QIS='[sex, age, race, marital-status, education, native-country, workclass, occupation]'
"${PSQL[@]}" -c "CREATE TABLE public.occupation_group (occupation text PRIMARY KEY, grp text);
                 INSERT INTO public.occupation_group SELECT DISTINCT occupation,
                   left(occupation, 1) FROM public.adult;
                 GRANT SELECT ON public.occupation_group TO analyst;"
# ADULT x COPIES with a unique id (the primary key links releases over time,
# docs/policy.md "Refresh"; without one, the copies' duplicate rows would be
# told apart by their quasi-identifiers, a slower load).
COLS="$("${PSQL[@]}" -Atc "SELECT string_agg(CASE attname WHEN 'id'
          THEN '(g - 1) * 1000000 + a.id AS id' ELSE 'a.' || quote_ident(attname) END,
          ', ' ORDER BY attnum) FROM pg_attribute
          WHERE attrelid = 'public.adult'::regclass AND attnum > 0 AND NOT attisdropped")"
copy_adult() {
  "${PSQL[@]}" -c "CREATE TABLE public.$1 AS SELECT $COLS FROM public.adult a,
                   generate_series(1, $COPIES) g; ALTER TABLE public.$1 ADD PRIMARY KEY (id);
                   ANALYZE public.$1;"
}
# A mode with -fn (inline-fn, view-fn, materialized-fn) is that mode with
# evaluator: function (kanon_mask.released, maskfn/), installed from the build.
tbl() { echo "adult_${1//-/_}"; }
if [[ " $MODES" == *-fn* ]]; then
  install_kanon_mask
  [ "$PRELOAD" -eq 0 ] || preload_kanon_mask
fi
{
  echo "tables:"
  for mode in $MODES; do
    copy_adult "$(tbl "$mode")"
    "${PSQL[@]}" -c "GRANT SELECT ON public.$(tbl "$mode") TO analyst;"
    printf '  - {table: public.%s, k: %s, quasi_identifiers: %s,\n' "$(tbl "$mode")" "$K" "$QIS"
    printf '     exempt: [postgres], max_nodes: 8192, mode: %s%s}\n' "${mode%-fn}" \
      "$([[ "$mode" == *-fn ]] && echo ', evaluator: function')"
  done
} >"$WORK/policy.yaml"
# The reference's copy: the same rows, never protected.
copy_adult adult_direct
KANON_PORT="$(free_port)"
{
  echo "listen: {host: 127.0.0.1, port: $KANON_PORT}"
  echo "backend: {host: 127.0.0.1, port: $PG_PORT, user: postgres, dbname: postgres," \
    "sslmode: disable}"
  echo "log_level: warning"
  [ -z "$SERIAL_AT" ] || echo "serial_masks_at: $SERIAL_AT"
  echo "policies: [$WORK/policy.yaml]"
  echo "restricted_settings:"
  [ -n "$SETTINGS" ] || echo "  {}"
  for s in $SETTINGS; do echo "  ${s%%=*}: \"${s#*=}\""; done
} >"$WORK/kanon.yaml"
"$KANON" proxy --config "$WORK/kanon.yaml" 2>"$WORK/kanon.log" &
KANON_PID=$!
PIDS+=("$KANON_PID")
wait_port "$KANON_PORT" || { echo "kanon did not start" >&2; cat "$WORK/kanon.log" >&2; exit 1; }
# Wait until every table's snapshot is built (readyz on the metrics port is
# not configured here: poll a masked count instead).
for mode in $MODES; do
  built=""
  for _ in $(seq 900); do
    psql -X -At -h 127.0.0.1 -p "$KANON_PORT" -U analyst -d postgres \
      -c "SELECT count(*) FROM public.$(tbl "$mode")" >/dev/null 2>&1 && { built=1; break; }
    grep -q "policy public.$(tbl "$mode"): not built" "$WORK/kanon.log" && break
    sleep 0.2
  done
  [ -n "$built" ] || { echo "$(tbl "$mode") was not built:" >&2; grep -v denied "$WORK/kanon.log" >&2; exit 1; }
done
PGOPTS_RS=""
for s in $SETTINGS; do PGOPTS_RS+="-c ${s} "; done

QUERIES=(
  'SELECT occupation, sex, count(*) FROM :tbl GROUP BY occupation, sex'
  'SELECT education, count(*) FROM :tbl GROUP BY education'
  'SELECT count(*) FROM :tbl WHERE age = 39'
  'SELECT count(DISTINCT "native-country") FROM :tbl'
  'SELECT a.workclass, g.grp, count(*) FROM :tbl a JOIN occupation_group g USING (occupation) GROUP BY 1, 2'
  'SELECT race, avg(age), count(*) FROM :tbl GROUP BY race'
  'SELECT * FROM :tbl LIMIT 1000'
  # What a driver sends: the restriction as a parameter ($1, unspecified
  # type) in the extended protocol. Shown beside the others, not in their
  # median (earlier runs had six aggregates).
  'PARAM SELECT count(*) FROM :tbl WHERE age = :age'
  # A derived table as Looker writes it: the restriction above a CTE named
  # once (ASIDE: shown, not in the median).
  'ASIDE WITH d AS (SELECT age, sex FROM :tbl) SELECT d.sex, count(*) FROM d WHERE d.age = 39 GROUP BY 1'
)

if [ "$FIRST" -gt 0 ]; then
  # shellcheck source=bench/first_statement.sh
  source "$ROOT/bench/first_statement.sh"
  first_statement_table
  exit 0
fi

PM_PID="$(head -1 "$KANON_PG_DIR/data/postmaster.pid")"
HZ="$(getconf CLK_TCK)"
# CPU ticks of the cluster (the postmaster, its reaped children and its live
# children) and of kanon.
cpu_ticks() {
  local total=0 pid f
  read -r -a f <"/proc/$PM_PID/stat"
  total=$((f[13] + f[14] + f[15] + f[16]))
  for pid in $(pgrep -P "$PM_PID") "$KANON_PID"; do
    [ -r "/proc/$pid/stat" ] || continue
    read -r -a f <"/proc/$pid/stat" 2>/dev/null || continue
    total=$((total + f[13] + f[14]))
  done
  echo "$total"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# run PORT USER OPTIONS SQL -> "latency_ms cpu_ms" medians over REPS executions
# (a query beginning PARAM: extended protocol, :age a parameter, 39).
run() {
  local port="$1" user="$2" opts="$3" sql="$4" lat=() cpu=() c0 c1 l protocol=simple
  if [[ "$sql" == PARAM\ * ]]; then
    protocol=extended
    printf '\\set age 39\n%s;\n' "${sql#PARAM }" >"$WORK/q.sql"
  else
    printf '%s;\n' "${sql#ASIDE }" >"$WORK/q.sql"
  fi
  PGOPTIONS="$opts" pgbench -n -M "$protocol" -f "$WORK/q.sql" -t 1 -h 127.0.0.1 -p "$port" \
    -U "$user" postgres >/dev/null 2>&1
  for _ in $(seq "$REPS"); do
    local children
    children="$(pgrep -c -P "$PM_PID")"
    c0="$(cpu_ticks)"
    l="$(PGOPTIONS="$opts" pgbench -n -M "$protocol" -f "$WORK/q.sql" -t 1 -h 127.0.0.1 -p "$port" \
      -U "$user" postgres 2>&1 | sed -nE 's/^latency average = ([0-9.]+) ms/\1/p')"
    # The session's backend ends after pgbench has gone: wait until it has
    # been reaped, so that its CPU time is in the postmaster's.
    for _ in $(seq 200); do
      [ "$(pgrep -c -P "$PM_PID")" -le "$children" ] && break
      sleep 0.01
    done
    c1="$(cpu_ticks)"
    lat+=("$l")
    cpu+=("$(((c1 - c0) * 1000 / HZ))")
  done
  echo "$(printf '%s\n' "${lat[@]}" | median) $(printf '%s\n' "${cpu[@]}" | median)"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo "ADULT x $COPIES ($("${PSQL[@]}" -Atc "SELECT count(*) FROM adult_direct") rows), k=$K," \
  "median of $REPS runs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);" \
  "restricted_settings: ${SETTINGS:-none};" \
  "kanon_mask preloaded: $([ "$PRELOAD" -eq 1 ] && [[ " $MODES" == *-fn* ]] && echo yes || echo no);" \
  "commit $(git -C "$ROOT" rev-parse --short HEAD)"
header="| query | direct ms (cpu) | direct+rs ms (cpu) |"
rule="|---|---|---|"
for mode in $MODES; do
  header+=" $mode ms (cpu) | $mode/direct |"
  rule+="---|---|"
done
echo "$header"
echo "$rule"
declare -A RATIOS
for q in "${QUERIES[@]}"; do
  read -r d_lat d_cpu <<<"$(run "$PG_PORT" postgres "" "${q//:tbl/adult_direct}")"
  read -r r_lat r_cpu <<<"$(run "$PG_PORT" postgres "$PGOPTS_RS" "${q//:tbl/adult_direct}")"
  shown="${q//:tbl/t}"
  label="\`$shown\`"
  [[ "$q" == PARAM\ * ]] && label="\`${shown#PARAM }\` (extended, :age = 39)"
  [[ "$q" == ASIDE\ * ]] && label="\`${shown#ASIDE }\` (not in the median)"
  line="| $label | $d_lat ($d_cpu) | $r_lat ($r_cpu) |"
  for mode in $MODES; do
    read -r m_lat m_cpu <<<"$(run "$KANON_PORT" analyst "" "${q//:tbl/$(tbl "$mode")}")"
    if [[ "$q" == *LIMIT* ]]; then
      added="$(awk -v a="$m_lat" -v b="$d_lat" 'BEGIN { printf "%+.1f ms", a - b }')"
      line+=" $m_lat ($m_cpu) | $added |"
    else
      r="$(ratio "$m_lat" "$d_lat")"
      [[ "$q" == PARAM\ * || "$q" == ASIDE\ * ]] || RATIOS[$mode]+="$r "
      line+=" $m_lat ($m_cpu) | ${r}x |"
    fi
  done
  echo "$line"
done
summary="| **median of the aggregates** | | |"
for mode in $MODES; do
  med="$(printf '%s\n' ${RATIOS[$mode]} | median)"
  worst="$(printf '%s\n' ${RATIOS[$mode]} | sort -n | tail -1)"
  summary+=" | ${med}x (worst ${worst}x) |"
done
echo "$summary"

[ "$CLIENTS" -gt 0 ] || exit 0
# throughput PORT USER TABLE -> queries per second of CLIENTS concurrent
# clients sending the aggregates (pgbench picks one per transaction).
throughput() {
  local port="$1" user="$2" table="$3" args=() i=0 q
  for q in "${QUERIES[@]}"; do
    [[ "$q" == *LIMIT* || "$q" == PARAM\ * || "$q" == ASIDE\ * ]] && continue
    i=$((i + 1))
    printf '%s;\n' "${q//:tbl/$table}" >"$WORK/c$i.sql"
    args+=(-f "$WORK/c$i.sql")
  done
  # One seed for every column: each client picks the same sequence of
  # queries directly and in every mode, so the ratios compare like mixes.
  pgbench -n -M simple "${args[@]}" -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" \
    --random-seed=20261126 -h 127.0.0.1 \
    -p "$port" -U "$user" postgres 2>&1 | sed -nE 's/^tps = ([0-9.]+) .*/\1/p' | head -1
}
echo
echo "$CLIENTS concurrent clients, the aggregates at random, ${DURATION} s each," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
direct_qps="$(throughput "$PG_PORT" postgres adult_direct)"
line="| direct: $direct_qps q/s |"
for mode in $MODES; do
  qps="$(throughput "$KANON_PORT" analyst "$(tbl "$mode")")"
  line+=" $mode: $qps q/s ($(ratio "$qps" "$direct_qps")x) |"
done
echo "$line"
