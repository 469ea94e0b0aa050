#!/usr/bin/env bash
# Builds the Go CLIs that bench/cli.ts times ours against, from the Go module
# proxy, into a cache outside the repo, and prints that directory:
#   operator-sdk    v1.42.3 (init, create api, generate kustomize manifests,
#                   generate bundle, bundle validate)
#   controller-gen  the controller-tools version operator-sdk v1.42.3 pins
#                   (generate manifests' peer: the Makefile's `make manifests`)
# Only missing binaries are built. Only the benchmark needs them: users of
# ts-operator-sdk never need Go.
set -euo pipefail

OPERATOR_SDK_VERSION=v1.42.3
CONTROLLER_TOOLS_VERSION=v0.18.0
cache_root="${TS_OPERATOR_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ts-operator-sdk}"
out_dir="$cache_root/bench/cli-peers-operator-sdk-${OPERATOR_SDK_VERSION}-controller-tools-${CONTROLLER_TOOLS_VERSION}"

BUILD_SCRIPT_NAME=build-cli-peers
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
exit_if_built "$out_dir" -x "only bench/cli.ts needs them. Install Go and run scripts/build-cli-peers.sh again" \
  operator-sdk controller-gen
start_build_dir "$out_dir"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false

for file in "${missing[@]}"; do
  case "$file" in
    operator-sdk)
      echo "build-cli-peers: building operator-sdk $OPERATOR_SDK_VERSION with Go (a few minutes)" >&2
      src="$(module_dir "github.com/operator-framework/operator-sdk@$OPERATOR_SDK_VERSION")"
      # The module cache is read-only and go may want to write go.sum: build a writable copy.
      cp -r "$src" "$tmp/operator-sdk-src" && chmod -R u+w "$tmp/operator-sdk-src"
      # The proxy refuses ansible-operator-plugins v1.42.3 (403, "not available"); v1.42.2
      # only differs in the ansible plugin, which none of the timed commands (go/v4 plugin) runs.
      (cd "$tmp/operator-sdk-src" && go mod edit -replace \
        github.com/operator-framework/ansible-operator-plugins=github.com/operator-framework/ansible-operator-plugins@v1.42.2)
      # The versions operator-sdk prints and writes into projects and bundles (its Makefile's -X flags).
      pkg=github.com/operator-framework/operator-sdk/internal/version
      # containers_image_openpgp: a Go OpenPGP instead of gpgme (cgo), as operator-sdk's Makefile builds it.
      build operator-sdk "$tmp/operator-sdk-src" -mod=mod -trimpath -tags containers_image_openpgp \
        -ldflags "-s -w -X $pkg.Version=$OPERATOR_SDK_VERSION -X $pkg.GitVersion=$OPERATOR_SDK_VERSION -X $pkg.ImageVersion=$OPERATOR_SDK_VERSION -X $pkg.KubernetesVersion=v1.33.1" \
        -o "$tmp/operator-sdk" ./cmd/operator-sdk ;;
    controller-gen)
      echo "build-cli-peers: building controller-gen $CONTROLLER_TOOLS_VERSION with Go" >&2
      src="$(module_dir "sigs.k8s.io/controller-tools@$CONTROLLER_TOOLS_VERSION")"
      cp -r "$src" "$tmp/controller-tools-src" && chmod -R u+w "$tmp/controller-tools-src"
      build controller-gen "$tmp/controller-tools-src" -mod=mod -trimpath -ldflags "-s -w" \
        -o "$tmp/controller-gen" ./cmd/controller-gen ;;
  esac
  mv "$tmp/$file" "$out_dir/$file"
done
echo "$out_dir"
