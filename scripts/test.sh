#!/usr/bin/env bash
# The whole test suite: unit tests, then everything that runs on the real
# kube-apiserver (runtime, envtest, generators, scaffolded projects), then
# the tests on the one-node cluster (test/cluster; they need root).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
npm run build
# The cluster's binaries (kubelet, containerd, registry, ...), built once into a cache outside the repo.
TS_OPERATOR_SDK_CLUSTER_ASSETS="${TS_OPERATOR_SDK_CLUSTER_ASSETS:-$(bash ci/build-cluster-assets.sh)}"
export TS_OPERATOR_SDK_CLUSTER_ASSETS
# OLM's operators and opm for the OLM tests (about 10 minutes cold), built here
# rather than inside a test, where a test's time limit would cut the build short.
TS_OPERATOR_SDK_OLM_ASSETS="${TS_OPERATOR_SDK_OLM_ASSETS:-$(bash ci/build-olm-assets.sh)}"
export TS_OPERATOR_SDK_OLM_ASSETS
# Every temporary file of this run (scaffolded projects with their node_modules, control-plane
# data, cluster state) goes under one directory that is removed when the run ends, pass or fail.
# Each test cleaning up after itself missed some, and a whole run left about 3.5 GB in /tmp.
# KEEP_TEST_TMPDIR=1 keeps it for a post-mortem. --one-file-system: never follow a mount a
# cluster test left behind out of the directory.
RUN_TMPDIR="$(mktemp -d "${TMPDIR:-/tmp}/ts-operator-sdk-test-XXXXXX")"
# It stands in for /tmp, so it gets /tmp's mode: the bad-input tests run the CLI as `nobody`.
chmod 1777 "$RUN_TMPDIR"
export TMPDIR="$RUN_TMPDIR"
remove_run_tmpdir() {
  if [[ "${KEEP_TEST_TMPDIR:-}" == 1 ]]; then
    echo "test run's temporary files kept in $RUN_TMPDIR" >&2
  else
    rm -rf --one-file-system "$RUN_TMPDIR" || echo "could not remove all of $RUN_TMPDIR; remove it by hand" >&2
  fi
}
trap remove_run_tmpdir EXIT
# --test-force-exit: a file whose tests have all finished ends even if a handle keeps its event loop
# alive (one that hung kept a whole run waiting until CI's limit); its failures are still reported.
# child-report-guard: no test result may be lost on its way to the runner (see the file).
bash scripts/with-test-assets.sh node --test --test-concurrency=1 --test-force-exit --import ./dist/test/child-report-guard.js \
  'dist/test/unit/**/*.test.js' 'dist/test/e2e/**/*.test.js' 'dist/test/scaffold/**/*.test.js' 'dist/test/cluster/**/*.test.js'
