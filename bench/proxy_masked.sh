#!/usr/bin/env bash
# Masked-query benchmark (not a test): the BI queries of the policy
# benchmark sent through kanon by a restricted user (rewritten with the
# inline masks, restricted_settings applied) against the same raw queries
# sent straight to PostgreSQL, in one run. The table is ADULT repeated
# --copies times with k = 5 x copies (the same tree as k=5 on ADULT).
# Prints the mean latency of each query both ways and the ratio, and the
# ratio of the total times.
#
#   bench/proxy_masked.sh [--copies N] [--reps N] [--mode inline|materialized|view]
#
# --mode sets the policy's enforcement mode (default inline): materialized
# reads kanon's masked copy, view its masked view (docs/policy.md).
#
# Needs a Release build in build/ (scripts/build.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COPIES=8
REPS=5
MODE=inline
while [ $# -gt 0 ]; do
  case "$1" in
    --copies) COPIES="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --mode) MODE="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
KANON="${KANON_BIN:-$ROOT/build/app/kanon}"
[ -x "$KANON" ] || { echo "build kanon first: scripts/build.sh" >&2; exit 1; }

free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
}
wait_port() {
  for _ in $(seq 400); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done
  return 1
}

eval "$("$ROOT/scripts/pg-sandbox.sh" start --demo --owner-pid $$)"
WORK="$(mktemp -d /tmp/kanon-masked.XXXXXX)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$ROOT/scripts/pg-sandbox.sh" stop "$KANON_PG_DIR"
  rm -rf "$WORK"
}
trap cleanup EXIT
PG_PORT="$KANON_PG_PORT"
PSQL=(psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres)
"${PSQL[@]}" -c "CREATE TABLE public.adult_big AS SELECT a.* FROM public.adult a,
                 generate_series(1, $COPIES); ANALYZE public.adult_big;
                 CREATE TABLE public.occupation_group (occupation text PRIMARY KEY, grp text);
                 INSERT INTO public.occupation_group SELECT DISTINCT occupation,
                   left(occupation, 1) FROM public.adult;
                 GRANT SELECT ON public.adult_big, public.occupation_group TO analyst;"
K=$((5 * COPIES))
cat >"$WORK/policy.yaml" <<YAML
tables:
  - table: public.adult_big
    k: $K
    quasi_identifiers: [sex, age, race, marital-status, education, native-country, workclass,
                        occupation]
    exempt: [postgres]
    max_nodes: 8192
    mode: $MODE
YAML
KANON_PORT="$(free_port)"
cat >"$WORK/kanon.yaml" <<YAML
listen: {host: 127.0.0.1, port: $KANON_PORT}
backend: {host: 127.0.0.1, port: $PG_PORT, user: postgres, dbname: postgres, sslmode: disable}
log_level: warning
policies: [$WORK/policy.yaml]
YAML
"$KANON" proxy --config "$WORK/kanon.yaml" 2>"$WORK/kanon.log" &
PIDS+=($!)
wait_port "$KANON_PORT" || { echo "kanon did not start" >&2; cat "$WORK/kanon.log" >&2; exit 1; }

QUERIES=(
  'SELECT occupation, sex, count(*) FROM adult_big GROUP BY occupation, sex'
  'SELECT education, count(*) FROM adult_big GROUP BY education'
  'SELECT count(*) FROM adult_big WHERE age = 39'
  'SELECT count(DISTINCT "native-country") FROM adult_big'
  'SELECT * FROM adult_big LIMIT 1000'
  'SELECT a.workclass, g.grp, count(*) FROM adult_big a JOIN occupation_group g USING (occupation) GROUP BY 1, 2'
)
mean_ms() {  # port user sql -> mean latency in ms over REPS runs (after one warm-up)
  printf '%s;\n' "$3" >"$WORK/q.sql"
  pgbench -n -M simple -f "$WORK/q.sql" -t 1 -h 127.0.0.1 -p "$1" -U "$2" postgres >/dev/null 2>&1
  pgbench -n -M simple -f "$WORK/q.sql" -t "$REPS" -h 127.0.0.1 -p "$1" -U "$2" postgres 2>&1 |
    sed -nE 's/^latency average = ([0-9.]+) ms/\1/p'
}

echo "ADULT x $COPIES ($("${PSQL[@]}" -Atc "SELECT count(*) FROM adult_big") rows), k=$K," \
  "$REPS runs per cell, $(nproc) cores; raw = postgres straight to PostgreSQL," \
  "masked = analyst through kanon (mode: $MODE)"
echo "| query | raw ms | masked ms | masked/raw |"
echo "|---|---|---|---|"
total_raw=0
total_masked=0
for q in "${QUERIES[@]}"; do
  raw="$(mean_ms "$PG_PORT" postgres "$q")"
  masked="$(mean_ms "$KANON_PORT" analyst "$q")"
  ratio="$(awk -v a="$masked" -v b="$raw" 'BEGIN { printf "%.2f", a / b }')"
  total_raw="$(awk -v a="$total_raw" -v b="$raw" 'BEGIN { print a + b }')"
  total_masked="$(awk -v a="$total_masked" -v b="$masked" 'BEGIN { print a + b }')"
  printf '| %s | %.1f | %.1f | %sx |\n' "$q" "$raw" "$masked" "$ratio"
done
printf '| **total** | %.1f | %.1f | %sx |\n' "$total_raw" "$total_masked" \
  "$(awk -v a="$total_masked" -v b="$total_raw" 'BEGIN { printf "%.2f", a / b }')"
