#!/usr/bin/env bash
# Runs a command with TMPDIR set to a new directory of its own, and removes that
# directory when the command ends, pass or fail, keeping the command's exit status.
# npm test runs under it: each test cleaning up after itself missed some, and a
# whole run left about 3.5 GB (scaffolded projects with their node_modules,
# control-plane data) in /tmp. One directory per run also catches the next test
# that forgets.
#
# KEEP_TEST_TMPDIR=1 keeps the directory for a post-mortem and says where it is.
set -euo pipefail
RUN_TMPDIR="$(mktemp -d "${TMPDIR:-/tmp}/ts-operator-sdk-test-XXXXXX")"
# It stands in for /tmp, so it gets /tmp's mode: the bad-input tests run the CLI as `nobody`.
chmod 1777 "$RUN_TMPDIR"
remove_run_tmpdir() {
  if [[ "${KEEP_TEST_TMPDIR:-}" == 1 ]]; then
    echo "test run's temporary files kept in $RUN_TMPDIR" >&2
  else
    # --one-file-system: never follow a mount a cluster test left behind out of the directory.
    rm -rf --one-file-system "$RUN_TMPDIR" || echo "could not remove all of $RUN_TMPDIR; remove it by hand" >&2
  fi
}
trap remove_run_tmpdir EXIT
# An interrupted run cleans up too: exit (which runs the EXIT trap) with the signal's usual status.
trap 'exit 130' INT
trap 'exit 143' TERM
# What the run's files make once and share (the packed repository, installed
# dependencies: test/scaffold/harness.ts), removed with the run.
mkdir "$RUN_TMPDIR/shared"
TMPDIR="$RUN_TMPDIR" TS_OPERATOR_SDK_TEST_SHARED_DIR="$RUN_TMPDIR/shared" "$@"
