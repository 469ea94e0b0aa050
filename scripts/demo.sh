#!/usr/bin/env bash
# The main job, end to end: build and pack this package, scaffold a Memcached
# operator with it (init + create api), install it against the local package,
# generate its manifests, build it, and run its own tests on a real API server.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${DEMO_DIR:-$repo/.tmp/demo}"
cd "$repo"
npm run build
rm -rf "$work" && mkdir -p "$work/memcached-operator"
tarball="$work/$(npm pack --silent --pack-destination "$work" | tail -n 1)"
export TS_OPERATOR_SDK_PACKAGE_SPEC="file:$tarball"
cli="node $repo/bin/ts-operator-sdk.js"

cd "$work/memcached-operator"
$cli init --domain example.com --skip-install
$cli create api --group cache --version v1 --kind Memcached --resource --controller
npm install --no-fund --no-audit
if $cli generate manifests --help >/dev/null 2>&1; then
  npx ts-operator-sdk generate manifests
fi
npm run build
bash "$repo/scripts/with-test-assets.sh" npm test
echo "demo operator ready in $work/memcached-operator"
