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
