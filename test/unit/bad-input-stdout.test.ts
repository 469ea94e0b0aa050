/**
 * A stdout that cannot be written: every command that prints, with stdout on
 * /dev/full (ENOSPC) or on a descriptor open only for reading (EBADF), exits
 * 1 with one line on stderr and no stack trace; a command that writes files
 * prints before it writes them, so the project stays byte-identical (the line
 * says so). A pipe whose reader is gone (EPIPE) ends the run as a Go CLI
 * killed by SIGPIPE does: exit 141, nothing on stderr, nothing written. The
 * table keeps the shared contract of ./bad-input.ts.
 *
 * Cost: 4 CLI runs of setup, then one per case; about 20 s.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { badInputSuite, type BadInput } from './bad-input.js';
import {
  CLI,
  copyProject,
  hashTree,
  REPO_ROOT,
  runCli,
  runCliOk,
  SCENARIOS,
  scaffoldScenario,
  tempProjectDir,
} from '../scaffold/harness.js';

/** init + create api cache/v1 Memcached, single group. */
let baseProject: string;

before(() => {
  baseProject = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
});

/** The full device: every write fails with ENOSPC. */
const DEV_FULL = openSync('/dev/full', 'w');
/** A descriptor open only for reading: every write fails with EBADF. */
const READ_ONLY = openSync('/dev/null', 'r');

const BUNDLE = join(REPO_ROOT, 'test', 'fixtures', 'bundles', 'memcached');
const ROUTE_CRD = join(REPO_ROOT, 'test', 'fixtures', 'external', 'route.crd.yaml');
const api = (kind: string, ...extra: string[]): string[] => [
  'create',
  'api',
  '--group',
  'cache',
  '--version',
  'v1',
  '--kind',
  kind,
  ...extra,
];
const webhook = (...extra: string[]): string[] => [
  'create',
  'webhook',
  '--group',
  'cache',
  '--version',
  'v1',
  '--kind',
  'Memcached',
  '--defaulting',
  ...extra,
];

/** The line for a command that prints only (or lists what a dry run would do). */
const FULL =
  /^Error: cannot write to standard output \(ENOSPC: no space left on its device\)\. Redirect stdout to a file or pipe that can be written, and run the command again\.$/;
/** The line for a command that writes files: it stopped before the first one. */
const FULL_NOTHING_WRITTEN =
  /^Error: cannot write to standard output \(ENOSPC: no space left on its device\); no file was changed\. Redirect stdout/;
const READ_ONLY_NOTHING_WRITTEN =
  /^Error: cannot write to standard output \(EBADF: it is not open for writing\); no file was changed\. Redirect stdout/;

const toFull = (): { stdout: number } => ({ stdout: DEV_FULL });
const toReadOnly = (): { stdout: number } => ({ stdout: READ_ONLY });
const emptyDir = (): string => tempProjectDir();
/** The base project after `edit --multigroup`. */
const multigroup = (): string => {
  const dir = copyProject(baseProject);
  runCliOk(['edit', '--multigroup'], dir);
  return dir;
};

const CASES: BadInput[] = [
  // Commands that only print.
  { name: 'version > /dev/full', args: ['version'], run: toFull, error: FULL },
  { name: '--help > /dev/full', args: ['--help'], run: toFull, error: FULL },
  { name: 'no arguments (help) > /dev/full', args: [], run: toFull, error: FULL },
  { name: 'create api --help > /dev/full', args: ['create', 'api', '--help'], run: toFull, error: FULL },
  { name: 'completion bash > /dev/full', args: ['completion', 'bash'], run: toFull, error: FULL },
  { name: 'completion zsh > /dev/full', args: ['completion', 'zsh'], run: toFull, error: FULL },
  { name: 'bundle validate > /dev/full', args: ['bundle', 'validate', BUNDLE], run: toFull, error: FULL },
  {
    name: 'bundle validate -o json-alpha1 > /dev/full',
    args: ['bundle', 'validate', BUNDLE, '-o', 'json-alpha1'],
    run: toFull,
    error: FULL,
  },
  {
    name: 'bundle validate --list-optional > /dev/full',
    args: ['bundle', 'validate', '--list-optional'],
    run: toFull,
    error: FULL,
  },

  // Commands that write files: nothing is written.
  {
    name: 'init > /dev/full',
    dir: emptyDir,
    args: ['init', '--domain', 'example.com', '--skip-install'],
    run: toFull,
    error: FULL_NOTHING_WRITTEN,
  },
  {
    name: 'init --dry-run > /dev/full',
    dir: emptyDir,
    args: ['init', '--domain', 'example.com', '--skip-install', '--dry-run'],
    run: toFull,
    error: FULL,
  },
  { name: 'create api > /dev/full', args: api('Other'), run: toFull, error: FULL_NOTHING_WRITTEN },
  {
    name: 'create api, a second version (two lines of advice) > /dev/full',
    args: ['create', 'api', '--group', 'cache', '--version', 'v2', '--kind', 'Memcached', '--controller=false'],
    run: toFull,
    error: FULL_NOTHING_WRITTEN,
  },
  { name: 'create api --dry-run > /dev/full', args: api('Other', '--dry-run'), run: toFull, error: FULL },
  {
    name: 'create api --external-api-path > /dev/full',
    args: [
      'create',
      'api',
      '--group',
      'route',
      '--version',
      'v1',
      '--kind',
      'Route',
      '--external-api-domain',
      'openshift.io',
      '--external-api-path',
      'apis/external/route/v1',
      '--from-crd',
      ROUTE_CRD,
    ],
    run: toFull,
    error: FULL_NOTHING_WRITTEN,
  },
  { name: 'create webhook > /dev/full', args: webhook(), run: toFull, error: FULL_NOTHING_WRITTEN },
  { name: 'create webhook --dry-run > /dev/full', args: webhook('--dry-run'), run: toFull, error: FULL },
  { name: 'edit --multigroup > /dev/full', args: ['edit', '--multigroup'], run: toFull, error: FULL_NOTHING_WRITTEN },
  {
    name: 'edit --multigroup=false > /dev/full',
    dir: multigroup,
    args: ['edit', '--multigroup=false'],
    run: toFull,
    error: FULL_NOTHING_WRITTEN,
  },
  {
    name: 'edit --multigroup, already multigroup (nothing to change) > /dev/full',
    dir: multigroup,
    args: ['edit', '--multigroup'],
    run: toFull,
    error: FULL_NOTHING_WRITTEN,
  },
  { name: 'generate manifests > /dev/full', args: ['generate', 'manifests'], run: toFull, error: FULL_NOTHING_WRITTEN },
  {
    name: 'generate manifests --dry-run > /dev/full',
    args: ['generate', 'manifests', '--dry-run'],
    run: toFull,
    error: FULL,
  },

  // A descriptor that is not open for writing.
  {
    name: 'version 1</dev/null',
    args: ['version'],
    run: toReadOnly,
    error: /^Error: cannot write to standard output \(EBADF: it is not open for writing\)\. Redirect stdout/,
  },
  { name: 'create api 1</dev/null', args: api('Other'), run: toReadOnly, error: READ_ONLY_NOTHING_WRITTEN },
  { name: 'create webhook 1</dev/null', args: webhook(), run: toReadOnly, error: READ_ONLY_NOTHING_WRITTEN },
  {
    name: 'edit --multigroup 1</dev/null',
    args: ['edit', '--multigroup'],
    run: toReadOnly,
    error: READ_ONLY_NOTHING_WRITTEN,
  },
  {
    name: 'generate manifests 1</dev/null',
    args: ['generate', 'manifests'],
    run: toReadOnly,
    error: READ_ONLY_NOTHING_WRITTEN,
  },
];

badInputSuite('stdout cannot be written: one line of error, exit 1, directory byte-identical', CASES, () =>
  copyProject(baseProject),
);

/** Runs the CLI with stdout on a pipe whose reading end is closed before the CLI starts. */
function runWithClosedStdout(args: string[], cwd: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed now, long before the child has loaded: its first write finds no reader.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stderr }));
  });
}

describe('a closed stdout pipe (EPIPE): exit 141 as a Go CLI killed by SIGPIPE, silent, nothing written', () => {
  const cases: { name: string; args: string[]; dir?: () => string }[] = [
    { name: 'version', args: ['version'] },
    { name: '--help', args: ['--help'] },
    { name: 'create api', args: api('Other') },
    { name: 'create webhook', args: webhook() },
    { name: 'edit --multigroup', args: ['edit', '--multigroup'] },
    { name: 'init', args: ['init', '--domain', 'example.com', '--skip-install'], dir: emptyDir },
  ];
  for (const item of cases) {
    test(item.name, async () => {
      const dir = item.dir?.() ?? copyProject(baseProject);
      const before = hashTree(dir);
      const result = await runWithClosedStdout(item.args, dir);
      assert.equal(result.status, 141, result.stderr);
      assert.equal(result.stderr, '');
      assert.equal(hashTree(dir), before, 'the directory changed');
    });
  }
});

test('setup-envtest > /dev/full: the cached directory it found, then one error line', () => {
  const binDir = tempProjectDir('bin');
  const versionDir = join(binDir, 'k8s', `1.36.3-linux-${process.arch === 'arm64' ? 'arm64' : 'amd64'}`);
  mkdirSync(versionDir, { recursive: true });
  for (const binary of ['etcd', 'kube-apiserver', 'kubectl'])
    writeFileSync(join(versionDir, binary), '#!/bin/sh\n', { mode: 0o755 });
  // The index is never read (the version is cached); a closed loopback port makes sure of it.
  const result = runCli(
    ['setup-envtest', '1.36.3', '--bin-dir', binDir, '--index-url', 'http://127.0.0.1:9/envtest-releases.yaml'],
    binDir,
    { stdout: DEV_FULL },
  );
  assert.equal(result.status, 1, result.stderr);
  const lines = result.stderr.trimEnd().split('\n');
  assert.match(lines.at(-1)!, FULL);
  assert.ok(
    lines.slice(0, -1).every((line) => line.startsWith('using cached envtest')),
    result.stderr,
  );
});
