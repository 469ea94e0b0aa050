/**
 * `generate manifests` benchmark (prints numbers; not a test): cold runs of
 * the real CLI, each a fresh process, on the scaffolded Memcached project and
 * on a project with 20 APIs. Target: ≤ 1.5 s for Memcached on 2 cores.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(repo, 'bin', 'ts-operator-sdk.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

function run(cwd: string, ...args: string[]): void {
  execFileSync(process.execPath, [cli, ...args], { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A scaffolded project with `kinds` APIs, its node_modules pointing at this repo's (as after npm install). */
function scaffold(kinds: number): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'bench-manifests-')), 'bench-operator');
  mkdirSync(dir);
  run(dir, 'init', '--domain', 'example.com', '--skip-install');
  mkdirSync(join(dir, 'node_modules', '@kubernetes'), { recursive: true });
  symlinkSync(repo, join(dir, 'node_modules', 'ts-operator-sdk'));
  symlinkSync(
    join(repo, 'node_modules', '@kubernetes', 'client-node'),
    join(dir, 'node_modules', '@kubernetes', 'client-node'),
  );
  for (let i = 0; i < kinds; i++) {
    const kind = kinds === 1 ? 'Memcached' : `Widget${String.fromCharCode(65 + i)}`;
    run(dir, 'create', 'api', '--group', 'cache', '--version', 'v1', '--kind', kind, '--resource', '--controller');
  }
  return dir;
}

function time(dir: string): number[] {
  return Array.from({ length: RUNS }, () => {
    const started = performance.now();
    run(dir, 'generate', 'manifests');
    return (performance.now() - started) / 1000;
  });
}

const summary = (seconds: number[]): string => {
  const sorted = [...seconds].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} s, min ${sorted[0]!.toFixed(2)} s, max ${sorted[sorted.length - 1]!.toFixed(2)} s over ${seconds.length} cold runs`;
};

for (const [label, kinds] of [
  ['Memcached (1 API)', 1],
  ['20 APIs', 20],
] as const) {
  const dir = scaffold(kinds);
  try {
    console.log(`generate manifests, ${label}: ${summary(time(dir))}`);
  } finally {
    rmSync(join(dir, '..'), { recursive: true, force: true });
  }
}
