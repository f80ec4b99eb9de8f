#!/usr/bin/env bash
# Runs the whole test suite: installs missing packages, fetches PostgreSQL's
# regression suite, builds (Release, with tests), runs every test with ctest
# (PostgreSQL's regression suite through kanon included: label regress), then
# builds the unit and robustness tests with ASan+UBSan and runs them. Ends
# with one summary line and fails when any test fails.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="$(nproc)"

"$ROOT/scripts/install-deps.sh" || exit 1

# PostgreSQL's regression suite (the ctest test regress_suite) needs the
# installed server's source package; fetched once into a cache outside the
# tree. A failure here shows again as a failure of regress_suite.
echo "== PostgreSQL's regression suite: fetch (scripts/regress-suite.sh fetch)"
timeout 1800 "$ROOT/scripts/regress-suite.sh" fetch </dev/null ||
  echo "test: fetching PostgreSQL's regression suite failed; regress_suite will fail"

passed=0
failed=0
status=0
run_ctest() {  # build dir, extra ctest args...
  local dir="$1"; shift
  local log
  log="$(mktemp)"
  (cd "$dir" && ctest --output-on-failure --timeout 1200 -j "$JOBS" "$@") 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local line
  line="$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)"
  if [ -n "$line" ]; then
    local f t
    f="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")"
    t="$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")"
    passed=$((passed + t - f))
    failed=$((failed + f))
  else
    failed=$((failed + 1))
  fi
  [ "$rc" -eq 0 ] || status=1
  rm -f "$log"
}

echo "== Release build and the full suite"
if "$ROOT/scripts/build.sh" "$ROOT/build" -DKANON_BUILD_TESTS=ON; then
  run_ctest "$ROOT/build"
else
  echo "test: the Release build failed"; failed=$((failed + 1)); status=1
fi

# The regression suite's own summary (tests/regress/README.md).
[ -f "$ROOT/build/regress/summary.txt" ] && cat "$ROOT/build/regress/summary.txt"

echo "== ASan+UBSan build of the unit and robustness tests"
if "$ROOT/scripts/build.sh" "$ROOT/build-asan" -DKANON_BUILD_TESTS=ON -DKANON_SANITIZE=ON \
  -DKANON_UNIT_TESTS_ONLY=ON -DKANON_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_ctest "$ROOT/build-asan" -L 'unit|robustness'
else
  echo "test: the sanitizer build failed"; failed=$((failed + 1)); status=1
fi

echo
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
