#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests, benchmarks and the demo.
#
#   pg-sandbox.sh start [--port N] [--demo] [--hardened] [--mask-function LIB [--preload]]
#                       [--owner-pid PID]
#       initdb in a new temporary directory, start on 127.0.0.1 (a free port
#       unless --port), create the test roles, and with --demo load the demo
#       tables (public.adult, public.people). --hardened sets the cluster up
#       as docs/security.md asks (what scripts/run.sh starts, and what
#       `kanon check` finds clean): only postgres may use the Unix socket,
#       and the other logins get SELECT on the demo tables instead of
#       pg_read_all_data, so they reach data only over TCP from 127.0.0.1,
#       kanon's address. --mask-function installs kanon_mask (maskfn/install.sql)
#       from the library LIB (build/maskfn/kanon_mask.so), copied into the
#       cluster's directory, in database postgres; with --preload the server
#       also loads it at start (shared_preload_libraries, then a restart), so
#       a new session does not load it at its first masked statement (maskfn/README.md).
#       Prints shell assignments:
#         KANON_PG_DIR=... KANON_PG_HOST=127.0.0.1 KANON_PG_PORT=...
#       With --owner-pid, a watchdog stops and removes the cluster as soon as
#       that process is gone, even if it was killed with SIGKILL.
#   pg-sandbox.sh preload DIR PORT LIB
#       have the cluster in DIR (on PORT) load the library LIB at start
#       (shared_preload_libraries) and restart it (what --preload does).
#   pg-sandbox.sh stop DIR
#       stop the cluster in DIR and remove DIR.
#
# PostgreSQL refuses to run as root; as root the server runs as the
# unprivileged 'postgres' user that Debian's package creates.
#
# Roles (all may log in over TCP on 127.0.0.1):
#   postgres (superuser, trust), kanon_md5 / md5-secret (md5),
#   kanon_scram / scram-secret (scram-sha-256), kanon_password /
#   password-secret (cleartext 'password'), analyst (trust).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PGBIN="${KANON_PGBIN:-/usr/lib/postgresql/15/bin}"

as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_in_use() {
  ss -Hltn "sport = :$1" 2>/dev/null | grep -q . 
}

stop_cluster() {
  local dir="$1"
  [ -d "$dir" ] || return 0
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_server_user "$PGBIN/pg_ctl" -D "$dir/data" stop -m immediate -w >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

write_hba() {
  cat >"$1/pg_hba.conf" <<'HBA'
local all all                        trust
host  all kanon_md5      127.0.0.1/32 md5
host  all kanon_scram    127.0.0.1/32 scram-sha-256
host  all kanon_password 127.0.0.1/32 password
host  all all            127.0.0.1/32 trust
HBA
}

# Only the superuser on the Unix socket; every other login over TCP from
# 127.0.0.1, the address kanon connects from.
write_hardened_hba() {
  cat >"$1/pg_hba.conf" <<'HBA'
local all postgres                   trust
host  all kanon_md5      127.0.0.1/32 md5
host  all kanon_scram    127.0.0.1/32 scram-sha-256
host  all kanon_password 127.0.0.1/32 password
host  all all            127.0.0.1/32 trust
HBA
}

# Table grants instead of pg_read_all_data (which also reads every future
# table, kanon's masked copies' sources included, and is not revocable per
# table).
harden_grants() {
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d postgres <<'SQL'
REVOKE pg_read_all_data FROM kanon_md5, kanon_scram, kanon_password, analyst;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO kanon_md5, kanon_scram, kanon_password, analyst;
SQL
}

create_roles() {
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d postgres <<'SQL'
SET password_encryption = 'md5';
CREATE ROLE kanon_md5 LOGIN PASSWORD 'md5-secret';
SET password_encryption = 'scram-sha-256';
CREATE ROLE kanon_scram LOGIN PASSWORD 'scram-secret';
CREATE ROLE kanon_password LOGIN PASSWORD 'password-secret';
CREATE ROLE analyst LOGIN;
GRANT pg_read_all_data TO kanon_md5, kanon_scram, kanon_password, analyst;
SQL
}

# The server reads the library from the cluster's directory (its user may
# not reach the build tree).
install_mask_function() {
  local port="$1" dir="$2" library="$3"
  [ -f "$library" ] || { echo "pg-sandbox: $library not found (build kanon first)" >&2; return 1; }
  cp "$library" "$dir/kanon_mask.so"
  chmod 644 "$dir/kanon_mask.so"
  psql -X -q -v ON_ERROR_STOP=1 -v library="$dir/kanon_mask.so" -h 127.0.0.1 -p "$port" \
    -U postgres -d postgres -f "$ROOT/maskfn/install.sql" >/dev/null
}

# The server loads `library` at start: set, then restart (pg_ctl reuses the
# options of the last start).
preload_library() {
  local dir="$1" port="$2" library="$3"
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -c "ALTER SYSTEM SET shared_preload_libraries = '$library'"
  as_server_user "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 restart -m fast \
    >/dev/null
}

load_demo() {
  local port="$1"
  local adult="${KANON_ADULT_CSV:-$ROOT/data/adult/adult.csv}"
  [ -f "$adult" ] || { echo "pg-sandbox: ADULT data not found at $adult (set KANON_ADULT_CSV)" >&2; return 1; }
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -f "$ROOT/config/demo/schema.sql" \
    -c "\\copy public.adult (sex, age, race, \"marital-status\", education, \"native-country\", workclass, occupation, \"salary-class\") FROM '$adult' WITH (FORMAT csv, DELIMITER ';', HEADER true)" \
    -f "$ROOT/config/demo/people.sql" \
    -c "ANALYZE"
}

start() {
  local port="" demo=0 hardened=0 owner="" mask_library="" preload=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --port) port="$2"; shift 2 ;;
      --demo) demo=1; shift ;;
      --hardened) hardened=1; shift ;;
      --mask-function) mask_library="$2"; shift 2 ;;
      --preload) preload=1; shift ;;
      --owner-pid) owner="$2"; shift 2 ;;
      *) echo "pg-sandbox: unknown option $1" >&2; exit 2 ;;
    esac
  done
  local dir
  dir="$(mktemp -d /tmp/kanon-pg.XXXXXX)"
  chmod 755 "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  if [ -n "$owner" ]; then
    # The watchdog runs in its own session so killing the owner's process
    # group does not kill it.
    setsid -f bash -c "while kill -0 $owner 2>/dev/null && [ -d '$dir' ]; do sleep 1; done; '$0' stop '$dir'" \
      </dev/null >/dev/null 2>&1
  fi
  trap 'stop_cluster "$dir"' ERR
  as_server_user "$PGBIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; false; }
  if [ $hardened -eq 1 ]; then write_hardened_hba "$dir/data"; else write_hba "$dir/data"; fi
  local tries=0
  while :; do
    local p="$port"
    if [ -z "$p" ]; then
      p=$((20000 + RANDOM % 40000))
      port_in_use "$p" && continue
    fi
    if as_server_user "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
      -o "-p $p -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400 -c shared_buffers=256MB -c max_prepared_transactions=10" \
      >/dev/null 2>&1; then
      port="$p"
      break
    fi
    tries=$((tries + 1))
    if [ -n "$port" ] || [ $tries -ge 10 ]; then
      echo "pg-sandbox: PostgreSQL did not start; its log:" >&2
      cat "$dir/server.log" >&2 || true
      false
    fi
  done
  create_roles "$port"
  [ $demo -eq 1 ] && load_demo "$port"
  [ $hardened -eq 1 ] && harden_grants "$port"
  [ -n "$mask_library" ] && install_mask_function "$port" "$dir" "$mask_library"
  if [ -n "$mask_library" ] && [ $preload -eq 1 ]; then
    preload_library "$dir" "$port" "$dir/kanon_mask.so"
  fi
  trap - ERR
  echo "KANON_PG_DIR=$dir"
  echo "KANON_PG_HOST=127.0.0.1"
  echo "KANON_PG_PORT=$port"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  preload) [ $# -eq 4 ] || { echo "usage: $0 preload DIR PORT LIB" >&2; exit 2; }; preload_library "$2" "$3" "$4" ;;
  stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop_cluster "$2" ;;
  *) echo "usage: $0 start [--port N] [--demo] [--hardened] [--mask-function LIB [--preload]] [--owner-pid PID] | preload DIR PORT LIB | stop DIR" >&2; exit 2 ;;
esac
