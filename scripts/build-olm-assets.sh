#!/usr/bin/env bash
# Builds what the OLM cluster test installs into local images, from the Go
# module proxy, into a cache outside the repo, and prints that directory:
#   olm, catalog, package-server, from operator-lifecycle-manager (OLM v0);
#   cpb (util/cpb)                upstream's image ships all four in /bin.
#   opm                           from operator-registry (serves the catalog);
#   crds.yaml, olm.yaml           OLM's manifests from the same module (the chart's
#                                 CRDs; the quickstart's olm.yaml).
# Only missing files are built. The OLM version is operator-sdk's default for
# `olm install --version`; opm is the one operator-sdk v1.42.3 pins. Only this
# repo's tests need this: users install OLM from its release manifests with
# `ts-operator-sdk olm install`. Go builds run one at a time (the machine is
# small), one per module, and print a progress line every PROGRESS_SECONDS (30) seconds.
set -euo pipefail

OLM_VERSION=v0.28.0
OPM_VERSION=v1.55.0
cache_root="${TS_OPERATOR_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ts-operator-sdk}"
out_dir="$cache_root/olm-assets/olm-${OLM_VERSION}-opm-${OPM_VERSION}"

BUILD_SCRIPT_NAME=build-olm-assets
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
exit_if_built "$out_dir" -s "only this repo's cluster tests need them. Install Go 1.22 or newer and run scripts/build-olm-assets.sh again" \
  crds.yaml olm.yaml olm catalog package-server cpb opm
start_build_dir "$out_dir"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false

olm_src= olm_binaries=()
for file in "${missing[@]}"; do
  case "$file" in
    olm|catalog|package-server|cpb|crds.yaml|olm.yaml)
      if [[ -z "$olm_src" ]]; then
        echo "build-olm-assets: fetching operator-lifecycle-manager $OLM_VERSION" >&2
        olm_src="$(module_dir "github.com/operator-framework/operator-lifecycle-manager@$OLM_VERSION")"
      fi ;;
  esac
  case "$file" in
    crds.yaml)
      for crd in "$olm_src"/deploy/chart/crds/*.crd.yaml; do printf -- '---\n'; cat "$crd"; done > "$tmp/$file"
      mv "$tmp/$file" "$out_dir/$file" ;;
    olm.yaml)
      cp "$olm_src/deploy/upstream/quickstart/$file" "$tmp/$file"
      mv "$tmp/$file" "$out_dir/$file" ;;
    olm|catalog|package-server|cpb) olm_binaries+=("$file") ;;
    opm)
      echo "build-olm-assets: building opm $OPM_VERSION with Go (a few minutes)" >&2
      opm_src="$(module_dir "github.com/operator-framework/operator-registry@$OPM_VERSION")"
      cp -r "$opm_src" "$tmp/opm-src" && chmod -R u+w "$tmp/opm-src"
      build_rarely_run opm "$tmp/opm-src" -mod=mod -trimpath -tags containers_image_openpgp,json1 -ldflags "-s -w" -o "$tmp/opm" ./cmd/opm
      mv "$tmp/opm" "$out_dir/opm" ;;
  esac
done
if [[ ${#olm_binaries[@]} -gt 0 ]]; then
  # One go build for all four, so their links overlap the compilation of the
  # next one's packages (see build_kube_binaries in lib/go-build.sh).
  echo "build-olm-assets: building $(words "${olm_binaries[@]}") $OLM_VERSION with Go (a few minutes)" >&2
  cp -r "$olm_src" "$tmp/olm-src" && chmod -R u+w "$tmp/olm-src" && rm -rf "$tmp/olm-src/vendor"
  packages=()
  for file in "${olm_binaries[@]}"; do
    if [[ "$file" == cpb ]]; then packages+=(./util/cpb); else packages+=("./cmd/$file"); fi
  done
  build_rarely_run "$(words "${olm_binaries[@]}")" "$tmp/olm-src" -mod=mod -trimpath -ldflags "-s -w" -o "$tmp/" "${packages[@]}"
  for file in "${olm_binaries[@]}"; do mv "$tmp/$file" "$out_dir/$file"; done
fi
echo "$out_dir"
