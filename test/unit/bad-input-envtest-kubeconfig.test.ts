/**
 * `envtest start --kubeconfig <path>` against files it must not take over:
 * YAML that is not a kubeconfig, a kubeconfig another running envtest start
 * owns, files it cannot read or rewrite safely, things that are not regular
 * files. Each is refused before anything starts (the binaries are stand-ins
 * that would fail if they ran) and keeps the contract of ./bad-input.ts: exit
 * 1, one line naming the problem and the fix, a byte-identical directory,
 * modes included. What it does with a kubeconfig it may use is in
 * envtest-kubeconfig-file.test.ts and test/e2e/envtest-start.test.ts.
 *
 * Cost: about 15 s (24 CLI runs; 15 s at load 11 on 2 cores).
 * Run: node --test dist/test/unit/bad-input-envtest-kubeconfig.test.js
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  symlinkSync,
  writeFileSync,
  ftruncateSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { after } from 'node:test';
import { asNobody, badInputSuite, type BadInput } from './bad-input.js';
import { tempProjectDir } from '../scaffold/harness.js';

/** etcd and kube-apiserver that exit 1: every case must be refused before they would run. */
const standInBinaries = mkdtempSync(join(tmpdir(), 'envtest-stand-ins-'));
chmodSync(standInBinaries, 0o755);
for (const binary of ['etcd', 'kube-apiserver'])
  writeFileSync(join(standInBinaries, binary), '#!/bin/sh\nexit 1\n', { mode: 0o755 });

/** A process whose command line says envtest, standing for an envtest start that still runs. */
const runningEnvtest = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)', 'envtest', 'start'], {
  stdio: 'ignore',
});
after(() => runningEnvtest.kill());

const start = (kubeconfig: string): string[] => [
  'envtest',
  'start',
  '--bin-dir',
  standInBinaries,
  '--kubeconfig',
  kubeconfig,
];
const write =
  (name: string, text: string | Buffer, mode = 0o600) =>
  (dir: string): void =>
    writeFileSync(join(dir, name), text, { mode });
const FIX_FILE =
  /\. Fix the file \(kubectl config view shows what kubectl reads\), or pass another path with --kubeconfig\.$/;

function notAKubeconfig(why: string): RegExp {
  return new RegExp(
    `^Error: --kubeconfig user\\.kubeconfig is not a kubeconfig \\(${why}\\)${FIX_FILE.source.slice(0, -1)}$`,
  );
}

const CASES: BadInput[] = [
  {
    name: 'YAML that does not parse',
    prepare: write('user.kubeconfig', 'clusters: [\n'),
    args: start('user.kubeconfig'),
    error: /^Error: --kubeconfig user\.kubeconfig is not valid YAML \(.+\)\. Fix the file/,
  },
  {
    name: 'two YAML documents',
    prepare: write('user.kubeconfig', 'apiVersion: v1\nkind: Config\n---\napiVersion: v1\nkind: Config\n'),
    args: start('user.kubeconfig'),
    error: /^Error: --kubeconfig user\.kubeconfig is not valid YAML \(.*multiple documents.*\)\./,
  },
  {
    name: 'binary data',
    prepare: write(
      'user.kubeconfig',
      Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0xff, 0xfe]),
    ),
    args: start('user.kubeconfig'),
    error: /^Error: --kubeconfig user\.kubeconfig is not (valid YAML \(|a kubeconfig \()/,
  },
  {
    name: 'a top-level list',
    prepare: write('user.kubeconfig', '- a\n- b\n'),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('its top level is not a mapping'),
  },
  {
    name: 'a plain string',
    prepare: write('user.kubeconfig', 'hello\n'),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('its top level is not a mapping'),
  },
  {
    name: 'a Deployment manifest',
    prepare: write('user.kubeconfig', 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n'),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('it has kind: Deployment'),
  },
  {
    name: "another tool's YAML config",
    prepare: write('user.kubeconfig', 'name: my-app\nversion: 1.0.0\n'),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('it has no clusters, users or contexts'),
  },
  {
    name: 'a package.json',
    prepare: write('user.kubeconfig', '{"name": "my-app", "version": "1.0.0"}\n'),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('it has no clusters, users or contexts'),
  },
  {
    name: 'clusters that are not a list',
    prepare: write('user.kubeconfig', 'apiVersion: v1\nkind: Config\nclusters: 5\n'),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('its clusters is not a list'),
  },
  {
    name: 'contexts that are a mapping',
    prepare: write('user.kubeconfig', 'apiVersion: v1\nkind: Config\ncontexts:\n  prod: {cluster: prod}\n'),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('its contexts is not a list'),
  },
  {
    name: 'a cluster without a name',
    prepare: write(
      'user.kubeconfig',
      'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://x:6443\n',
    ),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('its clusters\\[0\\] has no name'),
  },
  {
    name: 'a user that is a string',
    prepare: write('user.kubeconfig', 'apiVersion: v1\nkind: Config\nusers:\n- admin\n'),
    args: start('user.kubeconfig'),
    error: notAKubeconfig('its users\\[0\\] has no name'),
  },
  {
    name: 'the kubeconfig of an envtest start that still runs',
    prepare: (dir) =>
      write(
        'envtest.kubeconfig',
        `# Written by ts-operator-sdk envtest start (pid ${runningEnvtest.pid}); removed when it stops.\napiVersion: v1\nkind: Config\n`,
      )(dir),
    args: start('envtest.kubeconfig'),
    error: new RegExp(
      `^Error: --kubeconfig envtest\\.kubeconfig belongs to an envtest start that is still running \\(pid ${runningEnvtest.pid}\\)\\. Stop that one \\(kill -INT ${runningEnvtest.pid}\\), or pass another path with --kubeconfig`,
    ),
  },
  {
    name: 'a directory',
    prepare: (dir) => mkdirSync(join(dir, 'kube')),
    args: start('kube'),
    error: /^Error: --kubeconfig kube is a directory\. Pass a file path/,
  },
  {
    name: 'a path under a file',
    args: start('PROJECT/envtest.kubeconfig'),
    error:
      /^Error: cannot write the kubeconfig PROJECT\/envtest\.kubeconfig: PROJECT is not a directory\. Pass a writable path with --kubeconfig\.$/,
  },
  {
    name: 'a symlink to a file that does not exist',
    prepare: (dir) => symlinkSync('missing.yaml', join(dir, 'user.kubeconfig')),
    args: start('user.kubeconfig'),
    error:
      /^Error: --kubeconfig user\.kubeconfig is a symlink to missing\.yaml, which does not exist\. Pass another path/,
  },
  {
    name: 'a loop of symlinks',
    prepare: (dir) => {
      symlinkSync('b.kubeconfig', join(dir, 'user.kubeconfig'));
      symlinkSync('user.kubeconfig', join(dir, 'b.kubeconfig'));
    },
    args: start('user.kubeconfig'),
    error: /^Error: --kubeconfig user\.kubeconfig is a symlink to b\.kubeconfig, a loop of symlinks\./,
  },
  {
    name: 'a symlink to /dev/null',
    prepare: (dir) => symlinkSync('/dev/null', join(dir, 'user.kubeconfig')),
    args: start('user.kubeconfig'),
    error: /^Error: --kubeconfig user\.kubeconfig is not a regular file\./,
  },
  {
    name: 'a FIFO',
    prepare: (dir) => execFileSync('mkfifo', [join(dir, 'user.kubeconfig')]),
    args: start('user.kubeconfig'),
    error: /^Error: --kubeconfig user\.kubeconfig is not a regular file\./,
  },
  {
    name: 'a file far too big for a kubeconfig',
    prepare: (dir) => {
      const fd = openSync(join(dir, 'user.kubeconfig'), 'w', 0o600);
      ftruncateSync(fd, 17 * 1024 * 1024);
      closeSync(fd);
    },
    args: start('user.kubeconfig'),
    error: /^Error: --kubeconfig user\.kubeconfig is 17825792 bytes, too big for a kubeconfig\./,
  },
  {
    name: 'a kubeconfig this user cannot read',
    args: start('user.kubeconfig'),
    run: asNobody((dir) => write('user.kubeconfig', 'apiVersion: v1\nkind: Config\n', 0o600)(dir)),
    error: /^Error: cannot read --kubeconfig user\.kubeconfig \(EACCES\)\. Make it readable, or pass another path/,
  },
  {
    name: 'a read-only kubeconfig',
    args: start('user.kubeconfig'),
    run: asNobody((dir) => write('user.kubeconfig', 'apiVersion: v1\nkind: Config\n', 0o444)(dir)),
    error:
      /^Error: cannot add envtest's context to --kubeconfig user\.kubeconfig: it is not writable\. Make it writable, or pass another path/,
  },
  {
    name: 'a kubeconfig in a directory this user cannot write (no temp file beside it for an atomic rewrite)',
    args: start('kube/config'),
    run: asNobody((dir) => {
      mkdirSync(join(dir, 'kube'), { mode: 0o755 });
      write('kube/config', 'apiVersion: v1\nkind: Config\n', 0o666)(dir);
      chmodSync(join(dir, 'kube', 'config'), 0o666);
    }),
    error:
      /^Error: cannot add envtest's context to --kubeconfig kube\/config: its directory is not writable\. Make it writable, or pass another path/,
  },
  {
    name: 'a new kubeconfig in a directory this user cannot write',
    args: start('bin/envtest.kubeconfig'),
    run: asNobody(() => undefined),
    error:
      /^Error: cannot write the kubeconfig bin\/envtest\.kubeconfig: permission denied\. Pass a writable path with --kubeconfig\.$/,
  },
  {
    name: 'the default kubeconfig when bin/ links out of the project',
    prepare: (dir) => {
      const outside = mkdtempSync(join(tmpdir(), 'envtest-bin-outside-'));
      symlinkSync(outside, join(dir, 'bin'));
    },
    args: ['envtest', 'start', '--bin-dir', standInBinaries],
    error:
      /^Error: refusing to write bin\/envtest\.kubeconfig: bin is a symbolic link to .*envtest-bin-outside-.*, outside the project\./,
  },
];

badInputSuite(
  'bad input (envtest start --kubeconfig): refused before anything starts, the file untouched',
  CASES,
  () => {
    const dir = tempProjectDir();
    writeFileSync(join(dir, 'PROJECT'), 'version: "3"\n');
    return dir;
  },
);
