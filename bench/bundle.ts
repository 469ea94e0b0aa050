/**
 * Bundle benchmark (prints numbers; not a test): cold `generate bundle`
 * (kustomize output on stdin) and cold `bundle validate`, each a whole CLI
 * process, on the Memcached project and on a 20-API project.
 * Target: each under 0.5 s on 2 cores.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../bin/ts-operator-sdk.js', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

function run(cwd: string, args: string[], input?: string): void {
  execFileSync(process.execPath, [cli, ...args], {
    cwd,
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'inherit'],
  });
}

function project(kinds: number): { dir: string; manifests: string } {
  const dir = join(mkdtempSync(join(tmpdir(), 'bench-bundle-')), 'bench-operator');
  mkdirSync(dir);
  run(dir, ['init', '--domain', 'example.com', '--skip-install']);
  for (let i = 0; i < kinds; i++) {
    const kind = kinds === 1 ? 'Memcached' : `Widget${String.fromCharCode(65 + i)}`;
    run(dir, ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', kind, '--resource', '--controller']);
  }
  run(dir, ['generate', 'manifests']);
  run(dir, ['generate', 'kustomize', 'manifests', '-q']);
  const manifests = execFileSync('kubectl', ['kustomize', 'config/manifests'], { cwd: dir, encoding: 'utf8' });
  return { dir, manifests };
}

function timed(action: () => void): number[] {
  return Array.from({ length: RUNS }, () => {
    const started = performance.now();
    action();
    return performance.now() - started;
  });
}

const summary = (ms: number[]): string => {
  const sorted = [...ms].sort((a, b) => a - b);
  return `median ${Math.round(sorted[Math.floor(sorted.length / 2)]!)} ms (${Math.round(sorted[0]!)}–${Math.round(sorted[sorted.length - 1]!)})`;
};

for (const [label, kinds] of [
  ['Memcached', 1],
  ['20 APIs', 20],
] as const) {
  const { dir, manifests } = project(kinds);
  try {
    const generate = timed(() =>
      run(dir, ['generate', 'bundle', '-q', '--overwrite', '--version', '0.0.1'], manifests),
    );
    const validate = timed(() => run(dir, ['bundle', 'validate', './bundle']));
    console.log(
      `${label}: generate bundle ${summary(generate)}, bundle validate ${summary(validate)} over ${RUNS} cold runs`,
    );
  } finally {
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}
