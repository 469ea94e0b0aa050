#!/usr/bin/env bash
# Where the time of the last test run went: each step (.ci/run's npm ci and
# lint, the build, each asset build, the test run) and each test file's wall
# time, longest first, from what scripts/test.sh recorded in $TEST_TIMES_DIR.
#   scripts/ci-time.sh [DIR] [--top N]   DIR: .tmp/ci-run after .ci/run, .tmp/test-times after npm test (the default)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="" top=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --top) top="$2" && shift 2 ;;
    *) dir="$1" && shift ;;
  esac
done
if [[ -z "$dir" ]]; then
  dir="${TEST_TIMES_DIR:-$root/.tmp/test-times}"
  # After .ci/run, its log is the newer one.
  [[ -f "$root/.tmp/ci-run/steps.tsv" && "$root/.tmp/ci-run/steps.tsv" -nt "$dir/steps.tsv" ]] && dir="$root/.tmp/ci-run"
fi
if [[ ! -s "$dir/steps.tsv" ]]; then
  echo "ci-time: no times in $dir: run npm test (or .ci/run) first, or name the directory a run wrote" >&2
  exit 1
fi
command -v jq >/dev/null || { echo "ci-time: jq is needed to read $dir/files*.jsonl; install it (apt-get install jq)" >&2; exit 1; }

echo "steps ($dir/steps.tsv), longest first:"
sort -t $'\t' -k2,2nr "$dir/steps.tsv" | awk -F'\t' '{ printf "  %8.1f s  %s\n", $2 / 1000, $1 }'

shopt -s nullglob
files=("$dir"/files*.jsonl)
if [[ ${#files[@]} -gt 0 && -n "$(cat "${files[@]}")" ]]; then
  echo "test files ($dir/files*.jsonl), longest first (wall time; tests):"
  rows="$(jq -r --arg root "$root/" '[.wallMs // 0, .tests // 0, .failed // 0, (.file | ltrimstr($root))] | @tsv' "${files[@]}" | sort -t $'\t' -k1,1nr)"
  if [[ "$top" -gt 0 ]]; then shown="$(head -n "$top" <<<"$rows")"; else shown="$rows"; fi
  awk -F'\t' '{ printf "  %8.1f s  %4d tests%s  %s\n", $1 / 1000, $2, ($3 > 0 ? " (" $3 " failed)" : ""), $4 }' <<<"$shown"
  awk -F'\t' '{ ms += $1; tests += $2; n++; d = $4; sub(/^dist\/test\//, "", d); sub(/\/.*/, "", d); by[d] += $1 }
    END {
      printf "total: %d files, %d tests, %.1f min of file wall time (files run side by side count each)\n", n, tests, ms / 60000
      for (d in by) printf "  %8.1f min  %s\n", by[d] / 60000, d
    }' <<<"$rows"
fi
