/**
 * scripts/build-cluster-assets.sh with a stand-in `go` on PATH (the real builds
 * take minutes): it builds only what the cache lacks, reports progress, says
 * what to do without Go, and keeps nothing from a failed build. The Debian
 * tools it checks are installed on this machine, so it never calls apt-get here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../scripts/build-cluster-assets.sh', import.meta.url));
const ASSETS_SUBDIR = join('cluster-assets', 'k8s-v1.36.3-containerd-v2.2.1');
const ALL = [
  'kubelet',
  'kube-scheduler',
  'kube-proxy',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'registry',
  'pause',
];

/** A directory holding only a `go` that lists packages on stderr for `seconds`, then writes the -o file (or fails). */
function fakeGoPath(seconds: number, fail = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'fake-go-'));
  writeFileSync(
    join(dir, 'go'),
    `#!/bin/bash
# -o names the binary, or (ending in /) the directory for one binary per package after it.
out= packages=()
while [[ $# -gt 0 ]]; do [[ "$1" == -o ]] && out="$2" && shift 2 && packages=("$@") && break; shift; done
binaries=("$out")
[[ "$out" == */ ]] && binaries=() && for pkg in "\${packages[@]}"; do binaries+=("$out\${pkg##*/}"); done
for i in $(seq ${seconds * 4}); do echo "example.com/pkg$i" >&2; sleep 0.25; done
${fail ? 'echo "main.go:1:1: undefined: broken" >&2; exit 2' : 'for binary in "${binaries[@]}"; do printf "#!/bin/sh\\n" > "$binary"; chmod +x "$binary"; done'}
`,
  );
  chmodSync(join(dir, 'go'), 0o755);
  return dir;
}

/** A cache holding every binary except `missing`. */
function cacheWithout(missing: string[]): { cacheRoot: string; bin: string } {
  const cacheRoot = mkdtempSync(join(tmpdir(), 'cluster-assets-cache-'));
  const bin = join(cacheRoot, ASSETS_SUBDIR);
  mkdirSync(bin, { recursive: true });
  for (const binary of ALL.filter((name) => !missing.includes(name))) {
    writeFileSync(join(bin, binary), '#!/bin/sh\n');
    chmodSync(join(bin, binary), 0o755);
  }
  return { cacheRoot, bin };
}

function runScript(pathDirs: string[], cacheRoot: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('bash', [SCRIPT], {
    encoding: 'utf8',
    env: {
      PATH: [...pathDirs, '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(':'),
      HOME: process.env.HOME,
      TS_OPERATOR_SDK_CACHE: cacheRoot,
      PROGRESS_SECONDS: '1',
    },
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('a full cache prints the directory at once and builds nothing', () => {
  const { cacheRoot, bin } = cacheWithout([]);
  const result = runScript([fakeGoPath(30, true)], cacheRoot);
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, `${bin}\n`);
  assert.equal(result.stderr, '');
});

test('only the missing binary is built, with progress lines, then the directory is printed', () => {
  const { cacheRoot, bin } = cacheWithout(['containerd-shim-runc-v2']);
  const result = runScript([fakeGoPath(3)], cacheRoot);
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout, `${bin}\n`);
  assert.match(result.stderr, /building containerd-shim-runc-v2 v2\.2\.1 with Go/);
  assert.doesNotMatch(result.stderr, /building kubelet/);
  assert.ok(
    result.stderr
      .split('\n')
      .filter((line) =>
        /^build-cluster-assets: still building containerd-shim-runc-v2: 0m\ds, \d+ packages compiled$/.test(line),
      ).length >= 1,
    result.stderr,
  );
  assert.ok(existsSync(join(bin, 'containerd-shim-runc-v2')));
});

test('without Go, one line names what is missing and what to install', () => {
  const { cacheRoot } = cacheWithout(['pause']);
  const result = runScript([], cacheRoot);
  assert.equal(result.status, 1);
  assert.equal(result.stdout, '');
  assert.match(
    result.stderr,
    /^build-cluster-assets: Go is not installed, and pause must be built with it: .*Install Go 1\.26/,
  );
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
});

test('a failed build shows the compiler error, exits non-zero and keeps nothing', () => {
  const { cacheRoot, bin } = cacheWithout(['registry']);
  const result = runScript([fakeGoPath(1, true)], cacheRoot);
  assert.equal(result.status, 2);
  assert.match(
    result.stderr,
    /building registry failed; the end of go build's output:\nmain\.go:1:1: undefined: broken/,
  );
  assert.deepEqual(
    readdirSync(bin).filter((name) => name === 'registry' || name.startsWith('.build')),
    [],
  );
});
