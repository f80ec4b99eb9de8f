#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format (.clang-format)
# makes of it; lists each such file. Run scripts/check-format.sh --fix to
# reformat them in place.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h' | grep -v '^./build')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
# One clang-format run over every file; it names each file it would change.
mapfile -t bad < <(clang-format --dry-run "${files[@]}" 2>&1 | grep -E '^[^ ].*: (warning|error):' |
  cut -d: -f1 | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not formatted (scripts/check-format.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
