#!/usr/bin/env bash
# PostgreSQL's own regression suite (src/test/regress, parallel_schedule) of
# the installed server's exact Debian version, run three times: directly,
# through kanon as an exempt login, and through kanon as a restricted login;
# and a read-mostly subset (tests/regress/analyst_schedule) run twice as the
# non-superuser `analyst`: directly and through kanon. See tests/regress/README.md.
#
#   regress-suite.sh fetch
#       Downloads the source package of the installed postgresql-15 (exactly
#       its version; adds a deb-src entry for the Debian archive if apt has
#       none) into ${KANON_CACHE:-$HOME/.cache/kanon}/postgresql-<version>,
#       and builds regress.so, refint.so and autoinc.so there against the
#       server headers (postgresql-server-dev-15 of the same version).
#       Skipped when the cache is complete.
#   regress-suite.sh run [--update-expected] [--out DIR] [--schedule FILE]
#                        [--analyst-schedule FILE] [--sequential]
#                        [--phases direct,exempt,restricted,analyst-direct,analyst]
#       fetch, then the five runs (at the same time, each with its own
#       cluster; one after the other with --sequential), then the comparison
#       (tests/regress/compare_results.py).
#       --update-expected rewrites tests/regress/restricted_expected_diffs.txt
#       and analyst_expected_diffs.txt from this run. --phases runs only some phases and compares with the
#       results already in DIR. Results are kept in DIR (default
#       build/regress): direct/, exempt/, restricted/ (each pg_regress's
#       output directory: results/, pg_regress.log, regression.diffs),
#       kanon-exempt.log, kanon-restricted.log, restricted-hunks.txt (every
#       differing hunk with its attribution), timings.txt.
#
# Environment: KANON_CACHE (cache root), KANON_BIN (the kanon executable,
# default build/app/kanon), KANON_PGBIN (PostgreSQL's bin directory),
# KANON_REGRESS_TIMEOUT (seconds per pg_regress run, default 1200).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PGBIN="${KANON_PGBIN:-/usr/lib/postgresql/15/bin}"
PG_REGRESS="${KANON_PG_REGRESS:-/usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress}"
CACHE_ROOT="${KANON_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/kanon}"
EXPECTED_DIFFS="$ROOT/tests/regress/restricted_expected_diffs.txt"
ANALYST_EXPECTED_DIFFS="$ROOT/tests/regress/analyst_expected_diffs.txt"
SRC_PACKAGE=postgresql-15
APT_OPTS=(-o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30 -o Acquire::Retries=3)

say() { echo "regress-suite: $*"; }
die() {
  echo "regress-suite: ERROR: $*" >&2
  exit 1
}

SUDO=""
need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "$1 needs root or sudo"
    SUDO="sudo"
  fi
}

# The Debian version of the installed server, checked against the binary.
server_version() {
  local ver
  ver="$(dpkg-query -W -f='${Version}' "$SRC_PACKAGE" 2>/dev/null)" ||
    die "$SRC_PACKAGE is not installed (scripts/install-deps.sh installs it)"
  [ -n "$ver" ] || die "$SRC_PACKAGE is not installed (scripts/install-deps.sh installs it)"
  local binary
  binary="$("$PGBIN/postgres" --version)"
  case "$binary" in
    *"(Debian $ver)"*) ;;
    *) die "the server binary says '$binary' but the package $SRC_PACKAGE is $ver" ;;
  esac
  echo "$ver"
}

# True when apt knows at least one deb-src entry.
have_deb_src() {
  grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' \
    /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null
}

# Adds deb-src twins of the enabled deb entries (deb822 .sources files and
# one-line sources.list files alike).
add_deb_src() {
  need_root "adding a deb-src entry"
  local out=/etc/apt/sources.list.d/kanon-deb-src.sources tmp
  tmp="$(mktemp)"
  {
    echo "# Added by kanon's scripts/regress-suite.sh: source packages of the suites"
    echo "# the binary packages come from (PostgreSQL's regression suite)."
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      # Each stanza whose Types include deb (and that is not disabled) again,
      # with Types: deb-src.
      awk '
        function flush() {
          if (n > 0 && isdeb && !disabled) {
            for (i = 1; i <= n; i++) print lines[i]
            print ""
          }
          n = 0; isdeb = 0; disabled = 0
        }
        /^[[:space:]]*$/ { flush(); next }
        /^[[:space:]]*#/ { next }
        /^Types:/ { if ($0 ~ /[[:space:]]deb([[:space:]]|$)/) isdeb = 1; lines[++n] = "Types: deb-src"; next }
        /^Enabled:[[:space:]]*no/ { disabled = 1 }
        { lines[++n] = $0 }
        END { flush() }
      ' "$f"
    done
  } >"$tmp"
  local lists=""
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && lists+="$(sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f")"$'\n'
  done
  if grep -q '^Types: deb-src' "$tmp"; then
    $SUDO install -m 644 "$tmp" "$out"
    say "added $out"
  fi
  if [ -n "${lists//[$'\n']/}" ]; then
    printf '%s' "$lists" | $SUDO tee /etc/apt/sources.list.d/kanon-deb-src.list >/dev/null
    say "added /etc/apt/sources.list.d/kanon-deb-src.list"
  fi
  rm -f "$tmp"
  have_deb_src || die "found no deb entry to derive a deb-src entry from in /etc/apt"
}

source_available() {  # version
  local versions
  versions="$(apt-cache showsrc "$SRC_PACKAGE" 2>/dev/null | sed -n 's/^Version: //p')"
  grep -qxF "$1" <<<"$versions"
}

fetch() {
  local ver dir
  ver="$(server_version)"
  dir="$CACHE_ROOT/postgresql-$ver"
  if [ -f "$dir/complete" ]; then
    say "postgresql-15 $ver: source and test libraries cached in $dir"
    return 0
  fi
  local started=$SECONDS
  mkdir -p "$dir"
  # One fetch at a time per version (a second one waits, then finds it done).
  exec 9>"$dir.lock"
  flock -w 1800 9 || die "another fetch holds $dir.lock"
  if [ -f "$dir/complete" ]; then
    exec 9>&-
    say "postgresql-15 $ver: fetched meanwhile by another process"
    return 0
  fi
  if [ ! -f "$dir/source-complete" ]; then
    if ! source_available "$ver"; then
      have_deb_src || add_deb_src
      need_root "apt-get update"
      say "apt-get update (deb-src indices)"
      timeout 600 $SUDO apt-get "${APT_OPTS[@]}" update -qq </dev/null ||
        die "apt-get update failed or timed out"
    fi
    if ! source_available "$ver"; then
      echo "regress-suite: ERROR: ********************************************************" >&2
      echo "regress-suite: ERROR: the Debian archive has no source package $SRC_PACKAGE $ver," >&2
      echo "regress-suite: ERROR: the version of the installed server. Available:" >&2
      apt-cache showsrc "$SRC_PACKAGE" 2>/dev/null | sed -n 's/^Version: /regress-suite: ERROR:   /p' >&2
      echo "regress-suite: ERROR: refusing to test against another version's suite." >&2
      echo "regress-suite: ERROR: ********************************************************" >&2
      exit 1
    fi
    local tmp
    tmp="$(mktemp -d "$dir/download.XXXXXX")"
    say "apt-get source $SRC_PACKAGE=$ver into $dir"
    # apt-get source verifies the files against the signed index and
    # dpkg-source applies Debian's patches: the tree the binaries were built from.
    (cd "$tmp" && timeout 900 apt-get "${APT_OPTS[@]}" source -q "$SRC_PACKAGE=$ver" \
      </dev/null >"$tmp/apt-get-source.log" 2>&1) || {
      tail -n 20 "$tmp/apt-get-source.log" >&2
      rm -rf "$tmp"
      die "apt-get source $SRC_PACKAGE=$ver failed or timed out"
    }
    local tree
    tree="$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name "$SRC_PACKAGE-*" | head -n 1)"
    [ -n "$tree" ] && [ -f "$tree/src/test/regress/parallel_schedule" ] ||
      { rm -rf "$tmp"; die "apt-get source left no source tree with src/test/regress"; }
    rm -rf "$dir/src"
    mv "$tree" "$dir/src"
    mv "$tmp"/*.dsc "$dir/" 2>/dev/null || true
    rm -rf "$tmp"
    echo "$ver" >"$dir/source-complete"
  fi
  build_libs "$ver" "$dir"
  echo "$ver" >"$dir/complete"
  exec 9>&-
  say "postgresql-15 $ver fetched and built in $((SECONDS - started)) s"
}

# regress.so (src/test/regress/regress.c) and refint.so, autoinc.so
# (contrib/spi, loaded by the triggers test), compiled against the installed
# server's headers.
build_libs() {  # version dir
  local ver="$1" dir="$2" devver inc
  devver="$(dpkg-query -W -f='${Version}' postgresql-server-dev-15 2>/dev/null || true)"
  [ "$devver" = "$ver" ] ||
    die "postgresql-server-dev-15 is '${devver:-not installed}', the server $ver (scripts/install-deps.sh installs the matching version)"
  inc="$("$PGBIN/pg_config" --includedir-server)"
  [ -f "$inc/postgres.h" ] || die "no server headers in $inc"
  mkdir -p "$dir/lib"
  local cflags=(-O2 -fPIC -shared -fno-strict-aliasing -fwrapv -fexcess-precision=standard
                -Wno-deprecated-declarations -I"$inc")
  gcc "${cflags[@]}" -o "$dir/lib/regress.so" "$dir/src/src/test/regress/regress.c" -lm
  # contrib/spi/Makefile builds refint with REFINT_VERBOSE (the triggers
  # test's expected NOTICEs need it).
  gcc "${cflags[@]}" -DREFINT_VERBOSE -o "$dir/lib/refint.so" "$dir/src/contrib/spi/refint.c"
  gcc "${cflags[@]}" -o "$dir/lib/autoinc.so" "$dir/src/contrib/spi/autoinc.c"
  say "built regress.so, refint.so, autoinc.so against $inc"
}

# ---------------------------------------------------------------- run

PG_DIR=""
KANON_PID=""
REGRESS_PID=""
WORK=""
cleanup() {
  if [ -n "$REGRESS_PID" ]; then
    kill "$REGRESS_PID" 2>/dev/null || true  # timeout passes it on to pg_regress
    wait "$REGRESS_PID" 2>/dev/null || true
    REGRESS_PID=""
  fi
  if [ -n "$KANON_PID" ]; then
    kill "$KANON_PID" 2>/dev/null || true
    wait "$KANON_PID" 2>/dev/null || true
    KANON_PID=""
  fi
  if [ -n "$PG_DIR" ]; then
    "$ROOT/scripts/pg-sandbox.sh" stop "$PG_DIR" || true
    PG_DIR=""
  fi
  if [ -n "$WORK" ]; then
    rm -rf "$WORK"
    WORK=""
  fi
}

start_cluster() {
  local vars owner="$BASHPID"  # this (sub)shell, not the command substitution's
  vars="$("$ROOT/scripts/pg-sandbox.sh" start --owner-pid "$owner")" || die "pg-sandbox.sh start failed"
  PG_DIR="$(sed -n 's/^KANON_PG_DIR=//p' <<<"$vars")"
  PG_PORT="$(sed -n 's/^KANON_PG_PORT=//p' <<<"$vars")"
  [ -n "$PG_DIR" ] && [ -n "$PG_PORT" ] || die "pg-sandbox.sh printed no cluster"
}

free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    ss -Hltn "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
  done
}

# The table the policy protects; the suite never touches it.
create_guard_table() {
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres <<'SQL'
CREATE SCHEMA kanon_guard;
CREATE TABLE kanon_guard.protected_demo (id int PRIMARY KEY, zip text, age int, diagnosis text);
INSERT INTO kanon_guard.protected_demo
  SELECT i, '1300' || (i % 3), 20 + i % 4, 'd' || (i % 5) FROM generate_series(1, 60) AS i;
SQL
}

start_kanon() {  # phase
  local phase="$1" exempt
  case "$phase" in
    exempt) exempt="exempt: [postgres]" ;;
    # No exemption at all: the login is a superuser, and a superuser is a
    # member of every role (pg_has_role), so any existing role in exempt:
    # would exempt it.
    restricted) exempt="# no exempt: every login is restricted" ;;
    analyst) exempt="# no exempt: the analyst is restricted" ;;
  esac
  cat >"$WORK/policy-$phase.yaml" <<YAML
tables:
  - table: kanon_guard.protected_demo
    k: 2
    quasi_identifiers: [zip, age]
    $exempt
YAML
  local attempt i log="$OUT/kanon-$phase.log"
  for attempt in 1 2 3 4 5; do  # a port found free may be taken by the time kanon binds it
    KANON_PORT="$(free_port)"
    cat >"$WORK/kanon-$phase.yaml" <<YAML
listen: {host: 127.0.0.1, port: $KANON_PORT}
backend: {host: 127.0.0.1, port: $PG_PORT, user: postgres, dbname: postgres, sslmode: disable}
log_level: info   # the policy build, then one warning per denial
limits: {max_clients: 200}
policies: [policy-$phase.yaml]
# The suite runs in its own database, which holds nothing kanon protects; a
# restricted login may use it only because it is listed (docs/security.md).
databases: [regression]
YAML
    "$KANON_BIN" proxy --config "$WORK/kanon-$phase.yaml" >"$log" 2>&1 &
    KANON_PID=$!
    for i in $(seq 1 300); do
      kill -0 "$KANON_PID" 2>/dev/null || break
      # Listening, and the policy built: the restricted phase must be
      # restricted by a real tree, not by a failed build.
      if grep -q "policy kanon_guard.protected_demo: k=2" "$log" &&
        (exec 3<>"/dev/tcp/127.0.0.1/$KANON_PORT") 2>/dev/null; then
        return 0
      fi
      grep -q "policy kanon_guard.protected_demo: not built" "$log" && break
      sleep 0.1
    done
    stop_kanon
    grep -q "policy kanon_guard.protected_demo: not built" "$log" && break
  done
  cat "$log" >&2
  die "kanon did not start (listening on $KANON_PORT with the policy built)"
}

stop_kanon() {
  kill "$KANON_PID" 2>/dev/null || true
  wait "$KANON_PID" 2>/dev/null || true
  KANON_PID=""
}

# pg_regress in installcheck mode: it drops and creates the database
# `regression` itself (through whatever listens on host:port), then runs the
# schedule. The work directory differs between phases; its name appears in
# no result of the direct run (the exempt comparison would show it), and the
# comparison of the restricted run normalizes it.
run_pg_regress() {  # phase port [user schedule extra-option]
  local phase="$1" port="$2" user="${3:-postgres}" schedule="${4:-$SCHEDULE}" extra="${5:-}" rc=0
  rm -rf "$WORK/out"
  mkdir "$WORK/out"
  chown postgres: "$WORK/out" 2>/dev/null || true
  # In the background and waited for: a TERM to this shell runs its trap at
  # once (bash defers traps while a foreground child runs); cleanup stops it.
  (cd "$WORK" && exec timeout --kill-after=30 "${KANON_REGRESS_TIMEOUT:-1200}" \
    "${AS_SERVER_USER[@]}" env -i PATH=/usr/bin:/bin HOME="$WORK" LANG=C.UTF-8 "$PG_REGRESS" \
    --inputdir="$WORK/suite" --outputdir="$WORK/out" --bindir="$PGBIN" --dlpath="$WORK/lib" \
    --max-concurrent-tests=20 --host=127.0.0.1 --port="$port" --user="$user" \
    --dbname=regression --schedule="$schedule" ${extra:+"$extra"} >"$WORK/out/pg_regress.log" 2>&1) &
  REGRESS_PID=$!
  wait "$REGRESS_PID" || rc=$?
  REGRESS_PID=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then die "pg_regress ($phase) timed out"; fi
  rm -rf "${OUT:?}/$phase"
  cp -r "$WORK/out" "$OUT/$phase"
  local ok failed
  ok="$(grep -cE '\.\.\. ok' "$WORK/out/pg_regress.log" || true)"
  failed="$(grep -cE '\.\.\. FAILED' "$WORK/out/pg_regress.log" || true)"
  say "$phase: pg_regress exit $rc; $ok tests matched upstream's expected output, $failed did not"
  [ -d "$WORK/out/results" ] || die "pg_regress ($phase) produced no results; see $OUT/$phase/pg_regress.log"
}

# The analyst phases: test_setup as postgres, directly (pg_regress creates
# the database), then the login `analyst` (pg-sandbox.sh creates it) loses
# pg_read_all_data and gets what a reader needs: SELECT on test_setup's
# tables and CREATE on schema public for its own scratch tables.
analyst_setup() {  # phase
  run_pg_regress "$1-setup" "$PG_PORT" postgres "$WORK/suite/setup_schedule"
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d regression <<'SQL'
REVOKE pg_read_all_data FROM analyst;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO analyst;
GRANT CREATE ON SCHEMA public TO analyst;
SQL
}

# One phase in its own work directory: a fresh cluster, kanon in front of it
# (exempt, restricted), pg_regress; the results are copied to $OUT/<phase>.
# Runs in a subshell: its cleanup trap stops what it started.
run_phase() {  # phase
  local phase="$1" t="$SECONDS"
  PG_DIR="" KANON_PID="" REGRESS_PID="" WORK=""
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  WORK="$(mktemp -d /tmp/kanon-regress.XXXXXX)"
  chmod 755 "$WORK"
  # The server reads the data files and writes COPY output files itself (as
  # the postgres user): the suite runs from a copy it can reach.
  mkdir -p "$WORK/suite" "$WORK/lib"
  cp -r "$SUITE_SRC/sql" "$SUITE_SRC/expected" "$SUITE_SRC/data" "$SUITE_SRC/resultmap" "$WORK/suite/"
  cp "$SCHEDULE_SRC" "$WORK/suite/schedule"
  cp "$ANALYST_SCHEDULE_SRC" "$WORK/suite/analyst_schedule"
  echo "test: test_setup" >"$WORK/suite/setup_schedule"
  cp "$LIB_DIR/"*.so "$WORK/lib/"
  SCHEDULE="$WORK/suite/schedule"
  AS_SERVER_USER=()
  if [ "$(id -u)" -eq 0 ]; then
    chown -R postgres: "$WORK"
    AS_SERVER_USER=("$(command -v runuser || echo /usr/sbin/runuser)" -u postgres --)
  fi
  start_cluster
  if [ "$phase" = direct ]; then
    run_pg_regress "$phase" "$PG_PORT"
  elif [ "$phase" = analyst-direct ] || [ "$phase" = analyst ]; then
    analyst_setup "$phase"
    if [ "$phase" = analyst-direct ]; then
      run_pg_regress "$phase" "$PG_PORT" analyst "$WORK/suite/analyst_schedule" --use-existing
    else
      create_guard_table
      start_kanon "$phase"
      run_pg_regress "$phase" "$KANON_PORT" analyst "$WORK/suite/analyst_schedule" --use-existing
      stop_kanon
    fi
  else
    create_guard_table
    start_kanon "$phase"
    run_pg_regress "$phase" "$KANON_PORT"
    stop_kanon
  fi
  # CPU seconds, which other load on the machine does not inflate: the
  # server (the postmaster and its exited backends) and this subshell's
  # children (pg_regress, psql, kanon).
  local server_cpu ours_cpu
  server_cpu="$(server_cpu_seconds)"
  times >"$WORK/times"  # not in a pipe: a subshell would report its own children
  ours_cpu="$(tail -n 1 "$WORK/times" | awk '{ gsub("s", ""); split($1, u, "m"); split($2, s, "m");
    printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')"
  echo "$phase $((SECONDS - t)) s wall, CPU: server ${server_cpu} s, clients and kanon ${ours_cpu} s" \
    >"$OUT/$phase/seconds"
}

server_cpu_seconds() {
  local pid
  pid="$(head -n 1 "$PG_DIR/data/postmaster.pid" 2>/dev/null)" || { echo "?"; return; }
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f", ($14 + $15 + $16 + $17) / hz }' \
    "/proc/$pid/stat" 2>/dev/null || echo "?"
}

run() {
  local update=0 schedule="" analyst_schedule="" phases="direct exempt restricted analyst-direct analyst" parallel=1
  OUT="$ROOT/build/regress"
  while [ $# -gt 0 ]; do
    case "$1" in
      --update-expected) update=1; shift ;;
      --out) OUT="$2"; shift 2 ;;
      --schedule) schedule="$2"; shift 2 ;;
      --analyst-schedule) analyst_schedule="$2"; shift 2 ;;
      --phases) phases="${2//,/ }"; shift 2 ;;
      --parallel) parallel=1; shift ;;
      --sequential) parallel=0; shift ;;
      --compare-only) phases=""; shift ;;  # compare the results already in DIR
      *) die "unknown option $1" ;;
    esac
  done
  KANON_BIN="${KANON_BIN:-$ROOT/build/app/kanon}"
  [ -x "$KANON_BIN" ] || die "no kanon executable at $KANON_BIN (build first, or set KANON_BIN)"
  KANON_BIN="$(cd "$(dirname "$KANON_BIN")" && pwd)/$(basename "$KANON_BIN")"
  [ -x "$PG_REGRESS" ] || die "no pg_regress at $PG_REGRESS (postgresql-client-15 ships it)"
  local t0=$SECONDS t
  fetch
  local ver dir
  ver="$(server_version)"
  dir="$CACHE_ROOT/postgresql-$ver"
  local t_fetch=$((SECONDS - t0))
  mkdir -p "$OUT"
  OUT="$(cd "$OUT" && pwd)"
  SUITE_SRC="$dir/src/src/test/regress"
  SCHEDULE_SRC="${schedule:-$SUITE_SRC/parallel_schedule}"
  ANALYST_SCHEDULE_SRC="${analyst_schedule:-$ROOT/tests/regress/analyst_schedule}"
  LIB_DIR="$dir/lib"
  local phase failed=0
  PHASE_PIDS=()
  # Stopped, each phase stops its own kanon and cluster (its EXIT trap).
  trap '[ ${#PHASE_PIDS[@]} -eq 0 ] || kill "${PHASE_PIDS[@]}" 2>/dev/null; exit 130' INT TERM
  t="$SECONDS"
  for phase in $phases; do
    rm -rf "${OUT:?}/$phase"
    # Always in the background and waited for, so that the trap above runs
    # at once.
    (run_phase "$phase") &
    PHASE_PIDS+=($!)
    if [ $parallel -eq 0 ]; then
      wait "${PHASE_PIDS[0]}" || failed=1
      PHASE_PIDS=()
    fi
  done
  local pid
  for pid in "${PHASE_PIDS[@]}"; do wait "$pid" || failed=1; done
  PHASE_PIDS=()
  [ $failed -eq 0 ] || die "a phase failed (see above)"
  local t_phases=$((SECONDS - t))
  t="$SECONDS"
  rm -f "$OUT/summary.txt"
  [ -d "$OUT/direct/results" ] || [ -d "$OUT/analyst-direct/results" ] ||
    die "no direct run in $OUT to compare with"
  local args=(--direct "$OUT/direct/results" --expected "$EXPECTED_DIFFS" --sql "$SUITE_SRC/sql"
              --source "$dir/src" --kanon-log "$OUT/kanon-restricted.log"
              --report "$OUT/restricted-hunks.txt" --summary "$OUT/summary.txt" --version "$ver")
  [ -d "$OUT/exempt/results" ] && args+=(--exempt "$OUT/exempt/results")
  [ -d "$OUT/restricted/results" ] && args+=(--restricted "$OUT/restricted/results")
  if [ -d "$OUT/analyst/results" ] && [ -d "$OUT/analyst-direct/results" ]; then
    args+=(--analyst-direct "$OUT/analyst-direct/results" --analyst "$OUT/analyst/results"
           --analyst-expected "$ANALYST_EXPECTED_DIFFS" --analyst-kanon-log "$OUT/kanon-analyst.log"
           --analyst-report "$OUT/analyst-hunks.txt")
  fi
  [ $update -eq 1 ] && args+=(--update)
  local rc=0
  python3 "$ROOT/tests/regress/compare_results.py" "${args[@]}" || rc=$?
  local t_compare=$((SECONDS - t))
  {
    echo "fetch $t_fetch s"
    cat "$OUT"/*/seconds 2>/dev/null || true
    echo "phases $t_phases s"
    echo "compare $t_compare s"
    echo "total $((SECONDS - t0)) s"
  } >"$OUT/timings.txt"
  say "timings: $(paste -sd, "$OUT/timings.txt" | sed 's/,/, /g')"
  return $rc
}

case "${1:-}" in
  fetch) shift; [ $# -eq 0 ] || die "usage: $0 fetch"; fetch ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 fetch | run [--update-expected] [--out DIR] [--schedule FILE] [--analyst-schedule FILE] [--phases LIST] [--sequential]" >&2
     exit 2 ;;
esac
