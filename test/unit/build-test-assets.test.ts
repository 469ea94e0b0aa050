/**
 * scripts/build-test-assets.sh, with a stand-in `go` on PATH (a script that takes
 * a few seconds and writes the -o file; the real build takes 8 to 30 minutes):
 * it must report progress while the build runs, say what to do without Go,
 * and keep nothing from a failed build.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../scripts/build-test-assets.sh', import.meta.url));
const ASSETS_SUBDIR = join('test-assets', 'k8s-v1.36.3-etcd-v3.6.8');

/** A PATH holding only a `go` that lists packages on stderr for `seconds`, then writes the -o file (or fails). */
function fakeGoPath(seconds: number, fail = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'fake-go-'));
  const script = `#!/bin/bash
# -o names the binary, or (ending in /) the directory for one binary per package after it.
out= packages=()
while [[ $# -gt 0 ]]; do [[ "$1" == -o ]] && out="$2" && shift 2 && packages=("$@") && break; shift; done
binaries=("$out")
echo "$out" >> "$(dirname "$0")/calls"
[[ "$out" == */ ]] && binaries=() && for pkg in "\${packages[@]}"; do binaries+=("$out\${pkg##*/}"); done
for i in $(seq ${seconds * 4}); do echo "example.com/pkg$i" >&2; sleep 0.25; done
${fail ? 'echo "main.go:1:1: undefined: broken" >&2; exit 2' : 'for binary in "${binaries[@]}"; do printf "#!/bin/sh\\n" > "$binary"; chmod +x "$binary"; done'}
`;
  writeFileSync(join(dir, 'go'), script);
  chmodSync(join(dir, 'go'), 0o755);
  return dir;
}

/** Runs the script with a fresh cache, `pathDirs` first on PATH, and only the basic tools after them. */
function runScript(
  pathDirs: string[],
  cacheRoot = mkdtempSync(join(tmpdir(), 'assets-cache-')),
): { status: number | null; stdout: string; stderr: string; cacheRoot: string } {
  const result = spawnSync('bash', [SCRIPT], {
    encoding: 'utf8',
    env: {
      PATH: [...pathDirs, '/usr/bin', '/bin'].join(':'),
      HOME: process.env.HOME,
      TS_OPERATOR_SDK_CACHE: cacheRoot,
      PROGRESS_SECONDS: '1',
    },
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, cacheRoot };
}

describe('scripts/build-test-assets.sh', () => {
  test('prints progress lines while go build runs, then the assets directory', () => {
    // Only kube-controller-manager is missing, so one 4-second fake build runs.
    const cacheRoot = mkdtempSync(join(tmpdir(), 'assets-cache-'));
    const bin = join(cacheRoot, ASSETS_SUBDIR);
    mkdirSync(bin, { recursive: true });
    for (const binary of ['etcd', 'kube-apiserver']) {
      writeFileSync(join(bin, binary), '#!/bin/sh\n');
      chmodSync(join(bin, binary), 0o755);
    }
    const result = runScript([fakeGoPath(4)], cacheRoot);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, `${bin}\n`);
    assert.match(
      result.stderr,
      /building kube-controller-manager v1\.36\.3 with Go \(8 to 30 minutes on 2 cores; progress every 1s\)/,
    );
    const progress = result.stderr
      .split('\n')
      .filter((line) =>
        /^build-test-assets: still building kube-controller-manager: 0m\ds, \d+ packages compiled$/.test(line),
      );
    assert.ok(progress.length >= 2, result.stderr);
    assert.ok(existsSync(join(bin, 'kube-controller-manager')));
  });

  test('kube-apiserver and kube-controller-manager come from one go build', () => {
    const cacheRoot = mkdtempSync(join(tmpdir(), 'assets-cache-'));
    const bin = join(cacheRoot, ASSETS_SUBDIR);
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'etcd'), '#!/bin/sh\n');
    chmodSync(join(bin, 'etcd'), 0o755);
    const goDir = fakeGoPath(1);
    const result = runScript([goDir], cacheRoot);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, /building kube-apiserver and kube-controller-manager v1\.36\.3 with Go/);
    // One invocation, whose -o is the build directory, not a file.
    assert.match(readFileSync(join(goDir, 'calls'), 'utf8'), /^[^\n]*\/\n$/);
    assert.ok(existsSync(join(bin, 'kube-apiserver')) && existsSync(join(bin, 'kube-controller-manager')));
  });

  test('a failed build exits non-zero with the end of its output and keeps nothing', () => {
    const result = runScript([fakeGoPath(1, true)]);
    assert.notEqual(result.status, 0);
    assert.match(
      result.stderr,
      /build-test-assets: building etcd failed; the end of go build's output:\nmain\.go:1:1: undefined: broken/,
    );
    const bin = join(result.cacheRoot, ASSETS_SUBDIR);
    assert.deepEqual(readdirSync(bin), [], 'no binary and no .build directory left');
  });

  test('without Go it says so in one line and suggests setup-envtest', () => {
    const result = runScript([]);
    assert.equal(result.status, 1);
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0]!,
      /^build-test-assets: Go is not installed, and etcd kube-apiserver kube-controller-manager must be built with it: .*setup-envtest use 1\.36\.3 -p path/,
    );
  });
});
