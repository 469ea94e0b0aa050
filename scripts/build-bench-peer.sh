#!/usr/bin/env bash
# Builds the Go controller-runtime peer of our Memcached fixture
# (scripts/go/memcached-operator-go) into a cache outside the repo and prints the
# binary's path. Built only when missing. Only bench/side-by-side.ts needs it:
# users of ts-operator-sdk never need Go.
# With --if-built it only prints the path of an already built binary (nothing
# when there is none), so bench:idle never starts a Go build.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${TS_OPERATOR_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ts-operator-sdk}"
module="$here/go/memcached-operator-go"
# The controller-runtime version is in the name, so a bump builds a new binary.
version="$(awk '$1 == "sigs.k8s.io/controller-runtime" { print $2 }' "$module/go.mod")"
binary="$cache_root/bench/memcached-operator-go-controller-runtime-${version}"
if [[ -x "$binary" ]]; then
  echo "$binary"
  exit 0
fi
[[ "${1:-}" == "--if-built" ]] && exit 0
command -v go >/dev/null || { echo "build-bench-peer: Go is needed to build the benchmark's Go peer (only for bench:side-by-side); install Go, or run the other benchmarks" >&2; exit 1; }
mkdir -p "$cache_root/bench"
echo "build-bench-peer: building the Go peer with controller-runtime $version" >&2
tmp="$(mktemp "$binary.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
(cd "$module" && GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp" .)
mv "$tmp" "$binary"
echo "$binary"
