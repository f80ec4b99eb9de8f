#!/usr/bin/env bash
# What schema-qualified masks cost (not a test): PostgreSQL's planning time
# of the masked ADULT read (the masks `kanon tree --format sql` compiles from
# the demo table, k = 10 x copies) as kanon writes them — `OPERATOR(pg_catalog.=)`,
# `::pg_catalog.text` — against the same masks with bare `=` and `::text`,
# the form before issue 26, both measured in the same run on the same
# server, alternating.
#
#   bench/qualified_masks.sh [--reps N] [--k K]
#
# Prints, per form, the median and p90 over N EXPLAIN runs of the planner's
# time (EXPLAIN's SUMMARY) and of the whole EXPLAIN round trip (psql's
# \timing: parse, analysis, planning), and the ratios.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/bench/lib.sh"
REPS=200
K=10
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) REPS="$2"; shift 2 ;;
    --k) K="$2"; shift 2 ;;
    *) echo "usage: $0 [--reps N] [--k K]" >&2; exit 2 ;;
  esac
done
KANON="$ROOT/build/app/kanon"
[ -x "$KANON" ] || { echo "build kanon first (scripts/build.sh)" >&2; exit 1; }
start_sandbox qualified
cat >"$WORK/adult.yaml" <<YAML
tables:
  - table: public.adult
    k: $K
    quasi_identifiers: [sex, age, race, marital-status, education, native-country, workclass, occupation]
YAML
cat >"$WORK/kanon.yaml" <<YAML
backend: {host: 127.0.0.1, port: $KANON_PG_PORT, user: postgres, dbname: postgres}
policies: [$WORK/adult.yaml]
YAML
"$KANON" tree --config "$WORK/kanon.yaml" --table public.adult --format sql >"$WORK/qualified.sql"
sed -E 's/OPERATOR\(pg_catalog\.=\)/=/g; s/::pg_catalog\.("?)([a-z0-9_]+)\1/::\2/g' \
  "$WORK/qualified.sql" >"$WORK/bare.sql"
grep -q 'OPERATOR(pg_catalog.=)' "$WORK/qualified.sql" || { echo "no qualified masks?" >&2; exit 1; }
PSQL=(psql -X -At -q -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres -d postgres)
# One session runs both forms alternately; psql's \timing gives each
# EXPLAIN's round trip (parse, analysis, planning: what a masked statement
# costs before it runs), EXPLAIN's SUMMARY the planner's share.
q="$(sed -e 's/;[[:space:]]*$//' "$WORK/qualified.sql")"
b="$(sed -e 's/;[[:space:]]*$//' "$WORK/bare.sql")"
{
  echo '\timing on'
  for i in $(seq 0 "$REPS"); do
    echo "EXPLAIN (SUMMARY ON, COSTS OFF) $q;"
    echo "EXPLAIN (SUMMARY ON, COSTS OFF) $b;"
  done
} >"$WORK/script.sql"
"${PSQL[@]}" -f "$WORK/script.sql" >"$WORK/out.txt"
# Per statement: its Planning Time line, then psql's Time line.
awk '/^Planning Time:/ {p=$3} /^Time:/ {n++; if (n > 2) print ((n % 2) ? "q" : "b"), p, $2}' \
  "$WORK/out.txt" >"$WORK/times.txt"
awk '$1 == "q" {print $2}' "$WORK/times.txt" >"$WORK/q_plan.txt"
awk '$1 == "b" {print $2}' "$WORK/times.txt" >"$WORK/b_plan.txt"
awk '$1 == "q" {print $3}' "$WORK/times.txt" >"$WORK/q_total.txt"
awk '$1 == "b" {print $3}' "$WORK/times.txt" >"$WORK/b_total.txt"
stat() {  # file -> "median p90"
  sort -g "$1" | awk '{v[NR]=$1} END {printf "%.3f %.3f", v[int((NR+1)/2)], v[int(NR*0.9)]}'
}
read -r qm q90 <<<"$(stat "$WORK/q_plan.txt")"
read -r bm b90 <<<"$(stat "$WORK/b_plan.txt")"
read -r qt qt90 <<<"$(stat "$WORK/q_total.txt")"
read -r bt bt90 <<<"$(stat "$WORK/b_total.txt")"
echo "masked ADULT read, k = $K, $(wc -c <"$WORK/qualified.sql") bytes qualified / $(wc -c <"$WORK/bare.sql") bytes bare, $REPS runs each"
printf '%-28s %12s %12s %14s %14s\n' "form" "plan median" "plan p90" "parse+plan med" "parse+plan p90"
printf '%-28s %12s %12s %14s %14s\n' "bare = and ::text (before)" "$bm" "$b90" "$bt" "$bt90"
printf '%-28s %12s %12s %14s %14s\n' "qualified (kanon now)" "$qm" "$q90" "$qt" "$qt90"
awk -v q="$qm" -v b="$bm" -v qt="$qt" -v bt="$bt" \
  'BEGIN {printf "qualified / bare (median): planning %.3fx, parse+analysis+planning %.3fx\n", q / b, qt / bt}'
