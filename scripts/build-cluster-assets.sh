#!/usr/bin/env bash
# Builds what our one-node test cluster (test/cluster) needs beyond the test
# control plane: kubelet, kube-scheduler and kube-proxy (from the same
# Kubernetes wrapper module and flags as scripts/build-test-assets.sh), containerd
# 2.x with ctr, the `registry` of distribution v3, and a tiny static `pause`
# program for the sandbox image. Everything goes into a cache outside the repo;
# only missing binaries are built, and the directory is printed on stdout.
# The Debian packages the node needs (runc, CNI plugins, iptables, conntrack,
# socat, busybox-static for test images, buildah for image builds) are installed when missing.
# Only our own tests need this: users of ts-operator-sdk never do.
set -euo pipefail

KUBE_VERSION=v1.36.3
CONTAINERD_VERSION=v2.2.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${TS_OPERATOR_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ts-operator-sdk}"
bin_dir="$cache_root/cluster-assets/k8s-${KUBE_VERSION}-containerd-${CONTAINERD_VERSION}"

# Debian packages: command → package. Checked every run (cheap), installed only when one is missing.
declare -A packages=(
  [runc]=runc [iptables]=iptables [conntrack]=conntrack [socat]=socat [nsenter]=util-linux
  [busybox]=busybox-static [/usr/lib/cni/bridge]=containernetworking-plugins [buildah]=buildah
)
missing_packages=()
for command in "${!packages[@]}"; do
  if [[ "$command" == /* ]]; then [[ -x "$command" ]] && continue; else command -v "$command" >/dev/null && continue; fi
  missing_packages+=("${packages[$command]}")
done
if [[ ${#missing_packages[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    echo "build-cluster-assets: missing Debian packages ${missing_packages[*]}: install them (apt-get install -y --no-install-recommends ${missing_packages[*]}) as root" >&2
    exit 1
  fi
  echo "build-cluster-assets: installing ${missing_packages[*]} with apt-get" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing_packages[@]}" >&2
fi

BUILD_SCRIPT_NAME=build-cluster-assets
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
exit_if_built "$bin_dir" -x "only this repo's cluster tests need them. Install Go 1.26 and run scripts/build-cluster-assets.sh again" \
  kubelet kube-scheduler kube-proxy containerd containerd-shim-runc-v2 ctr registry pause
start_build_dir "$bin_dir"
export GOTOOLCHAIN=local CGO_ENABLED=0

# Binaries of one module are made by one go build (see build_kube_binaries);
# each group moves into the cache as soon as it is built, so an interrupted run
# keeps what it finished.
kube=() containerd=()
for binary in "${missing[@]}"; do
  case "$binary" in
    kubelet|kube-scheduler|kube-proxy) kube+=("$binary") ;;
    containerd|containerd-shim-runc-v2|ctr) containerd+=("$binary") ;;
    registry)
      # scripts/go/registry/main.go: upstream's registry with only the storage drivers the tests configure.
      echo "build-cluster-assets: building the distribution registry with Go (about a minute)" >&2
      build_rarely_run registry "$here/go/registry" -trimpath -ldflags "-s -w" -o "$tmp/registry" .
      mv "$tmp/registry" "$bin_dir/" ;;
    pause)
      build_rarely_run pause "$here/go/pause" -trimpath -ldflags "-s -w" -o "$tmp/pause" .
      mv "$tmp/pause" "$bin_dir/" ;;
  esac
done
if [[ ${#containerd[@]} -gt 0 ]]; then
  # Pure Go (no btrfs/devmapper/zfs snapshotters), so no C toolchain is needed.
  echo "build-cluster-assets: building $(words "${containerd[@]}") $CONTAINERD_VERSION with Go (about 2 minutes)" >&2
  build_rarely_run "$(words "${containerd[@]}")" "$here/go/containerd" -trimpath -tags no_btrfs,no_devmapper,no_zfs \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
    -o "$tmp/" "${containerd[@]/#/github.com/containerd/containerd/v2/cmd/}"
  for binary in "${containerd[@]}"; do mv "$tmp/$binary" "$bin_dir/"; done
fi
if [[ ${#kube[@]} -gt 0 ]]; then
  echo "build-cluster-assets: building $(words "${kube[@]}") $KUBE_VERSION with Go (5 to 20 minutes on 2 cores; progress every ${PROGRESS_SECONDS}s)" >&2
  build_kube_binaries "${kube[@]}"
  for binary in "${kube[@]}"; do mv "$tmp/$binary" "$bin_dir/"; done
fi
echo "$bin_dir"
