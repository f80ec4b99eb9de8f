# Sourced by bench/proxy_masked.sh --first-statement N: a new session's first
# `SELECT * ... LIMIT 1000`, taken apart (see that script's header). Uses its
# MODES, FIRST, PG_PORT, KANON_PORT, PGOPTS_RS, KANON_PG_DIR and tbl.

FS_LOG="$KANON_PG_DIR/server.log"
fs_psql() { psql -X -q -At -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres "$@"; }
fs_set() {  # setting value: ALTER SYSTEM and reload (new sessions see it)
  fs_psql -c "ALTER SYSTEM SET $1 = '$2'" -c "SELECT pg_reload_conf()" >/dev/null
}
fs_reset() { fs_psql -c "ALTER SYSTEM RESET $1" -c "SELECT pg_reload_conf()" >/dev/null; }

# rewritten MODE FILE: kanon's text for the query, from the server's log.
fs_rewritten() {
  local from
  fs_set log_statement all
  from=$(($(wc -l <"$FS_LOG") + 1))
  psql -X -q -h 127.0.0.1 -p "$KANON_PORT" -U analyst -d postgres \
    -c "SELECT * FROM public.$(tbl "$1") LIMIT 1000" >/dev/null
  fs_reset log_statement
  tail -n +"$from" "$FS_LOG" | grep -a 'LOG:  statement: .*LIMIT 1000' | tail -n 1 |
    sed -E 's/^.*LOG:  statement: //; s/$/;/' >"$2"
}

# one PORT USER OPTIONS FILE: the statement's duration in its backend (ms).
fs_one() {
  local from
  from=$(($(wc -l <"$FS_LOG") + 1))
  PGOPTIONS="$3" psql -X -q -h 127.0.0.1 -p "$1" -U "$2" -d postgres -f "$4" >/dev/null 2>&1 ||
    { echo "-"; return; }
  tail -n +"$from" "$FS_LOG" | grep -a 'duration: .*LIMIT 1000' | tail -n 1 |
    sed -nE 's/.*duration: ([0-9.]+) ms.*/\1/p'
}

first_statement_table() {
  local mode spec name port user opts file i
  echo "ADULT x $COPIES, k=$K; a new session's first SELECT * ... LIMIT 1000: its duration" \
    "inside the backend (ms), median (min-max) of $FIRST sessions per cell, cells interleaved;" \
    "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);" \
    "commit $(git -C "$ROOT" rev-parse --short HEAD)"
  echo "| mode | cell | ms (min-max) | over direct |"
  echo "|---|---|---|---|"
  for mode in $MODES; do
    local dir="$WORK/first-$mode" t
    mkdir -p "$dir"
    t="$(tbl "$mode")"
    echo "SELECT * FROM public.$t LIMIT 1000;" >"$dir/plain.sql"
    fs_rewritten "$mode" "$dir/rewritten.sql"
    sed -E 's/ WHERE "kanon_mask"\."catalog_(is|stays)"\([0-9]+::pg_catalog\.int8\)//' \
      "$dir/rewritten.sql" >"$dir/no-guard.sql"
    sed -E "s/\"kanon_mask\"\.\"released\"\(E'[^']*'::pg_catalog\.bytea(, \"[^\"]+\")*\)/true/g" \
      "$dir/no-guard.sql" >"$dir/no-masks.sql"
    local cells=(
      "direct|$PG_PORT|postgres||$dir/plain.sql"
      "direct, analyst, restricted settings|$PG_PORT|analyst|$PGOPTS_RS|$dir/plain.sql"
      "rewritten, sent directly|$PG_PORT|analyst|$PGOPTS_RS|$dir/rewritten.sql"
      "rewritten, without the catalog guard|$PG_PORT|analyst|$PGOPTS_RS|$dir/no-guard.sql"
    )
    cmp -s "$dir/no-guard.sql" "$dir/no-masks.sql" ||
      cells+=("rewritten, no guard, masks as true|$PG_PORT|analyst|$PGOPTS_RS|$dir/no-masks.sql")
    cells+=("through kanon|$KANON_PORT|analyst||$dir/plain.sql")
    declare -A got=()
    fs_set log_min_duration_statement 0
    for i in $(seq "$FIRST"); do
      for spec in "${cells[@]}"; do
        IFS='|' read -r name port user opts file <<<"$spec"
        got[$name]+="$(fs_one "$port" "$user" "$opts" "$file") "
      done
    done
    fs_reset log_min_duration_statement
    local base
    base="$(printf '%s\n' ${got[direct]} | grep -v '^-$' | sort -n |
      awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : 0) }')"
    for spec in "${cells[@]}"; do
      IFS='|' read -r name _ _ _ _ <<<"$spec"
      printf '%s\n' ${got[$name]} | sort -n | awk -v m="$mode" -v c="$name" -v b="$base" '
        $1 == "-" { failed++; next }
        { a[++n] = $1 }
        END {
          if (!n) { printf "| %s | %s | failed | |\n", m, c; exit }
          med = a[int((n + 1) / 2)]
          printf "| %s | %s | %.2f (%.2f-%.2f)%s | %+.2f |\n", m, c, med, a[1], a[n],
            (failed ? " " failed " failed" : ""), med - b
        }'
    done
    unset got
  done
}
