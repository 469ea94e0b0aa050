#!/usr/bin/env bash
# The whole test suite: unit tests, then everything that runs on the real
# kube-apiserver (runtime, envtest, generators, scaffolded projects).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
npm run build
exec bash scripts/with-test-assets.sh node --test --test-concurrency=1 \
  'dist/test/unit/**/*.test.js' 'dist/test/e2e/**/*.test.js' 'dist/test/scaffold/**/*.test.js'
