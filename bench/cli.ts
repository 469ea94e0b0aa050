/**
 * CLI benchmark (prints numbers; not a test): each command users run most,
 * timed as a whole process side by side with the Go tool it stands for,
 * alternating ours and theirs run by run; the figure is the median wall time
 * of each and the median of the per-pair ratios ours/theirs (≤ 1.0 is the
 * target). On a shared machine only the ratios mean much; the load average
 * is printed with them.
 *
 * The peers are operator-sdk v1.42.3 and the controller-gen it pins, built
 * from the Go module proxy by scripts/build-cli-peers.sh into the user cache
 * (it prints the directory; pass it as BENCH_CLI_PEERS). Without them only
 * our times are printed.
 *
 * Like for like:
 * - init: ours with --skip-install (no npm install); operator-sdk's init and
 *   create api run `go mod tidy` (and init `go get`), its dependency step, so
 *   they run with a `go` first on PATH that skips `go mod tidy` and `go get`
 *   and passes everything else to the real go. create api runs with
 *   --make=false (no `make generate`, which would build controller-gen).
 * - generate manifests: ours on the TypeScript project, controller-gen with
 *   the Makefile's `manifests` arguments on the Go project operator-sdk
 *   scaffolded (same kind, same fields).
 * - generate kustomize manifests: each on its own project.
 * - generate bundle: the same manifest stream on stdin for both (`kubectl
 *   kustomize config/manifests` of our project), each in its own project.
 * - bundle validate: the same bundle directory (test/fixtures/bundles/memcached).
 *
 * Environment: BENCH_RUNS (pairs per command, default 10), BENCH_CLI_PEERS.
 * Run: npm run build && BENCH_CLI_PEERS="$(bash scripts/build-cli-peers.sh)" node dist/bench/cli.js
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../bin/ts-operator-sdk.js', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const peers = process.env.BENCH_CLI_PEERS;

/** One process to time: what to run, where, and what to give it on stdin. */
interface Invocation {
  file: string;
  args: string[];
  cwd: string;
  input?: string;
  env?: NodeJS.ProcessEnv;
}

/** Runs `run` to completion and returns its wall time in ms; a failure stops the benchmark with its stderr. */
function timed(run: Invocation): number {
  const started = performance.now();
  const result = spawnSync(run.file, run.args, {
    cwd: run.cwd,
    input: run.input,
    stdio: [run.input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
    env: { ...process.env, ...run.env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const elapsedMs = performance.now() - started;
  if (result.status !== 0) {
    throw new Error(`${run.file} ${run.args.join(' ')} (in ${run.cwd}) exited ${result.status}: ${result.stderr}`);
  }
  return elapsedMs;
}

const ours = (cwd: string, args: string[], input?: string): Invocation => ({
  file: process.execPath,
  args: [cli, ...args],
  cwd,
  input,
});

/** A command of both tools; `prepare` makes a fresh working directory for one run (untimed). */
interface Case {
  name: string;
  ours: (dir: string) => Invocation;
  theirs?: (dir: string) => Invocation;
  prepareOurs?: () => string;
  prepareTheirs?: () => string;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const scratch = mkdtempSync(join(tmpdir(), 'bench-cli-'));
const freshDir = (): string => mkdtempSync(join(scratch, 'run-'));
/** An empty project directory named as the project (init takes the project name from it). */
const emptyProject = (): string => {
  const dir = join(freshDir(), 'memcached-operator');
  mkdirSync(dir);
  return dir;
};
/** A fresh copy of `template` for one run. */
const copyOf =
  (template: string): (() => string) =>
  () => {
    const dir = join(freshDir(), 'memcached-operator');
    cpSync(template, dir, { recursive: true });
    return dir;
  };

// Our project: init, then the API, then manifests (what the later commands read).
const oursInit = join(scratch, 'ours-init', 'memcached-operator');
mkdirSync(oursInit, { recursive: true });
timed(ours(oursInit, ['init', '--domain', 'example.com', '--skip-install']));
const oursApi = join(scratch, 'ours-api', 'memcached-operator');
cpSync(oursInit, oursApi, { recursive: true });
timed(ours(oursApi, ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached']));
timed(ours(oursApi, ['generate', 'manifests']));
timed(ours(oursApi, ['generate', 'kustomize', 'manifests', '-q', '--interactive=false']));
// The same stream for both, as `make bundle` pipes it: kustomize's build of our config/manifests.
const stream = spawnSync('kubectl', ['kustomize', 'config/manifests'], { cwd: oursApi, encoding: 'utf8' }).stdout;
if (!stream) throw new Error('kubectl kustomize config/manifests printed nothing (is kubectl on PATH?)');
const streamFile = join(scratch, 'manifests.yaml');
writeFileSync(streamFile, stream);
/**
 * `run` with the stream piped in by `cat` through a real pipe: operator-sdk
 * reads stdin only when it is a named pipe, and Node's spawn gives a socket.
 * Both tools get the same pipe, so both pay the same shell and cat.
 */
const piped = (run: Invocation): Invocation => ({
  ...run,
  file: 'sh',
  args: ['-c', 'cat "$0" | "$@"', streamFile, run.file, ...run.args],
});
const bundleDir = join(repoRoot, 'test', 'fixtures', 'bundles', 'memcached');

const cases: Case[] = [
  {
    name: 'init',
    prepareOurs: emptyProject,
    ours: (dir) => ours(dir, ['init', '--domain', 'example.com', '--skip-install']),
  },
  {
    name: 'create api',
    prepareOurs: copyOf(oursInit),
    ours: (dir) => ours(dir, ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached']),
  },
  { name: 'generate manifests', ours: () => ours(oursApi, ['generate', 'manifests']) },
  {
    name: 'generate kustomize manifests',
    ours: () => ours(oursApi, ['generate', 'kustomize', 'manifests', '-q', '--interactive=false']),
  },
  {
    name: 'generate bundle (stdin)',
    ours: () => piped(ours(oursApi, ['generate', 'bundle', '-q', '--overwrite', '--version', '0.0.1'])),
  },
  { name: 'bundle validate', ours: () => ours(oursApi, ['bundle', 'validate', bundleDir]) },
];

if (peers) {
  const operatorSdk = join(peers, 'operator-sdk');
  const controllerGen = join(peers, 'controller-gen');
  // A `go` that skips the dependency steps (see the header), first on PATH for operator-sdk.
  const realGo = spawnSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).stdout.trim() + '/bin/go';
  const shimDir = join(scratch, 'go-shim');
  mkdirSync(shimDir);
  writeFileSync(
    join(shimDir, 'go'),
    `#!/bin/sh\ncase "$1 $2" in "mod tidy"|get\\ *) exit 0 ;; esac\nexec ${realGo} "$@"\n`,
  );
  chmodSync(join(shimDir, 'go'), 0o755);
  const shimEnv = { PATH: `${shimDir}${delimiter}${process.env.PATH ?? ''}` };
  const sdk = (dir: string, args: string[], input?: string): Invocation => ({
    file: operatorSdk,
    args,
    cwd: dir,
    input,
    env: shimEnv,
  });
  const initArgs = [
    'init',
    '--domain',
    'example.com',
    '--repo',
    'example.com/memcached-operator',
    '--skip-go-version-check',
  ];
  const apiArgs = ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'];
  const goInit = join(scratch, 'go-init', 'memcached-operator');
  mkdirSync(goInit, { recursive: true });
  timed(sdk(goInit, initArgs));
  const goApi = join(scratch, 'go-api', 'memcached-operator');
  cpSync(goInit, goApi, { recursive: true });
  timed(sdk(goApi, [...apiArgs, '--resource', '--controller', '--make=false']));
  // The real dependency step, once and untimed: controller-gen and operator-sdk load the Go packages.
  timed({ file: realGo, args: ['mod', 'tidy'], cwd: goApi });
  const controllerGenArgs = [
    'rbac:roleName=manager-role',
    'crd',
    'webhook',
    'paths=./...',
    'output:crd:artifacts:config=config/crd/bases',
  ];
  timed({ file: controllerGen, args: controllerGenArgs, cwd: goApi });
  const theirs: Record<string, Pick<Case, 'theirs' | 'prepareTheirs'>> = {
    init: { prepareTheirs: emptyProject, theirs: (dir) => sdk(dir, initArgs) },
    'create api': {
      prepareTheirs: copyOf(goInit),
      theirs: (dir) => sdk(dir, [...apiArgs, '--resource', '--controller', '--make=false']),
    },
    'generate manifests': { theirs: () => ({ file: controllerGen, args: controllerGenArgs, cwd: goApi }) },
    'generate kustomize manifests': {
      theirs: () => sdk(goApi, ['generate', 'kustomize', 'manifests', '-q', '--interactive=false']),
    },
    'generate bundle (stdin)': {
      theirs: () => piped(sdk(goApi, ['generate', 'bundle', '-q', '--overwrite', '--version', '0.0.1'])),
    },
    'bundle validate': { theirs: () => sdk(goApi, ['bundle', 'validate', bundleDir]) },
  };
  for (const item of cases) Object.assign(item, theirs[item.name]);
}

const rows: string[] = [];
const loads: number[] = [];
for (const item of cases) {
  const oursMs: number[] = [];
  const theirsMs: number[] = [];
  const ratios: number[] = [];
  // One untimed run of each first: the page cache and the compile cache are warm for both.
  for (let run = -1; run < RUNS; run++) {
    const a = timed(item.ours(item.prepareOurs?.() ?? ''));
    const b = item.theirs ? timed(item.theirs(item.prepareTheirs?.() ?? '')) : undefined;
    if (run < 0) continue;
    oursMs.push(a);
    if (b !== undefined) {
      theirsMs.push(b);
      ratios.push(a / b);
    }
    loads.push(loadavg()[0]!);
  }
  rows.push(
    [
      item.name.padEnd(30),
      `${Math.round(median(oursMs))} ms`.padStart(9),
      theirsMs.length ? `${Math.round(median(theirsMs))} ms`.padStart(9) : '        -',
      ratios.length ? `${median(ratios).toFixed(2)}×`.padStart(7) : '      -',
    ].join('  '),
  );
}
rmSync(scratch, { recursive: true, force: true });

console.log(
  `CLI side by side: medians of ${RUNS} alternating runs per command (wall time); ratio = median of ours/theirs per pair`,
);
console.log(
  `peer: ${peers ? 'operator-sdk v1.42.3, controller-gen (generate manifests)' : 'none (set BENCH_CLI_PEERS to the directory scripts/build-cli-peers.sh prints)'}; load average (1 min) median ${median(loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)}`,
);
console.log(`${'command'.padEnd(30)}  ${'ours'.padStart(9)}  ${'theirs'.padStart(9)}  ${'ratio'.padStart(7)}`);
for (const row of rows) console.log(row);
