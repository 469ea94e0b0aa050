#!/usr/bin/env bash
# The test suite, or part of it: `npm test` runs every file (unit tests, then
# everything on the real kube-apiserver: runtime, envtest, generators,
# scaffolded projects, then the one-node cluster's tests, which need root).
# Arguments choose what to run instead, so every partial command sets up what
# its files need the way the whole run does:
#   scripts/test.sh test/unit test/e2e        whole directories (npm run test:unit, test:e2e, ...)
#   scripts/test.sh test/unit/plurals.test.ts one file (the .ts or its dist/…/.js)
# Unit tests need no binaries; anything else gets the control plane
# (KUBEBUILDER_ASSETS), the cluster's binaries (the e2e OLM tests run its
# `registry`) and OLM's, each built once into a cache outside the repo.
# Each step's time and each file's wall time go to $TEST_TIMES_DIR
# (.tmp/test-times): scripts/ci-time.sh prints them sorted.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

selection=()
needs_assets=0
[[ $# -eq 0 ]] && set -- test/unit test/e2e test/scaffold test/cluster
for arg in "$@"; do
  path="${arg%/}"
  case "$path" in
    test/unit | test/e2e | test/scaffold | test/cluster) selection+=("dist/$path/**/*.test.js") ;;
    dist/test/*.js) selection+=("$path") ;;
    test/*.test.ts | test/*.test.js) path="dist/${path%.*}.js" && selection+=("$path") ;;
    *)
      echo "test.sh: $arg is not a test file or one of test/unit, test/e2e, test/scaffold, test/cluster; give e.g. test/unit/plurals.test.ts" >&2
      exit 2
      ;;
  esac
  [[ "$path" == test/unit || "$path" == */test/unit/* ]] || needs_assets=1
done

times_dir="${TEST_TIMES_DIR:-$PWD/.tmp/test-times}"
mkdir -p "$times_dir"
# Run alone, a run's times replace the last one's; under .ci/run they join its own steps.
[[ -n "${TEST_TIMES_DIR:-}" ]] || : >"$times_dir/steps.tsv"
rm -f "$times_dir"/files*.jsonl
now_ms() { date +%s%3N; }
# Runs a step and appends "name<TAB>milliseconds" to steps.tsv, keeping its output and status.
step() {
  local name="$1" start status=0
  shift
  start="$(now_ms)"
  "$@" || status=$?
  printf '%s\t%s\n' "$name" "$(($(now_ms) - start))" >>"$times_dir/steps.tsv"
  return "$status"
}

step build npm run build
for arg in "${selection[@]}"; do
  if [[ "$arg" != *'*'* && ! -f "$arg" ]]; then
    echo "test.sh: $arg does not exist after the build; give a path under test/ that ends in .test.ts" >&2
    exit 2
  fi
done
if [[ $needs_assets == 1 ]]; then
  # The control plane (etcd, kube-apiserver, kube-controller-manager).
  KUBEBUILDER_ASSETS="${KUBEBUILDER_ASSETS:-$(step build-test-assets bash scripts/build-test-assets.sh)}"
  # The cluster's binaries (kubelet, containerd, registry, ...).
  TS_OPERATOR_SDK_CLUSTER_ASSETS="${TS_OPERATOR_SDK_CLUSTER_ASSETS:-$(step build-cluster-assets bash scripts/build-cluster-assets.sh)}"
  # OLM's operators and opm for the OLM tests (about 10 minutes cold), built here
  # rather than inside a test, where a test's time limit would cut the build short.
  TS_OPERATOR_SDK_OLM_ASSETS="${TS_OPERATOR_SDK_OLM_ASSETS:-$(step build-olm-assets bash scripts/build-olm-assets.sh)}"
  export KUBEBUILDER_ASSETS TS_OPERATOR_SDK_CLUSTER_ASSETS TS_OPERATOR_SDK_OLM_ASSETS
fi
# Unit files share nothing (each case gets its own temporary directory) and
# spend their time spawning the CLI, so two run at once (16.4 -> 15.2 minutes
# for test/unit on this 2-core machine under load; figures in the commit).
# TEST_UNIT_CONCURRENCY=1 runs the unit files in turn too.
# The e2e and scaffold files each start their own control plane on ephemeral
# loopback ports, keep every file under their own temporary directory and
# mostly wait (API servers, polling, npm install): the load average stayed at
# 0.5-2 while they ran one at a time. So TEST_OTHER_CONCURRENCY (default 2)
# of them run at once: test/e2e took 11.9 minutes of wall time for 23.4 of
# file time at load 11-20 (other runs on the machine), 13.5 minutes one at a
# time on a quiet one. 3 is not measured yet; it is unlikely to help on 2
# cores: the scaffold files are CPU-bound (npm install, tsc, ESLint), and two
# of them side by side already slow each other down. Figures in the README's
# contributing section.
# The cluster files need root and each starts its own one-node cluster in its
# own network namespace, cgroup and work directory; they share host settings
# (sysctls, /run/netns) that the harness records and restores, so they run one
# at a time. Nothing of the e2e and scaffold files touches those, and the
# cluster files mostly wait for pods, so their lane runs beside the e2e and
# scaffold pool (TEST_CLUSTER_BESIDE=0 runs it after the pool instead). Its
# report goes to a file while both run, and is printed once both are done, so
# the two reports don't interleave line by line.
unit=() other=() cluster=()
for arg in "${selection[@]}"; do
  case "$arg" in
    dist/test/unit/*) unit+=("$arg") ;;
    dist/test/cluster/*) cluster+=("$arg") ;;
    *) other+=("$arg") ;;
  esac
done
# --test-force-exit: a file whose tests have all finished ends even if a handle keeps its event loop
# alive (one that hung kept a whole run waiting until CI's limit); its failures are still reported.
# child-report-guard: no test result may be lost on its way to the runner (see the file).
# scripts/with-run-tmpdir.sh: every temporary file of the run goes under one directory, removed at the end.
run_files() {
  local name="$1" concurrency="$2"
  shift 2
  step "$name" bash scripts/with-run-tmpdir.sh node --test --test-concurrency="$concurrency" --test-force-exit \
    --import ./dist/test/child-report-guard.js \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=./dist/test/times-reporter.js --test-reporter-destination="$times_dir/files-$name.jsonl" \
    "$@"
}
status=0
[[ ${#unit[@]} -eq 0 ]] || run_files unit-tests "${TEST_UNIT_CONCURRENCY:-2}" "${unit[@]}" || status=$?
if [[ ${#other[@]} -gt 0 && ${#cluster[@]} -gt 0 && "${TEST_CLUSTER_BESIDE:-1}" == 1 ]]; then
  cluster_report="$times_dir/cluster-tests.out"
  run_files cluster-tests 1 "${cluster[@]}" >"$cluster_report" 2>&1 &
  cluster_pid=$!
  run_files other-tests "${TEST_OTHER_CONCURRENCY:-2}" "${other[@]}" || status=$?
  cluster_status=0
  wait "$cluster_pid" || cluster_status=$?
  echo "--- test/cluster (run beside the files above; report kept in $cluster_report)"
  cat "$cluster_report"
  [[ $cluster_status -eq 0 ]] || status=$cluster_status
else
  [[ ${#other[@]} -eq 0 ]] || run_files other-tests "${TEST_OTHER_CONCURRENCY:-2}" "${other[@]}" || status=$?
  [[ ${#cluster[@]} -eq 0 ]] || run_files cluster-tests 1 "${cluster[@]}" || status=$?
fi
exit "$status"
