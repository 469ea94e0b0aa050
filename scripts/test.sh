#!/usr/bin/env bash
# The test suite, or part of it: `npm test` runs every file (unit tests and
# everything on the real kube-apiserver: runtime, envtest, generators,
# scaffolded projects, in one pool; beside it the one-node cluster's tests,
# which need root).
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
# The tests' npm installs (init's, and the generated projects' `npm install`
# and `npm ci` the scaffold, e2e and cluster files run) take package metadata
# from npm's cache without asking the registry whether it changed: a generated
# project's install took 41 and 54 s instead of 70 and 77 s (load 8.5 to 10.7),
# with the same versions installed. What the cache lacks is still fetched; the
# price is that a warm machine sees a dependency's new release only once its
# cache lacks that package (a fresh machine always does). The generated
# projects are unchanged: this is the tests' environment only.
# npm_config_prefer_offline=false asks the registry every time.
export npm_config_prefer_offline="${npm_config_prefer_offline:-true}"
# Runs a step and appends "name<TAB>milliseconds" to steps.tsv, keeping its output and status.
step() {
  local name="$1" start status=0
  shift
  start="$(now_ms)"
  "$@" || status=$?
  printf '%s\t%s\n' "$name" "$(($(now_ms) - start))" >>"$times_dir/steps.tsv"
  return "$status"
}

# The Go asset builds (about 30 minutes cold, each prints its cached directory
# at once when warm) start first, in the background: the build below and the
# unit files need none of them, so a fresh machine's builds overlap those
# instead of running before them. One after another, not side by side: each Go
# build already uses both cores. Their progress lines go to stderr as they
# come (each names its script) and to $times_dir/asset-builds.log; a failed
# build fails the run with its own lines repeated at the end.
cache_root="${TS_OPERATOR_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ts-operator-sdk}"
assets_dir="$times_dir/assets" assets_pid=""
build_assets() {
  local name var
  for name in test cluster olm; do
    case "$name" in
      test) var=KUBEBUILDER_ASSETS ;;
      cluster) var=TS_OPERATOR_SDK_CLUSTER_ASSETS ;;
      olm) var=TS_OPERATOR_SDK_OLM_ASSETS ;;
    esac
    if [[ -n "${!var:-}" ]]; then
      printf '%s\n' "${!var}" >"$assets_dir/$name"
    elif ! step "build-$name-assets" bash "scripts/build-$name-assets.sh" >"$assets_dir/$name" \
      2> >(trap '' INT TERM && exec tee -a "$times_dir/asset-builds.log" >&2); then
      echo "scripts/build-$name-assets.sh" >"$assets_dir/failed"
      return 1
    fi
  done
}
if [[ $needs_assets == 1 ]]; then
  rm -rf "$assets_dir" "$times_dir/asset-builds.log" && mkdir -p "$assets_dir"
  # In a process group of its own (job control on for this one job), so that a
  # run that ends early (a wrong path, Ctrl-C) stops the builds it started
  # instead of leaving Go compiling for half an hour. The tee above ignores
  # the signal and ends when the build's last line is written: killed with
  # the build, it broke the pipe, and the build script died of SIGPIPE before
  # its exit trap removed its scratch directory from the cache.
  set -m
  build_assets &
  assets_pid=$!
  set +m
  trap '[[ -z "$assets_pid" ]] || kill -TERM -- "-$assets_pid" 2>/dev/null || true' EXIT
fi
# Waits for the asset builds and exports their directories: the control plane
# (etcd, kube-apiserver, kube-controller-manager), the cluster's binaries
# (kubelet, containerd, registry, ...; the e2e OLM tests run its `registry`)
# and OLM's operators and opm (built here rather than inside a test, where a
# test's time limit would cut the build short). Returns non-zero if one failed.
assets_ready() {
  [[ -n "$assets_pid" ]] || return 0
  local status=0
  wait "$assets_pid" || status=$?
  assets_pid=""
  if [[ $status -ne 0 ]]; then
    assets_failed="$(cat "$assets_dir/failed" 2>/dev/null || echo "an asset build")"
    return 1
  fi
  KUBEBUILDER_ASSETS="$(cat "$assets_dir/test")"
  TS_OPERATOR_SDK_CLUSTER_ASSETS="$(cat "$assets_dir/cluster")"
  TS_OPERATOR_SDK_OLM_ASSETS="$(cat "$assets_dir/olm")"
  export KUBEBUILDER_ASSETS TS_OPERATOR_SDK_CLUSTER_ASSETS TS_OPERATOR_SDK_OLM_ASSETS
}
assets_failed=""

step build npm run build
for arg in "${selection[@]}"; do
  if [[ "$arg" != *'*'* && ! -f "$arg" ]]; then
    echo "test.sh: $arg does not exist after the build; give a path under test/ that ends in .test.ts" >&2
    exit 2
  fi
done
shopt -s globstar nullglob
# shellcheck disable=SC2206 # the patterns above are meant to expand here, after the build wrote dist/
files=(${selection[@]})
shopt -u globstar nullglob

# Longest files first: node --test starts files in the order given, so a long
# file started last would run alone at the end while the other slot idles.
# The order comes from each file's last wall time, kept in the cache across
# runs ($cache_root/test-file-times.tsv, so a warm CI machine has it although
# .ci/run starts with an empty $TEST_TIMES_DIR); a file with none gets its
# directory's guess (scaffold files are the longest, unit files the shortest).
times_file="$cache_root/test-file-times.tsv"
longest_first() {
  { [[ -f "$times_file" ]] && cat "$times_file"; printf '%s\n' "$@" | sed 's/^/-\t/'; } | awk -F'\t' '
    $1 != "-" { last[$2] = $1; next }
    {
      ms = ($2 in last) ? last[$2] : ($2 ~ /\/scaffold\// ? 200000 : $2 ~ /\/e2e\// ? 40000 : 10000)
      printf "%d\t%s\n", ms, $2
    }' | sort -t $'\t' -k1,1nr -k2,2 | cut -f2
}
# After a run, each file's wall time replaces its last one; files that did not run keep theirs.
remember_times() {
  local new
  new="$(cat "$times_dir"/files*.jsonl 2>/dev/null | sed -nE 's/.*"file":"([^"]*)".*"wallMs":([0-9]+).*/\2\t\1/p; s/.*"wallMs":([0-9]+).*"file":"([^"]*)".*/\1\t\2/p' |
    sed "s#\t$PWD/#\t#")" || true
  [[ -n "$new" ]] || return 0
  mkdir -p "$cache_root"
  { [[ -f "$times_file" ]] && cat "$times_file"; printf '%s\n' "$new"; } |
    awk -F'\t' '{ ms[$2] = $1 } END { for (f in ms) printf "%s\t%s\n", ms[f], f }' | sort -t $'\t' -k2 >"$times_file.tmp"
  mv "$times_file.tmp" "$times_file"
}

unit=() other=() cluster=()
while IFS= read -r file; do
  case "$file" in
    dist/test/unit/*) unit+=("$file") ;;
    dist/test/cluster/*) cluster+=("$file") ;;
    *) other+=("$file") ;;
  esac
done < <(longest_first "${files[@]}")
# dist/test/run-files.js: node --test --test-force-exit with the files started in the order given
# (node --test sorts them by path); see the file.
# scripts/with-run-tmpdir.sh: every temporary file of the run goes under one directory, removed at the end.
run_files() {
  local name="$1" concurrency="$2"
  shift 2
  step "$name" bash scripts/with-run-tmpdir.sh node dist/test/run-files.js --concurrency "$concurrency" \
    --times "$times_dir/files-$name.jsonl" -- "$@"
}
# The lanes. Unit files share nothing (each case gets its own temporary
# directory) and spend their time spawning the CLI. The e2e and scaffold files
# each start their own control plane on ephemeral loopback ports and keep
# every file under their own temporary directory; the e2e files mostly wait
# (API servers, polling), the scaffold files are CPU-bound (npm install, tsc,
# ESLint). So all three kinds run in one pool, TEST_POOL_CONCURRENCY (default
# 3) files at a time, longest first. Two at a time kept the 2 cores busy only
# while the cluster lane ran beside the pool: a warm run sampled from
# /proc/stat (2026-11-27) was 94-100% busy for its first 14 minutes, then 41-72%
# for its last 8, when the pool's two slots held the short e2e files (mostly
# waiting on API servers) and unit files. A third slot fills that tail; while
# the cores are already busy it only shares them (the same CPU work).
# The cluster files need root and each starts its own one-node cluster in its
# own network namespace, cgroup and work directory; they share host settings
# (sysctls, /run/netns) that the harness records and restores, so they run one
# at a time. Nothing of the other files touches those, and the cluster files
# mostly wait for pods, so their lane runs beside the pool from its start
# (TEST_CLUSTER_BESIDE=0 runs it after the pool instead). Its report goes to a
# file while both run, and is printed once both are done, so the two reports
# don't interleave line by line.
# While the asset builds still run (a fresh machine), the unit files go first
# on their own, and the pool of e2e and scaffold files and the cluster lane
# wait for the builds.
pool_concurrency="${TEST_POOL_CONCURRENCY:-3}"
status=0 unit_ran=0
if [[ -n "$assets_pid" ]] && kill -0 "$assets_pid" 2>/dev/null; then
  echo "test.sh: the asset builds still run (their lines go to $times_dir/asset-builds.log too); the unit files run meanwhile"
  # Two at a time: the Go builds beside them already keep both cores busy.
  [[ ${#unit[@]} -eq 0 ]] || run_files unit-tests 2 "${unit[@]}" || status=$?
  unit_ran=1
fi
if [[ ${#other[@]} -gt 0 || ${#cluster[@]} -gt 0 ]] && ! assets_ready; then
  echo "test.sh: $assets_failed failed, so no e2e, scaffold or cluster file runs" >&2
  other=() cluster=() status=1
fi
pool=("${other[@]}")
# Longest first across the kinds too.
[[ $unit_ran == 1 || ${#unit[@]} -eq 0 ]] || mapfile -t pool < <(longest_first "${unit[@]}" "${other[@]}")
if [[ ${#pool[@]} -gt 0 && ${#cluster[@]} -gt 0 && "${TEST_CLUSTER_BESIDE:-1}" == 1 ]]; then
  cluster_report="$times_dir/cluster-tests.out"
  run_files cluster-tests 1 "${cluster[@]}" >"$cluster_report" 2>&1 &
  cluster_pid=$!
  run_files pool-tests "$pool_concurrency" "${pool[@]}" || status=$?
  cluster_status=0
  wait "$cluster_pid" || cluster_status=$?
  echo "--- test/cluster (run beside the files above; report kept in $cluster_report)"
  cat "$cluster_report"
  [[ $cluster_status -eq 0 ]] || status=$cluster_status
else
  [[ ${#pool[@]} -eq 0 ]] || run_files pool-tests "$pool_concurrency" "${pool[@]}" || status=$?
  [[ ${#cluster[@]} -eq 0 ]] || run_files cluster-tests 1 "${cluster[@]}" || status=$?
fi
remember_times
if [[ -n "$assets_failed" ]]; then
  # Repeated here, after the test reports, so the reason the run failed is the last thing it prints.
  echo "test.sh: $assets_failed failed, so no e2e, scaffold or cluster file ran; its last lines:" >&2
  tail -n 20 "$times_dir/asset-builds.log" >&2 || true
fi
exit "$status"
