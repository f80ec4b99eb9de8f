#!/usr/bin/env bash
# Installs the Debian packages kanon needs to build, test and run. Idempotent:
# packages already present are skipped, and apt is not touched when nothing is
# missing. Needs root or sudo.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libpg-query-dev libprotobuf-c-dev libpqxx-dev libboost-dev libssl-dev libfmt-dev
  libyaml-cpp-dev doctest-dev libcli11-dev nlohmann-json3-dev
  postgresql-15 postgresql-client-15 pgbouncer
  util-linux procps iproute2
  python3-psycopg2 libpostgresql-jdbc-java openjdk-17-jdk-headless
  openmpi-bin libopenmpi-dev
  chromium
)
# node-postgres (tests/clients) needs node and npm; a node installed outside
# Debian (e.g. NodeSource) brings its own npm and conflicts with Debian's.
command -v npm >/dev/null || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The Debian package starts a system-wide cluster; kanon never uses it.
echo "install-deps: done"
