#!/usr/bin/env bash
# Runs a command with KUBEBUILDER_ASSETS pointing at the real test control
# plane, building it once (cached outside the repo) if needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "${KUBEBUILDER_ASSETS:-}" ]]; then
  KUBEBUILDER_ASSETS="$(bash "$here/scripts/build-test-assets.sh")"
  export KUBEBUILDER_ASSETS
fi
exec "$@"
