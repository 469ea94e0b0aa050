#!/usr/bin/env bash
# The whole test suite: unit tests, then everything that runs on the real
# kube-apiserver (runtime, envtest, generators, scaffolded projects), then
# the tests on the one-node cluster (test/cluster; they need root).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
npm run build
# The cluster's binaries (kubelet, containerd, registry, ...), built once into a cache outside the repo.
TS_OPERATOR_SDK_CLUSTER_ASSETS="${TS_OPERATOR_SDK_CLUSTER_ASSETS:-$(bash scripts/build-cluster-assets.sh)}"
export TS_OPERATOR_SDK_CLUSTER_ASSETS
# OLM's operators and opm for the OLM tests (about 10 minutes cold), built here
# rather than inside a test, where a test's time limit would cut the build short.
TS_OPERATOR_SDK_OLM_ASSETS="${TS_OPERATOR_SDK_OLM_ASSETS:-$(bash scripts/build-olm-assets.sh)}"
export TS_OPERATOR_SDK_OLM_ASSETS
# --test-force-exit: a file whose tests have all finished ends even if a handle keeps its event loop
# alive (one that hung kept a whole run waiting until CI's limit); its failures are still reported.
# child-report-guard: no test result may be lost on its way to the runner (see the file).
# scripts/with-run-tmpdir.sh: every temporary file of the run goes under one directory, removed at the end.
exec bash scripts/with-run-tmpdir.sh bash scripts/with-test-assets.sh node --test --test-concurrency=1 --test-force-exit --import ./dist/test/child-report-guard.js \
  'dist/test/unit/**/*.test.js' 'dist/test/e2e/**/*.test.js' 'dist/test/scaffold/**/*.test.js' 'dist/test/cluster/**/*.test.js'
