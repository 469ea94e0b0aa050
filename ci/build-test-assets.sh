#!/usr/bin/env bash
# Builds the real control plane our tests run against (etcd, kube-apiserver,
# and kube-controller-manager for garbage collection, Deployments and namespace
# deletion) from the Go module proxy, into a cache outside the repo, and prints
# the directory to use as KUBEBUILDER_ASSETS. Only the binaries missing from
# the cache are built, so a cache made before kube-controller-manager joined
# gains just that one. Only our own tests need this: users of ts-operator-sdk
# never need Go (they use `ts-operator-sdk setup-envtest`, which keeps
# envtest's two binaries). The build prints a progress line every
# PROGRESS_SECONDS (30) seconds, since go build itself says nothing until done.
set -euo pipefail

KUBE_VERSION=v1.36.3
ETCD_VERSION=v3.6.8
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${TS_OPERATOR_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ts-operator-sdk}"
bin_dir="$cache_root/test-assets/k8s-${KUBE_VERSION}-etcd-${ETCD_VERSION}"

missing=()
for binary in etcd kube-apiserver kube-controller-manager; do
  [[ -x "$bin_dir/$binary" ]] || missing+=("$binary")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "$bin_dir"
  exit 0
fi

if ! command -v go >/dev/null; then
  echo "build-test-assets: Go is not installed, and ${missing[*]} must be built with it (only this repo's tests need this). Install Go, or use the official envtest binaries: export KUBEBUILDER_ASSETS=\"\$(node bin/ts-operator-sdk.js setup-envtest use ${KUBE_VERSION#v} -p path)\" (they lack kube-controller-manager, so the garbage-collection tests then fail)" >&2
  exit 1
fi
mkdir -p "$bin_dir"
tmp="$(mktemp -d "$bin_dir/.build.XXXXXX")"
heartbeat_pid=
trap '[[ -n "$heartbeat_pid" ]] && kill "$heartbeat_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# go build is silent until it finishes, which takes minutes per binary. Its
# -v package list goes to a log; a line every PROGRESS_SECONDS says how far it is.
PROGRESS_SECONDS="${PROGRESS_SECONDS:-30}"
progress() {
  local what="$1" log="$2" start
  start="$(date +%s)"
  while sleep "$PROGRESS_SECONDS"; do
    local elapsed=$(( $(date +%s) - start ))
    echo "build-test-assets: still building $what: $((elapsed / 60))m$((elapsed % 60))s, $(wc -l < "$log" | tr -d ' ') packages compiled" >&2
  done
}
# Runs `go build -v` in directory $1 with the rest as arguments, reporting progress as $what.
build() {
  local what="$1" dir="$2"; shift 2
  local log="$tmp/$what.log"
  : > "$log"
  progress "$what" "$log" &
  heartbeat_pid=$!
  local status=0
  (cd "$dir" && go build -v "$@" 2> "$log") || status=$?
  kill "$heartbeat_pid" 2>/dev/null || true
  wait "$heartbeat_pid" 2>/dev/null || true
  heartbeat_pid=
  if [[ $status -ne 0 ]]; then
    echo "build-test-assets: building $what failed; the end of go build's output:" >&2
    grep -v '^[a-z0-9.-]*\(/[^ ]*\)\?$' "$log" | tail -n 20 >&2 || tail -n 20 "$log" >&2
    exit "$status"
  fi
}
export GOTOOLCHAIN=local CGO_ENABLED=0

# Version ldflags as upstream's hack/lib/version.sh sets them, so /version and
# discovery report a real version instead of v0.0.0-master.
minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

for binary in "${missing[@]}"; do
  case "$binary" in
    etcd)
      echo "build-test-assets: building etcd $ETCD_VERSION with Go (a minute or two)" >&2
      build etcd "$here/tools/etcd" -trimpath -o "$tmp/etcd" go.etcd.io/etcd/server/v3 ;;
    kube-apiserver|kube-controller-manager)
      # Both come from the one wrapper module, so they share every dependency version.
      echo "build-test-assets: building $binary $KUBE_VERSION with Go (8 to 30 minutes on 2 cores; progress every ${PROGRESS_SECONDS}s)" >&2
      build "$binary" "$here/tools/kube-apiserver" -trimpath -tags selinux,notest -ldflags "$ldflags" -o "$tmp/$binary" "k8s.io/kubernetes/cmd/$binary" ;;
  esac
  # Move each one as soon as it is built, so an interrupted run keeps what it finished.
  mv "$tmp/$binary" "$bin_dir/"
done
echo "$bin_dir"
