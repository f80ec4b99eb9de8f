# Shell helpers the benchmark scripts share (sourced, not run).

# A TCP port on 127.0.0.1 that nothing listens on.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
}

# Waits up to 20 s until something accepts connections on 127.0.0.1:$1.
wait_port() {
  for _ in $(seq 400); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done
  return 1
}

# Starts a throwaway PostgreSQL with the demo data (KANON_PG_DIR,
# KANON_PG_PORT) and a work directory WORK readable by the server's user;
# both go away when the script exits, as do the processes listed in PIDS.
start_sandbox() {
  eval "$("$ROOT/scripts/pg-sandbox.sh" start --demo --owner-pid $$)"
  WORK="$(mktemp -d "/tmp/kanon-$1.XXXXXX")"
  chmod 755 "$WORK"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$WORK"
  PIDS=()
  trap stop_sandbox EXIT
}
stop_sandbox() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$ROOT/scripts/pg-sandbox.sh" stop "$KANON_PG_DIR"
  rm -rf "$WORK"
}

# In the sandbox: public.adult_inline, ADULT x 32 with unique ids and a
# primary key (965,184 rows), public.occupation_group, public.tiny (10 ids),
# analysed; and $WORK/kanon.yaml protecting adult_inline in inline mode (k =
# 320, eight quasi-identifiers) for `kanon tree`. The mask layout scripts'
# set-up.
make_adult_inline() {
  local psql=(psql -X -q -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1)
  local cols
  cols="$("${psql[@]}" -Atc "SELECT string_agg(CASE attname WHEN 'id'
          THEN '(g - 1) * 1000000 + a.id AS id' ELSE 'a.' || quote_ident(attname) END,
          ', ' ORDER BY attnum) FROM pg_attribute
          WHERE attrelid = 'public.adult'::regclass AND attnum > 0 AND NOT attisdropped")"
  "${psql[@]}" -c "CREATE TABLE public.occupation_group (occupation text PRIMARY KEY, grp text);
    INSERT INTO public.occupation_group SELECT DISTINCT occupation, left(occupation, 1) FROM public.adult;
    CREATE TABLE public.adult_inline AS SELECT $cols FROM public.adult a, generate_series(1, 32) g;
    ALTER TABLE public.adult_inline ADD PRIMARY KEY (id);
    CREATE TABLE public.tiny AS SELECT id FROM public.adult_inline ORDER BY id LIMIT 10;" \
    -c "VACUUM ANALYZE public.adult_inline" -c "ANALYZE public.tiny" -c "ANALYZE public.occupation_group"
  cat >"$WORK/policy.yaml" <<YAML
tables:
  - {table: public.adult_inline, k: 320, quasi_identifiers: [sex, age, race, marital-status, education,
     native-country, workclass, occupation], exempt: [postgres], max_nodes: 8192, mode: inline}
YAML
  cat >"$WORK/kanon.yaml" <<YAML
listen: {host: 127.0.0.1, port: $(free_port)}
backend: {host: 127.0.0.1, port: $KANON_PG_PORT, user: postgres, dbname: postgres, sslmode: disable}
log_level: warning
policies: [$WORK/policy.yaml]
YAML
}

# kanon_mask.so of the build (or KANON_MASK_SO): whether it is there.
kanon_mask_built() {
  [ -f "${KANON_MASK_SO:-$ROOT/build/maskfn/kanon_mask.so}" ]
}

# Installs kanon_mask.so (maskfn/install.sql: kanon_mask.released and the
# catalog guard in C) into the sandbox's database ${1:-postgres}, from a copy
# in WORK the server's user can read; fails with a message when it was not
# built.
install_kanon_mask() {
  local so="${KANON_MASK_SO:-$ROOT/build/maskfn/kanon_mask.so}"
  [ -f "$so" ] || { echo "no $so: install postgresql-server-dev-15 and build again" >&2; return 1; }
  cp "$so" "$WORK/kanon_mask.so" && chmod 755 "$WORK/kanon_mask.so"
  psql -X -q -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres -d "${1:-postgres}" -v ON_ERROR_STOP=1 \
    -v library="$WORK/kanon_mask.so" -f "$ROOT/maskfn/install.sql"
}

# The server loads $WORK/kanon_mask.so (install_kanon_mask) at start
# (shared_preload_libraries, then a restart), as maskfn/README.md
# recommends: a new session then does not load it at its first statement.
# Before kanon starts (a restart ends every connection).
preload_kanon_mask() {
  "$ROOT/scripts/pg-sandbox.sh" preload "$KANON_PG_DIR" "$KANON_PG_PORT" "$WORK/kanon_mask.so"
}

# Starts kanon in front of the sandbox (KANON_PORT) with the demo's people
# policy and the admin console, its service account the sandbox's superuser,
# and waits until it has installed the catalog guard (catalog/catalog_watch.h).
start_kanon_with_guard() {
  local psql=(psql -X -At -q -h 127.0.0.1 -p "$KANON_PG_PORT" -U postgres -d postgres)
  KANON_PORT="$(free_port)"
  cat >"$WORK/kanon.yaml" <<YAML
listen: {host: 127.0.0.1, port: $KANON_PORT}
backend: {host: 127.0.0.1, port: $KANON_PG_PORT, user: postgres, dbname: postgres, sslmode: disable}
log_level: warning
admin: {database: kanon, users: [postgres]}
policies: [$ROOT/config/policies/people.yaml]
YAML
  "$KANON" proxy --config "$WORK/kanon.yaml" 2>"$WORK/kanon.log" &
  PIDS+=($!)
  wait_port "$KANON_PORT" || { echo "kanon did not start" >&2; cat "$WORK/kanon.log" >&2; exit 1; }
  for _ in $(seq 200); do
    [ "$("${psql[@]}" -c "SELECT to_regprocedure('kanon.catalog_is(int8)') IS NOT NULL")" = t ] &&
      return 0
    sleep 0.1
  done
  echo "kanon installed no catalog guard" >&2
  exit 1
}

# Starts PgBouncer in session mode, trust, in front of database `bench` of
# the PostgreSQL on PG_PORT (BOUNCER_PORT; its pid in PIDS), for the users
# given as arguments, and waits until it accepts connections and has
# written its pid file.
start_pgbouncer() {
  BOUNCER_PORT="$(free_port)"
  cat >"$WORK/pgbouncer.ini" <<INI
[databases]
bench = host=127.0.0.1 port=$PG_PORT dbname=bench
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $WORK/userlist.txt
pool_mode = session
max_client_conn = 500
default_pool_size = 100
logfile = $WORK/pgbouncer.log
pidfile = $WORK/pgbouncer.pid
log_connections = 0
log_disconnections = 0
INI
  : >"$WORK/userlist.txt"
  local u
  for u in "$@"; do printf '"%s" ""\n' "$u" >>"$WORK/userlist.txt"; done
  chmod 644 "$WORK"/*
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- pgbouncer "$WORK/pgbouncer.ini" >/dev/null 2>&1 &
  else
    pgbouncer "$WORK/pgbouncer.ini" >/dev/null 2>&1 &
  fi
  PIDS+=($!)
  wait_port "$BOUNCER_PORT" || { echo "pgbouncer did not start" >&2; exit 1; }
  for _ in $(seq 100); do [ -s "$WORK/pgbouncer.pid" ] && break; sleep 0.05; done
}
