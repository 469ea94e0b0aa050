#!/usr/bin/env bash
# Regenerates test/fixtures/plurals/golden.tsv: the plural kubebuilder derives
# for every kind in test/fixtures/plurals/kinds.txt, computed by gobuffalo/flect
# itself (scripts/go/flect-plurals). The unit test test/unit/plurals.test.ts holds
# our TypeScript port to that table. Needs Go; only this repo's maintainers run it.
#   scripts/plural-golden.sh          rewrite the golden
#   scripts/plural-golden.sh --check  exit 1 if the checked-in golden is stale
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
kinds="$root/test/fixtures/plurals/kinds.txt"
golden="$root/test/fixtures/plurals/golden.tsv"
mode="${1:-write}"
case "$mode" in write|--check) ;; *) echo "usage: scripts/plural-golden.sh [--check]" >&2; exit 2 ;; esac

command -v go >/dev/null || { echo "plural-golden: Go is needed to run flect (only for regenerating the golden)" >&2; exit 1; }
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

(cd "$here/go/flect-plurals" && go build -o "$tmp/flect-plurals" .)

# flect's init reads inflections.json and acronyms.json from the working
# directory (or $INFLECT_PATH / $ACRONYMS_PATH) and would add them to its rules;
# point both at files that cannot exist and run from an empty directory, so the
# golden is flect's built-in behaviour only.
(cd "$tmp" && INFLECT_PATH="$tmp/none/inflections.json" ACRONYMS_PATH="$tmp/none/acronyms.json" \
  ./flect-plurals "$kinds") > "$tmp/golden.tsv"

rows="$(wc -l < "$tmp/golden.tsv")"
if [[ "$mode" == --check ]]; then
  if ! cmp -s "$tmp/golden.tsv" "$golden"; then
    diff "$golden" "$tmp/golden.tsv" | head -20 >&2 || true
    echo "plural-golden: $golden is stale: run scripts/plural-golden.sh" >&2
    exit 1
  fi
  echo "plural-golden: $golden matches flect ($rows kinds)"
else
  mv "$tmp/golden.tsv" "$golden"
  echo "plural-golden: wrote $golden ($rows kinds)"
fi
