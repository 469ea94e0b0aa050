/**
 * Shared by the CLI tests: runs the real entry point (bin/ts-operator-sdk.js)
 * as a child process with stdin closed (no TTY), and fingerprints directories.
 */
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { byteOrder } from '../../src/byte-order.js';
import { childEnv } from '../support/child-env.js';

/** The repository root (dist/test/scaffold → ../../..). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The CLI launcher users run. */
export const CLI = join(REPO_ROOT, 'bin', 'ts-operator-sdk.js');

/** What an asynchronous CLI run printed, and its exit code. */
export interface CliExit {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI as a child process without blocking this one: tests that serve
 * files or a registry on loopback from this process would starve them with a
 * synchronous child.
 */
export function runCliAsync(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliExit> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs ?? 600_000,
        maxBuffer: 16 * 2 ** 20,
      },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** What a CLI run produced. */
export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Options for {@link runCli}. */
export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Run as this uid/gid (root only), with this node binary. */
  uid?: number;
  nodeBinary?: string;
  /** Text piped to stdin (then closed); stdin is closed at once when omitted. */
  input?: string;
  /** A file descriptor to give the CLI as stdout (e.g. /dev/full) instead of a pipe; `stdout` is then ''. */
  stdout?: number;
  /**
   * Kill the CLI after this long. Default 60 s: spawnSync blocks the test's event loop,
   * so a hung CLI could not be stopped by the test's own time limit.
   */
  timeoutMs?: number;
}

/** Runs `ts-operator-sdk <args>` in `cwd` with stdin closed. */
export function runCli(args: string[], cwd: string, options: RunOptions = {}): CliResult {
  const result = spawnSync(options.nodeBinary ?? process.execPath, [CLI, ...args], {
    cwd,
    env: { ...process.env, ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', options.stdout ?? 'pipe', 'pipe'],
    input: options.input,
    encoding: 'utf8',
    uid: options.uid,
    gid: options.uid,
    timeout: options.timeoutMs ?? 60_000,
  });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr };
}

/** Runs the CLI and throws with its stderr unless it exited 0. */
export function runCliOk(args: string[], cwd: string, options: RunOptions = {}): CliResult {
  const result = runCli(args, cwd, options);
  if (result.status !== 0)
    throw new Error(`ts-operator-sdk ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result;
}

/**
 * The directory the files of one `npm test` run share (scripts/with-run-tmpdir.sh
 * sets it, and removes it with the run): the packed repository and installed
 * dependencies made once there serve every later file. Outside such a run
 * (one file run by hand, perhaps after a rebuild) each file makes its own.
 */
const RUN_SHARED_DIR = process.env.TS_OPERATOR_SDK_TEST_SHARED_DIR;

/**
 * Publishes directory `made` as `name` in the run's shared directory and
 * returns the published path: a rename, so another file sees all of it or
 * nothing. When another file published it first (the same content, made from
 * the same inputs), that one is returned and `made` is removed.
 */
function publishShared(made: string, name: string): string {
  const published = join(RUN_SHARED_DIR!, name);
  try {
    renameSync(made, published);
  } catch (error) {
    if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    rmSync(made, { recursive: true, force: true });
  }
  return published;
}

function tarballIn(dir: string): string | undefined {
  const tarball = existsSync(dir) ? readdirSync(dir).find((file) => file.endsWith('.tgz')) : undefined;
  return tarball && join(dir, tarball);
}

/**
 * Packs this repository with `npm pack` and returns the tarball, for
 * projects installed as a user installs from a checkout
 * (TS_OPERATOR_SDK_PACKAGE_SPEC=file:<tarball>). --ignore-scripts: dist/ is
 * already compiled (the tests run from it), and prepack's rebuild would race
 * other builds of the shared tree. Within one `npm test` run the files share
 * one tarball: dist/ does not change during a run, and each pack cost about
 * 4 s of CPU (five files of the pool pack).
 */
export function packRepository(): string {
  const shared = RUN_SHARED_DIR && tarballIn(join(RUN_SHARED_DIR, 'packed-repository'));
  if (shared) return shared;
  const packDir = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-pack-'));
  execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', packDir], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = tarballIn(packDir);
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${packDir}`);
  if (!RUN_SHARED_DIR) return tarball;
  return tarballIn(publishShared(packDir, 'packed-repository'))!;
}

/**
 * What decides a generated project's installed tree: its dependencies, and
 * the bytes of each `file:` package they name (the packed repository).
 */
function dependencyKey(dir: string): string {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const hash = createHash('sha256');
  for (const specs of [manifest.dependencies ?? {}, manifest.devDependencies ?? {}]) {
    for (const [name, spec] of Object.entries(specs).sort(([a], [b]) => byteOrder(a, b))) {
      hash.update(`${name}@${spec}\n`);
      if (spec.startsWith('file:')) hash.update(readFileSync(join(dir, spec.slice('file:'.length))));
    }
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Lets later projects of this run start from project `dir`'s installed
 * node_modules (see {@link installDependencies}): a hard-linked copy, so it
 * costs a directory walk, not the 200 MB.
 */
export function shareInstalledDependencies(dir: string): void {
  if (!RUN_SHARED_DIR) return;
  const name = `node-modules-${dependencyKey(dir)}`;
  if (existsSync(join(RUN_SHARED_DIR, name))) return;
  const copy = mkdtempSync(join(RUN_SHARED_DIR, `${name}.`));
  execFileSync('cp', ['-al', join(dir, 'node_modules'), join(copy, 'node_modules')]);
  publishShared(copy, name);
}

/**
 * Runs `npm install` in generated project `dir`, as init does (which init
 * without --skip-install tests itself). Within one `npm test` run, a project
 * with the same dependencies as one installed before starts from a
 * hard-linked copy of that project's node_modules, and npm finds it up to
 * date: about 1 s of CPU instead of 15 (extracting 10,000 files again),
 * paid by every scaffold and e2e file that installs a project.
 */
export function installDependencies(dir: string): void {
  const seed = RUN_SHARED_DIR && join(RUN_SHARED_DIR, `node-modules-${dependencyKey(dir)}`, 'node_modules');
  const seeded = seed !== undefined && existsSync(seed) && !existsSync(join(dir, 'node_modules'));
  if (seeded) {
    execFileSync('cp', ['-al', seed, join(dir, 'node_modules')]);
    // npm rewrites its record of the tree; a copy of its own keeps the shared one as it was.
    const record = join(dir, 'node_modules', '.package-lock.json');
    if (existsSync(record)) {
      const text = readFileSync(record);
      rmSync(record);
      writeFileSync(record, text);
    }
  }
  // NODE_TEST_CONTEXT would make an install script's `node --test` report to this runner.
  const result = spawnSync('npm', ['install', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    env: childEnv(),
    timeout: 600_000,
  });
  if (result.status !== 0)
    throw new Error(`npm install failed in ${dir} (${result.status}):\n${result.stdout}${result.stderr}`);
  if (!seeded) shareInstalledDependencies(dir);
}

/** Links the packages a generated project imports to this repository's copies, so it type-checks without an install. */
export function linkDependencies(dir: string): void {
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'ts-operator-sdk'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', '@kubernetes'), join(dir, 'node_modules', '@kubernetes'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
}

/** A fresh temporary directory, with a named project directory inside it. */
export function tempProjectDir(name = 'memcached-operator'): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'ts-operator-sdk-cli-')), name);
  mkdirSync(dir);
  return dir;
}

/**
 * A fingerprint of everything under `dir`: every path (files and
 * directories), its type, mode and content. Equal fingerprints mean a
 * byte-identical tree.
 */
export function hashTree(dir: string): string {
  const hash = createHash('sha256');
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(dir, rel)).sort()) {
      const path = rel ? `${rel}/${entry}` : entry;
      const stat = lstatSync(join(dir, path));
      hash.update(`${path}\0${stat.mode}\0`);
      if (stat.isDirectory()) walk(path);
      // A link by its target (a loop cannot be read through); a FIFO or socket by its mode alone (reading one blocks).
      else if (stat.isSymbolicLink()) hash.update(readlinkSync(join(dir, path)));
      else if (stat.isFile()) hash.update(readFileSync(join(dir, path)));
    }
  };
  walk('');
  return hash.digest('hex');
}

/** Copies a scaffolded project so each test case starts from the same state. */
export function copyProject(source: string): string {
  const dir = tempProjectDir();
  cpSync(source, dir, { recursive: true });
  return dir;
}

/** One API as the scenario tests describe it. */
export interface CrdSpec {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/**
 * Stands in for `make manifests` (another module's generator) where only a
 * CRD's existence matters: a structural CRD that accepts any spec, at the
 * path config/crd/kustomization.yaml lists.
 */
export function writeStandInCrd(projectDir: string, crd: CrdSpec): void {
  const dir = join(projectDir, 'config', 'crd', 'bases');
  mkdirSync(dir, { recursive: true });
  const singular = crd.kind.toLowerCase();
  writeFileSync(
    join(dir, `${crd.group}_${crd.plural}.yaml`),
    `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${crd.plural}.${crd.group}
spec:
  group: ${crd.group}
  names:
    kind: ${crd.kind}
    listKind: ${crd.kind}List
    plural: ${crd.plural}
    singular: ${singular}
  scope: ${crd.namespaced ? 'Namespaced' : 'Cluster'}
  versions:
  - name: ${crd.version}
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`,
  );
}

/** The four scenarios of the brief, as CLI steps plus the PROJECT each must end with. */
export interface Scenario {
  name: string;
  steps: string[][];
  crds: CrdSpec[];
  project: string;
}

const HEADER = `# Code generated by tool. DO NOT EDIT.
# This file is used to track the info used to scaffold your project
# and allow the plugins properly work.
# More info: https://book.kubebuilder.io/reference/project-config.html
`;

/** (a) Memcached, (b) cluster-scoped with an irregular plural, (c) multigroup, (d) no group. */
export const SCENARIOS: Scenario[] = [
  {
    name: 'memcached',
    steps: [
      ['init', '--domain', 'example.com'],
      ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'],
    ],
    crds: [{ group: 'cache.example.com', version: 'v1', kind: 'Memcached', plural: 'memcacheds', namespaced: true }],
    project: `${HEADER}domain: example.com
layout:
- typescript.ts-operator-sdk.io/v1
plugins:
  manifests.sdk.operatorframework.io/v2: {}
  scorecard.sdk.operatorframework.io/v2: {}
projectName: memcached-operator
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: example.com
  group: cache
  kind: Memcached
  path: apis/v1
  version: v1
version: "3"
`,
  },
  {
    name: 'cluster-scoped',
    steps: [
      ['init', '--domain', 'example.com', '--project-name', 'garden-operator', '--license', 'none'],
      [
        'create',
        'api',
        '--group',
        'botany',
        '--version',
        'v1alpha1',
        '--kind',
        'Cactus',
        '--plural',
        'cacti',
        '--namespaced=false',
      ],
    ],
    crds: [{ group: 'botany.example.com', version: 'v1alpha1', kind: 'Cactus', plural: 'cacti', namespaced: false }],
    project: `${HEADER}domain: example.com
layout:
- typescript.ts-operator-sdk.io/v1
plugins:
  manifests.sdk.operatorframework.io/v2: {}
  scorecard.sdk.operatorframework.io/v2: {}
projectName: garden-operator
resources:
- api:
    crdVersion: v1
  controller: true
  domain: example.com
  group: botany
  kind: Cactus
  path: apis/v1alpha1
  plural: cacti
  version: v1alpha1
version: "3"
`,
  },
  {
    name: 'multigroup',
    steps: [
      ['init', '--domain', 'example.com'],
      ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'],
      ['edit', '--multigroup'],
      ['create', 'api', '--group', 'ship', '--version', 'v1beta1', '--kind', 'Frigate'],
    ],
    crds: [
      { group: 'cache.example.com', version: 'v1', kind: 'Memcached', plural: 'memcacheds', namespaced: true },
      { group: 'ship.example.com', version: 'v1beta1', kind: 'Frigate', plural: 'frigates', namespaced: true },
    ],
    project: `${HEADER}domain: example.com
layout:
- typescript.ts-operator-sdk.io/v1
multigroup: true
plugins:
  manifests.sdk.operatorframework.io/v2: {}
  scorecard.sdk.operatorframework.io/v2: {}
projectName: memcached-operator
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: example.com
  group: cache
  kind: Memcached
  path: apis/cache/v1
  version: v1
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: example.com
  group: ship
  kind: Frigate
  path: apis/ship/v1beta1
  version: v1beta1
version: "3"
`,
  },
  {
    name: 'no-group',
    steps: [
      ['init', '--domain', 'quay.io', '--project-name', 'pod-route'],
      ['create', 'api', '--version', 'v1alpha1', '--kind', 'Podroute'],
    ],
    crds: [{ group: 'quay.io', version: 'v1alpha1', kind: 'Podroute', plural: 'podroutes', namespaced: true }],
    project: `${HEADER}domain: quay.io
layout:
- typescript.ts-operator-sdk.io/v1
plugins:
  manifests.sdk.operatorframework.io/v2: {}
  scorecard.sdk.operatorframework.io/v2: {}
projectName: pod-route
resources:
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: quay.io
  kind: Podroute
  path: apis/v1alpha1
  version: v1alpha1
version: "3"
`,
  },
];

/** How long a CLI run that installs dependencies (init without --skip-install) may take. */
const INSTALL_TIMEOUT_MS = 600_000;

/** Runs a scenario's steps in a fresh directory; `extraInitArgs` go to init (e.g. --skip-install). */
export function scaffoldScenario(
  scenario: Scenario,
  options: { extraInitArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
): string {
  const dir = tempProjectDir();
  for (const step of scenario.steps) {
    const args = step[0] === 'init' ? [...step, ...(options.extraInitArgs ?? [])] : step;
    // init runs npm install, which took over a minute on a busy CI machine.
    runCliOk(args, dir, { env: options.env, timeoutMs: step[0] === 'init' ? INSTALL_TIMEOUT_MS : undefined });
  }
  return dir;
}

/** A scaffolded project ready for `generate bundle`, and what `make bundle` pipes into it. */
export interface BundleProject {
  /** The Memcached scenario (no install) with its CRDs, base CSV and a bundle generated at `version`. */
  dir: string;
  /** `kubectl kustomize config/manifests` of it. */
  manifests: string;
}

/** The Memcached scenario taken through `make bundle`'s steps, as the bundle tests start from. */
export function bundleProject(generateArgs: readonly string[]): BundleProject {
  const dir = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
  runCliOk(['generate', 'manifests'], dir);
  runCliOk(['generate', 'kustomize', 'manifests', '-q'], dir);
  const manifests = execFileSync('kubectl', ['kustomize', 'config/manifests'], { cwd: dir, encoding: 'utf8' });
  runCliOk([...generateArgs], dir, { input: manifests });
  return { dir, manifests };
}

/**
 * A single-group project (no install) with webhooks on both versions of one
 * kind: cache/v1 Memcached with a defaulting webhook, and cache/v2 Memcached,
 * the hub of a conversion webhook whose spoke is v1.
 */
export function scaffoldWebhookProject(): string {
  const dir = tempProjectDir();
  const memcached = (version: string, ...flags: string[]): string[] => [
    '--group',
    'cache',
    '--version',
    version,
    '--kind',
    'Memcached',
    ...flags,
  ];
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  runCliOk(['create', 'api', ...memcached('v1')], dir);
  runCliOk(['create', 'api', ...memcached('v2', '--controller=false')], dir);
  runCliOk(['create', 'webhook', ...memcached('v1', '--defaulting')], dir);
  runCliOk(['create', 'webhook', ...memcached('v2', '--conversion', '--spoke', 'v1')], dir);
  return dir;
}

/** A `make envtest-start` running in the foreground, as from a terminal. */
export interface MakeEnvtestStart {
  /** The path its `export KUBECONFIG=...` line names (shell quoting removed by a shell). */
  kubeconfig: string;
  /** The line as printed, for a shell to evaluate. */
  exportLine: string;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Ctrl-C: SIGINT to its process group; resolves when make has exited. */
  interrupt(): Promise<void>;
  /** SIGKILL to the group if it still runs (for a test's cleanup); a plain function, for t.after(). */
  kill: () => void;
}

/**
 * Starts `make envtest-start` in its own process group (which gets the
 * SIGINT as a terminal's Ctrl-C would) and resolves once it printed its
 * export line; rejects if it exits first or after `timeoutMs`.
 */
export async function startMakeEnvtest(
  project: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 300_000,
): Promise<MakeEnvtestStart> {
  const child = spawn('make', ['envtest-start'], {
    cwd: project,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  };
  const deadline = Date.now() + timeoutMs;
  let exportLine: string | undefined;
  while (!(exportLine = /^export KUBECONFIG=.+$/m.exec(output)?.[0])) {
    if (child.exitCode !== null || Date.now() >= deadline) {
      kill();
      throw new Error(`no export line from make envtest-start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const kubeconfig = execFileSync('bash', ['-c', `${exportLine}; printf %s "$KUBECONFIG"`], { encoding: 'utf8' });
  return {
    kubeconfig,
    exportLine,
    output: () => output,
    interrupt: async () => {
      process.kill(-child.pid!, 'SIGINT');
      await exited;
    },
    kill,
  };
}
