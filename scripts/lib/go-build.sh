# Shared by the scripts/build-*-assets.sh and scripts/build-cli-peers.sh (sourced,
# not run): the check for what is already built, a build directory that vanishes on
# exit, and `go build` with a progress line, since go build itself says nothing
# for minutes. The sourcing script sets BUILD_SCRIPT_NAME for its messages.

PROGRESS_SECONDS="${PROGRESS_SECONDS:-30}"

# Every build script's prologue: sets `missing` to the files among $4... that
# directory $1 lacks (checked with `test $2`: -x for binaries, -s for other
# files). When none is missing it prints $1 and exits 0, so a warm cache costs
# a stat per file. Otherwise Go must be on PATH; without it, one line names
# what must be built, then $3: who needs it, and how to go on.
exit_if_built() {
  local dir="$1" check="$2" why="$3" file
  shift 3
  missing=()
  for file in "$@"; do
    test "$check" "$dir/$file" || missing+=("$file")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "$dir"
    exit 0
  fi
  if ! command -v go >/dev/null; then
    echo "$BUILD_SCRIPT_NAME: Go is not installed, and ${missing[*]} must be built with it: $why" >&2
    exit 1
  fi
}

# Downloads module $1 through the module proxy (exact versions only) and prints its directory.
module_dir() {
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}
# The scripts folder, absolute, for the wrapper modules in scripts/go/.
go_build_scripts_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
heartbeat_pid=

# Makes $tmp, a scratch directory inside $1 (so finished binaries move with a
# rename), removed on exit together with any progress reporter still running.
# Nothing of a failed or interrupted build is kept.
start_build_dir() {
  mkdir -p "$1"
  tmp="$(mktemp -d "$1/.build.XXXXXX")"
  # Go's module cache writes read-only files; u+w lets rm remove them.
  trap '[[ -n "$heartbeat_pid" ]] && kill "$heartbeat_pid" 2>/dev/null; chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
}

# Prints a line every PROGRESS_SECONDS while $1 is being built, counting the
# packages go build -v has listed in log $2 so far.
progress() {
  local what="$1" log="$2" start
  start="$(date +%s)"
  while sleep "$PROGRESS_SECONDS"; do
    local elapsed=$(( $(date +%s) - start ))
    echo "$BUILD_SCRIPT_NAME: still building $what: $((elapsed / 60))m$((elapsed % 60))s, $(wc -l < "$log" | tr -d ' ') packages compiled" >&2
  done
}

# Runs `go build -v` in directory $2 with the rest as arguments, reporting
# progress as $1; on failure prints the end of go build's own messages (not
# its package list) and exits with its status.
# Every build links with -s -w, which drops the debug information, so the
# compiler is told not to make it (-dwarf=false): etcd's build took 216 CPU
# seconds instead of 234 (-8 %, 2026-11-27), and a fresh machine's builds
# are about 65 CPU minutes. With BUILD_WITHOUT_INLINING set (see
# build_rarely_run), packages outside the standard library are compiled
# with -l; the standard library keeps the flags of every other build, so its
# compiled packages in Go's build cache serve all of them.
build() {
  local what="$1" dir="$2"; shift 2
  local gcflags=(-gcflags=all=-dwarf=false) log
  [[ -z "${BUILD_WITHOUT_INLINING:-}" ]] || gcflags=("-gcflags=all=-dwarf=false -l" -gcflags=std=-dwarf=false)
  log="$(mktemp "$tmp/go-build.XXXXXX.log")"
  progress "$what" "$log" &
  heartbeat_pid=$!
  local status=0
  (cd "$dir" && go build -v "${gcflags[@]}" "$@" 2> "$log") || status=$?
  kill "$heartbeat_pid" 2>/dev/null || true
  wait "$heartbeat_pid" 2>/dev/null || true
  heartbeat_pid=
  if [[ $status -ne 0 ]]; then
    echo "$BUILD_SCRIPT_NAME: building $what failed; the end of go build's output:" >&2
    grep -v '^[a-z0-9.-]*\(/[^ ]*\)\?$' "$log" | tail -n 20 >&2 || tail -n 20 "$log" >&2
    exit "$status"
  fi
}

# `build` without inlining (-l), for the binaries the tests start a few
# times and that mostly wait: OLM's, opm, the registry, containerd and pause.
# The compiler does about a fifth less work (the registry, everything -l:
# 141 CPU seconds against 176 from an empty build cache, 2026-11-27; -N as
# well saved nothing more). The ones every test file starts (etcd,
# kube-apiserver, and the Kubernetes binaries built beside them, which share
# its packages) keep the optimized build: there, slower code would cost
# every run, warm ones too.
build_rarely_run() {
  BUILD_WITHOUT_INLINING=1 build "$@"
}

# Builds Kubernetes commands $@ (k8s.io/kubernetes/cmd/<name>) at $KUBE_VERSION
# into $tmp, from the wrapper module that pins every k8s.io module to that
# version, in ONE go build: its links then run beside the compilation of the
# next binary's packages instead of one after another (kube-apiserver and
# kube-controller-manager: 33 s together against 34 + 21 s in turn, with the
# packages already compiled, at load 6). Version ldflags as upstream's
# hack/lib/version.sh sets them, so /version and discovery report a real
# version instead of v0.0.0-master.
build_kube_binaries() {
  local minor="${KUBE_VERSION#v1.}" ldflags="-s -w" pkg packages=()
  minor="${minor%%.*}"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  for pkg in "$@"; do packages+=("k8s.io/kubernetes/cmd/$pkg"); done
  build "$(words "$@")" "$go_build_scripts_dir/go/kube-apiserver" -trimpath -tags selinux,notest \
    -ldflags "$ldflags" -o "$tmp/" "${packages[@]}"
}

# "a", "a and b", "a, b and c": the binaries one go build makes, for its messages.
words() {
  local out="$1"
  shift
  while [[ $# -gt 1 ]]; do out+=", $1" && shift; done
  [[ $# -eq 0 ]] || out+=" and $1"
  echo "$out"
}
