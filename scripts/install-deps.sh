#!/usr/bin/env bash
# Installs the Debian packages kanon needs to build, test and run. Idempotent:
# packages already present are skipped, and apt is not touched when nothing is
# missing. Needs root or sudo.
#
#   install-deps.sh              everything: build, tests, benchmarks, demo
#   install-deps.sh --build-only what building the kanon executable needs
#                                (deploy/compose/Dockerfile's build stage)
set -euo pipefail

BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libpg-query-dev libprotobuf-c-dev libpqxx-dev libboost-dev libssl-dev libfmt-dev
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
)
PACKAGES=(
  "${BUILD_PACKAGES[@]}" clang-format doctest-dev
  postgresql-15 postgresql-client-15 pgbouncer haproxy
  util-linux procps iproute2
  python3-psycopg2 python3-yaml libpostgresql-jdbc-java openjdk-17-jdk-headless
  openmpi-bin libopenmpi-dev
  chromium
)
build_only=0
case "${1:-}" in
  "") ;;
  --build-only) build_only=1 ;;
  *) echo "usage: $0 [--build-only]" >&2; exit 2 ;;
esac
if [ $build_only -eq 1 ]; then
  PACKAGES=("${BUILD_PACKAGES[@]}")
else
  # node-postgres (tests/clients) needs node and npm; a node installed outside
  # Debian (e.g. NodeSource) brings its own npm and conflicts with Debian's.
  command -v npm >/dev/null || PACKAGES+=(nodejs npm)
fi

# Prints nothing (and succeeds) for a package dpkg does not know: under
# `set -e` a failing `var="$(...)"` would end the script.
installed_version() {
  { dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null || true; } |
    sed -n 's/^install ok installed //p'
}

missing=()
for p in "${PACKAGES[@]}"; do
  [ -n "$(installed_version "$p")" ] || missing+=("$p")
done
# PostgreSQL's regression suite (scripts/regress-suite.sh) builds regress.so
# against the server headers, which must be those of the installed server's
# exact version: pinned to it when the server is already there.
server="$(installed_version postgresql-15)"
dev="$(installed_version postgresql-server-dev-15)"
dev_wanted=""
if [ $build_only -eq 1 ]; then
  :
elif [ -z "$server" ]; then
  [ -n "$dev" ] || missing+=(postgresql-server-dev-15)
elif [ "$dev" != "$server" ]; then
  dev_wanted="postgresql-server-dev-15=$server"
fi
if [ ${#missing[@]} -eq 0 ] && [ -z "$dev_wanted" ]; then
  echo "install-deps: all $((${#PACKAGES[@]} + 1 - build_only)) packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq </dev/null
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
  # The Debian package starts a system-wide cluster; kanon never uses it.
fi
if [ -n "$dev_wanted" ]; then
  echo "install-deps: installing $dev_wanted (the installed server's version)"
  # Only the regression suite needs it: when that exact version is gone from
  # the archive, say so and go on (scripts/regress-suite.sh fails on its own).
  $SUDO apt-get install -y -qq --no-install-recommends "$dev_wanted" </dev/null >/dev/null ||
    echo "install-deps: WARNING: cannot install $dev_wanted; PostgreSQL's regression suite" \
      "(scripts/regress-suite.sh) will fail" >&2
fi
echo "install-deps: done"
