/**
 * CLI benchmark (prints numbers; not a test): cold `init --skip-install` and
 * `create api`, each timed as a whole process. Target: ≤ 300 ms each on 2 cores.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../bin/ts-operator-sdk.js', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 10);

function timed(cwd: string, args: string[]): number {
  const started = performance.now();
  execFileSync(process.execPath, [cli, ...args], { cwd, stdio: 'ignore' });
  return performance.now() - started;
}

const init: number[] = [];
const createApi: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const root = mkdtempSync(join(tmpdir(), 'bench-cli-'));
  const dir = join(root, 'memcached-operator');
  mkdirSync(dir);
  init.push(timed(dir, ['init', '--domain', 'example.com', '--skip-install']));
  createApi.push(timed(dir, ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached']));
  rmSync(root, { recursive: true, force: true });
}

const summary = (ms: number[]): string => {
  const sorted = [...ms].sort((a, b) => a - b);
  return `median ${Math.round(sorted[Math.floor(sorted.length / 2)]!)} ms, min ${Math.round(sorted[0]!)} ms, max ${Math.round(sorted[sorted.length - 1]!)} ms over ${ms.length} runs`;
};
console.log(`init --skip-install: ${summary(init)}`);
console.log(`create api:          ${summary(createApi)}`);
