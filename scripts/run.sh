#!/usr/bin/env bash
# Runs the product on this machine: installs missing packages, builds, starts
# a throwaway PostgreSQL 15 with the demo tables (public.adult, public.people)
# and `kanon proxy` on 127.0.0.1:6432 with config/kanon.yaml. Ctrl-C stops
# everything it started.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LISTEN="${KANON_LISTEN:-127.0.0.1:6432}"

"$ROOT/scripts/install-deps.sh"
"$ROOT/scripts/build.sh" "$ROOT/build"

echo "run: starting a throwaway PostgreSQL 15 with the demo data..."
# kanon_mask (maskfn/) when it was built: public.adult's policy says
# evaluator: auto, so its masks call the C function. Loaded by the server at
# start, as maskfn/README.md recommends.
MASK=()
[ -f "$ROOT/build/maskfn/kanon_mask.so" ] &&
  MASK=(--mask-function "$ROOT/build/maskfn/kanon_mask.so" --preload)
eval "$("$ROOT/scripts/pg-sandbox.sh" start --demo --hardened "${MASK[@]}" --owner-pid $$)"
PROXY_PID=""
cleanup() {
  trap - EXIT INT TERM
  [ -n "$PROXY_PID" ] && kill -TERM "$PROXY_PID" 2>/dev/null && wait "$PROXY_PID" 2>/dev/null
  "$ROOT/scripts/pg-sandbox.sh" stop "$KANON_PG_DIR"
  echo "run: stopped kanon and PostgreSQL"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$ROOT/build/app/kanon" proxy --config "$ROOT/config/kanon.yaml" --listen "$LISTEN" \
  --backend "$KANON_PG_HOST:$KANON_PG_PORT" &
PROXY_PID=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/${LISTEN%:*}/${LISTEN##*:}") 2>/dev/null && break
  kill -0 "$PROXY_PID" 2>/dev/null || { echo "run: kanon proxy failed to start" >&2; exit 1; }
  sleep 0.1
done
cat <<MSG

kanon is running: proxy on $LISTEN, PostgreSQL 15 on $KANON_PG_HOST:$KANON_PG_PORT (data in $KANON_PG_DIR).
Connect through kanon as a restricted analyst (protected tables come back masked):

  psql "host=${LISTEN%:*} port=${LISTEN##*:} user=analyst dbname=postgres"

The admin console (SHOW HELP, SHOW POLICIES, SHOW TREE people, VERIFY adult, ...):

  psql "host=${LISTEN%:*} port=${LISTEN##*:} user=postgres dbname=kanon"

The web console (tree, risk, exports, exposure, audit): http://127.0.0.1:8080/
  log in as kanon_scram / scram-secret (an admin user with a password)

Metrics: http://127.0.0.1:9187/metrics

Roles: postgres (superuser), analyst; kanon_md5/md5-secret and kanon_scram/scram-secret use passwords.
Press Ctrl-C to stop.
MSG
wait "$PROXY_PID"
