/**
 * What `envtest start` does to the file --kubeconfig names, without a control
 * plane (test/e2e/envtest-start.test.ts runs it on a real one): a file it
 * creates is deleted at the stop; into the user's kubeconfig it merges one
 * cluster, user and context and puts the file back byte for byte; a file
 * changed meanwhile loses only our entries; symlinks are edited at their
 * target; a leftover of an earlier run is recognised as ours; kubectl's lock
 * file is respected; two runs sharing one kubeconfig leave only the user's entries.
 *
 * Cost: about 3 s (the lock case waits its 2 s). Run: node --test dist/test/unit/envtest-kubeconfig-file.test.js
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import type { CommandIO } from '../../src/cli/io.js';
import {
  ENTRY_PREFIX,
  planKubeconfig,
  restoreKubeconfig,
  writeKubeconfig,
  type EnvtestAccess,
} from '../../src/commands/envtest/kubeconfig-file.js';

const ACCESS: EnvtestAccess = {
  server: 'https://127.0.0.1:40123',
  caData: 'Q0E=',
  certData: 'Q0VSVA==',
  keyData: 'S0VZ',
};
const NAME = `${ENTRY_PREFIX}40123`;

/** A user's kubeconfig as kubectl writes it, with a comment and two contexts. */
const USER_KUBECONFIG = `# my clusters
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: AAAA
    server: https://prod.example.com:6443
  name: prod
contexts:
- context:
    cluster: prod
    user: admin
  name: prod
current-context: prod
kind: Config
preferences: {}
users:
- name: admin
  user:
    token: secret
`;

function quietIO(): CommandIO & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    out: (line) => lines.push(line),
    progress: (line) => lines.push(line),
    debug: () => undefined,
    confirm: async () => false,
  };
}

function dirWith(files: Record<string, string>, mode = 0o640): string {
  const dir = mkdtempSync(join(tmpdir(), 'envtest-kubeconfig-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode });
  return dir;
}

/** A kubeconfig as these tests read it back. */
interface KubeconfigFile {
  clusters?: { name: string; cluster: { server: string } }[];
  users?: { name: string }[];
  contexts?: { name: string }[];
  'current-context'?: string;
}

const names = (config: KubeconfigFile, list: 'clusters' | 'users' | 'contexts'): string[] =>
  (config[list] ?? []).map((entry) => entry.name);

describe('envtest start and the kubeconfig it is given', () => {
  test("merges one cluster, user and context into the user's kubeconfig, and puts the file back byte for byte with its mode", () => {
    const dir = dirWith({ config: USER_KUBECONFIG });
    const path = join(dir, 'config');
    const plan = planKubeconfig(dir, path);
    assert.equal(plan.action, 'merge');
    const io = quietIO();
    const written = writeKubeconfig(dir, plan.path, ACCESS, io);
    const merged = parse(readFileSync(path, 'utf8')) as KubeconfigFile;
    assert.deepEqual(names(merged, 'clusters'), ['prod', NAME]);
    assert.deepEqual(names(merged, 'users'), ['admin', NAME]);
    assert.deepEqual(names(merged, 'contexts'), ['prod', NAME]);
    assert.equal(merged['current-context'], NAME);
    assert.equal(merged.clusters?.[1]?.cluster.server, ACCESS.server);
    assert.match(readFileSync(path, 'utf8'), /^# my clusters\n/, "the user's comment is kept");
    assert.match(readFileSync(path, 'utf8'), /^clusters:\n- cluster:/m, "kubectl's list style is kept");
    assert.equal(statSync(path).mode & 0o777, 0o640);
    assert.match(io.lines.join('\n'), new RegExp(`added the context ${NAME} to config and made it current`));
    restoreKubeconfig(written, io, dir);
    assert.equal(readFileSync(path, 'utf8'), USER_KUBECONFIG);
    assert.equal(statSync(path).mode & 0o777, 0o640);
    assert.deepEqual(readdirSync(dir), ['config'], 'no temp file is left');
  });

  test('a kubeconfig changed while envtest ran loses only our entries, and gets its current context back', () => {
    const dir = dirWith({ config: USER_KUBECONFIG });
    const path = join(dir, 'config');
    const written = writeKubeconfig(dir, path, ACCESS, quietIO());
    // Another tool adds its context meanwhile.
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace(
        /^contexts:\n/m,
        'contexts:\n- context:\n    cluster: prod\n    user: admin\n  name: other\n',
      ),
    );
    const io = quietIO();
    restoreKubeconfig(written, io, dir);
    const after = parse(readFileSync(path, 'utf8')) as KubeconfigFile;
    assert.deepEqual(names(after, 'contexts'), ['other', 'prod']);
    assert.deepEqual(names(after, 'clusters'), ['prod']);
    assert.deepEqual(names(after, 'users'), ['admin']);
    assert.equal(after['current-context'], 'prod');
    assert.match(io.lines.join('\n'), new RegExp(`was changed while envtest ran; removed only the context ${NAME}`));
  });

  test('a change made while the control plane started is kept: the merge reads the file again', () => {
    const dir = dirWith({ config: USER_KUBECONFIG });
    const path = join(dir, 'config');
    planKubeconfig(dir, path);
    const changed = USER_KUBECONFIG.replace('current-context: prod', 'current-context: prod\n# switched meanwhile');
    writeFileSync(path, changed);
    const written = writeKubeconfig(dir, path, ACCESS, quietIO());
    assert.match(readFileSync(path, 'utf8'), /# switched meanwhile/);
    restoreKubeconfig(written, quietIO(), dir);
    assert.equal(readFileSync(path, 'utf8'), changed);
  });

  test("kubectl's lock on the kubeconfig is respected: held, the write waits, then refuses without touching the file", () => {
    const dir = dirWith({ config: USER_KUBECONFIG });
    writeFileSync(join(dir, 'config.lock'), '');
    assert.throws(
      () => writeKubeconfig(dir, join(dir, 'config'), ACCESS, quietIO()),
      /config\.lock exists: kubectl \(or another tool\) is editing the kubeconfig/,
    );
    assert.equal(readFileSync(join(dir, 'config'), 'utf8'), USER_KUBECONFIG);
    assert.deepEqual(readdirSync(dir).sort(), ['config', 'config.lock']);
  });

  test('two runs on one kubeconfig: stopped in reverse order it is byte-identical; in start order only their entries go', () => {
    const dir = dirWith({ config: USER_KUBECONFIG });
    const path = join(dir, 'config');
    const second = { ...ACCESS, server: 'https://127.0.0.1:40124' };
    let a = writeKubeconfig(dir, path, ACCESS, quietIO());
    let b = writeKubeconfig(dir, path, second, quietIO());
    restoreKubeconfig(b, quietIO(), dir);
    restoreKubeconfig(a, quietIO(), dir);
    assert.equal(readFileSync(path, 'utf8'), USER_KUBECONFIG);
    a = writeKubeconfig(dir, path, ACCESS, quietIO());
    b = writeKubeconfig(dir, path, second, quietIO());
    restoreKubeconfig(a, quietIO(), dir);
    restoreKubeconfig(b, quietIO(), dir);
    const after = parse(readFileSync(path, 'utf8')) as KubeconfigFile;
    for (const list of ['clusters', 'users', 'contexts'] as const)
      assert.deepEqual(names(after, list), names(parse(USER_KUBECONFIG) as KubeconfigFile, list));
    assert.equal(readdirSync(dir).length, 1);
  });

  test('a symlinked kubeconfig is edited at its target; the link stays a link', () => {
    const dir = dirWith({ real: USER_KUBECONFIG });
    symlinkSync('real', join(dir, 'link'));
    const plan = planKubeconfig(dir, join(dir, 'link'));
    assert.equal(plan.target, join(dir, 'real'));
    const written = writeKubeconfig(dir, plan.path, ACCESS, quietIO());
    assert.ok(lstatSync(join(dir, 'link')).isSymbolicLink());
    assert.match(readFileSync(join(dir, 'real'), 'utf8'), new RegExp(NAME));
    restoreKubeconfig(written, quietIO(), dir);
    assert.equal(readFileSync(join(dir, 'real'), 'utf8'), USER_KUBECONFIG);
    assert.ok(lstatSync(join(dir, 'link')).isSymbolicLink());
  });

  test('a JSON kubeconfig and an empty file are merged into and put back too', () => {
    const json = `${JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'a', cluster: { server: 'https://a:1' } }], contexts: [], users: [], 'current-context': '' }, null, 2)}\n`;
    const dir = dirWith({ 'config.json': json, empty: '' });
    for (const file of ['config.json', 'empty']) {
      const path = join(dir, file);
      const before = readFileSync(path, 'utf8');
      const plan = planKubeconfig(dir, path);
      assert.equal(plan.action, 'merge');
      const written = writeKubeconfig(dir, plan.path, ACCESS, quietIO());
      assert.equal((parse(readFileSync(path, 'utf8')) as Record<string, unknown>)['current-context'], NAME);
      restoreKubeconfig(written, quietIO(), dir);
      assert.equal(readFileSync(path, 'utf8'), before);
    }
  });

  test('a new file is created with the marker, mode 0600, and deleted at the stop with the directories it needed', () => {
    const dir = dirWith({});
    const path = join(dir, 'bin', 'sub', 'envtest.kubeconfig');
    const plan = planKubeconfig(dir, path);
    assert.equal(plan.action, 'create');
    const written = writeKubeconfig(dir, plan.path, ACCESS, quietIO());
    assert.match(
      readFileSync(path, 'utf8'),
      new RegExp(`^# Written by ts-operator-sdk envtest start \\(pid ${process.pid}\\); removed when it stops\\.\\n`),
    );
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(written.createdDir, join(dir, 'bin'));
    restoreKubeconfig(written, quietIO(), dir);
    assert.equal(existsSync(path), false);
  });

  test('a leftover of an earlier run (its pid gone, or the format before the marker) is ours to replace and delete', () => {
    const dir = dirWith({});
    mkdirSync(join(dir, 'bin'));
    const leftovers = {
      marked:
        '# Written by ts-operator-sdk envtest start (pid 999999999); removed when it stops.\napiVersion: v1\nkind: Config\n',
      earlier: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'envtest', cluster: { server: 'https://127.0.0.1:39999' } }],
        users: [{ name: 'default', user: {} }],
        contexts: [{ name: 'envtest', context: { cluster: 'envtest', user: 'default' } }],
        'current-context': 'envtest',
        preferences: {},
      }),
    };
    for (const [name, text] of Object.entries(leftovers)) {
      const path = join(dir, 'bin', name);
      writeFileSync(path, text, { mode: 0o600 });
      const plan = planKubeconfig(dir, path);
      assert.equal(plan.action, 'replace', name);
      const written = writeKubeconfig(dir, plan.path, ACCESS, quietIO());
      assert.match(readFileSync(path, 'utf8'), new RegExp(`pid ${process.pid}`));
      restoreKubeconfig(written, quietIO(), dir);
      assert.equal(existsSync(path), false, name);
    }
  });
});
