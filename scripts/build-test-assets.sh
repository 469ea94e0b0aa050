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

BUILD_SCRIPT_NAME=build-test-assets
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
exit_if_built "$bin_dir" -x "only this repo's tests need them. Install Go, or use the official envtest binaries: export KUBEBUILDER_ASSETS=\"\$(node bin/ts-operator-sdk.js setup-envtest use ${KUBE_VERSION#v} -p path)\" (they lack kube-controller-manager, so the garbage-collection tests then fail)" \
  etcd kube-apiserver kube-controller-manager
start_build_dir "$bin_dir"
export GOTOOLCHAIN=local CGO_ENABLED=0

kube=()
for binary in "${missing[@]}"; do
  case "$binary" in
    etcd)
      echo "build-test-assets: building etcd $ETCD_VERSION with Go (a minute or two)" >&2
      build etcd "$here/go/etcd" -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
      # Moved as soon as it is built, so an interrupted run keeps it.
      mv "$tmp/etcd" "$bin_dir/" ;;
    kube-apiserver|kube-controller-manager) kube+=("$binary") ;;
  esac
done
if [[ ${#kube[@]} -gt 0 ]]; then
  # Both come from the one wrapper module, so they share every dependency version, and one go build makes both.
  echo "build-test-assets: building $(words "${kube[@]}") $KUBE_VERSION with Go (8 to 30 minutes on 2 cores; progress every ${PROGRESS_SECONDS}s)" >&2
  build_kube_binaries "${kube[@]}"
  for binary in "${kube[@]}"; do mv "$tmp/$binary" "$bin_dir/"; done
fi
echo "$bin_dir"
