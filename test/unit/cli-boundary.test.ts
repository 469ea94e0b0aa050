/**
 * The CLI's file boundary, below the commands: the one path guard that every
 * write passes (src/scaffold/boundary.ts, called by the journal), the check
 * that nothing a command read changed before it commits, non-UTF-8 files,
 * symbolic links, and recovery that never overwrites a newer edit.
 * The commands' own cases are in bad-input-boundary.test.ts.
 * Cost: about 5 s (two CLI runs killed mid-write; the rest is in-process).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../../src/errors.js';
import {
  commitChanges,
  JOURNAL_FILE,
  recoverInterruptedWrite,
  TEST_WRITE_DELAY_ENV,
} from '../../src/scaffold/journal.js';
import { VirtualTree } from '../../src/scaffold/tree.js';
import { CLI, copyProject, hashTree, runCli, runCliOk, tempProjectDir } from '../scaffold/harness.js';

/** A project directory inside a parent of its own, so writes that escape land in the parent, where the test looks. */
function sandbox(): { parent: string; root: string } {
  const parent = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-boundary-'));
  const root = join(parent, 'project');
  mkdirSync(root);
  writeFileSync(join(root, 'PROJECT'), 'domain: example.com\n');
  mkdirSync(join(parent, 'outside'));
  writeFileSync(join(parent, 'outside', 'precious.txt'), 'keep me');
  return { parent, root };
}

const refused =
  (pattern: RegExp) =>
  (error: unknown): boolean =>
    error instanceof UsageError && !error.message.includes('\n') && pattern.test(error.message);

test('the path guard stops a scratch writer that goes around the tree, whatever path it escapes by', async () => {
  const { parent, root } = sandbox();
  symlinkSync(join(parent, 'outside'), join(root, 'link-out'));
  const before = hashTree(parent);
  // Straight to the journal, the one way to the disk: the guard there, not the tree, must stop each.
  for (const path of [
    '../escape.txt',
    'a/../../escape.txt',
    'config/../../../escape.txt',
    `${parent}/escape.txt`,
    'link-out/escape.txt',
    'link-out/precious.txt',
    './/x',
    'a//b',
  ]) {
    await assert.rejects(
      commitChanges(root, [{ action: 'CREATE', path, content: 'escaped' }]),
      refused(/^refusing to write /),
      path,
    );
  }
  await assert.rejects(
    commitChanges(root, [{ action: 'DELETE', path: 'link-out/precious.txt' }]),
    refused(
      /^refusing to delete link-out\/precious\.txt: link-out is a symbolic link to .*outside, outside the project/,
    ),
  );
  assert.equal(hashTree(parent), before, 'nothing was written or deleted anywhere');
});

test('the tree refuses an escaping path where a command makes it, before any other work', () => {
  const { root } = sandbox();
  const tree = new VirtualTree(root);
  assert.throws(
    () => tree.write('bundle/manifests/../../../x.yaml', 'x'),
    refused(/^refusing to write "bundle\/manifests\/\.\.\/\.\.\/\.\.\/x\.yaml": it is not a path inside the project/),
  );
  assert.throws(
    () => tree.delete('../outside/precious.txt'),
    refused(/^refusing to write "\.\.\/outside\/precious\.txt"/),
  );
});

test('an output directory the user named may be written, and nothing next to it', async () => {
  const { parent, root } = sandbox();
  const tree = new VirtualTree(root, { outputs: [join(parent, 'out')] });
  tree.write('../out/manifests/a.yaml', 'a');
  assert.throws(
    () => tree.write('../outside/precious.txt', 'overwritten'),
    refused(
      /^refusing to write \.\.\/outside\/precious\.txt: it lies outside the project and the output directory you named/,
    ),
  );
  await tree.commit();
  assert.equal(readFileSync(join(parent, 'out', 'manifests', 'a.yaml'), 'utf8'), 'a');
  assert.equal(readFileSync(join(parent, 'outside', 'precious.txt'), 'utf8'), 'keep me');
});

test('a symlinked project file is written at its target, and stays a link', async () => {
  const { root } = sandbox();
  mkdirSync(join(root, 'shared'));
  writeFileSync(join(root, 'shared', 'main.ts'), 'old');
  symlinkSync('shared/main.ts', join(root, 'main.ts'));
  const tree = new VirtualTree(root);
  assert.equal(tree.read('main.ts'), 'old');
  tree.write('main.ts', 'new');
  await tree.commit();
  assert.equal(readlinkSync(join(root, 'main.ts')), 'shared/main.ts');
  assert.equal(readFileSync(join(root, 'shared', 'main.ts'), 'utf8'), 'new');
});

test('a link to a file outside the project, or to nothing, is refused; deleting a link removes the link only', async () => {
  const { parent, root } = sandbox();
  symlinkSync(join(parent, 'outside', 'precious.txt'), join(root, 'main.ts'));
  symlinkSync('missing.ts', join(root, 'dangling.ts'));
  const before = hashTree(parent);
  const tree = new VirtualTree(root);
  assert.throws(
    () => tree.write('main.ts', 'x'),
    refused(/^refusing to write main\.ts: main\.ts is a symbolic link to .*precious\.txt, outside the project/),
  );
  assert.throws(
    () => tree.write('dangling.ts', 'x'),
    refused(/^refusing to write dangling\.ts: it is a symbolic link to missing\.ts, which does not exist/),
  );
  assert.equal(hashTree(parent), before);
  tree.delete('main.ts');
  await tree.commit();
  assert.equal(existsSync(join(root, 'main.ts')), false);
  assert.equal(readFileSync(join(parent, 'outside', 'precious.txt'), 'utf8'), 'keep me');
});

test('listing does not enter a symlinked directory (a loop, or a way out of the project)', () => {
  const { root } = sandbox();
  mkdirSync(join(root, 'config'));
  writeFileSync(join(root, 'config', 'a.yaml'), 'a');
  symlinkSync('..', join(root, 'config', 'loop'));
  assert.deepEqual(new VirtualTree(root).list('config'), ['config/a.yaml']);
});

test('a file that is not UTF-8 is refused, naming it and the line; a BOM and binary bytes are kept', async () => {
  const { root } = sandbox();
  writeFileSync(
    join(root, 'main.ts'),
    Buffer.concat([Buffer.from('// line 1\n// Copyright '), Buffer.from([0xa9]), Buffer.from(' 2026 Acme\n')]),
  );
  writeFileSync(join(root, 'bom.ts'), '\uFEFFexport {};\n');
  const logo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0xc3]);
  mkdirSync(join(root, 'apis'));
  writeFileSync(join(root, 'apis', 'logo.png'), logo);
  const tree = new VirtualTree(root);
  assert.throws(
    () => tree.read('main.ts'),
    refused(
      /^main\.ts is not UTF-8 text \(byte 0xa9 on line 2 is not valid UTF-8\).*iconv -f latin1 -t utf-8 main\.ts/,
    ),
  );
  tree.write('bom.ts', `${tree.read('bom.ts')}// more\n`);
  tree.move('apis/logo.png', 'apis/v1/logo.png');
  await tree.commit();
  assert.equal(readFileSync(join(root, 'bom.ts'), 'utf8'), '\uFEFFexport {};\n// more\n');
  assert.deepEqual(readFileSync(join(root, 'apis', 'v1', 'logo.png')), logo);
});

test('a commit is refused, writing nothing, when anything the command read changed before it commits', async () => {
  const cases: Array<[string, (root: string) => void, RegExp]> = [
    [
      'a file it read',
      (root) => writeFileSync(join(root, 'PROJECT'), 'domain: example.com\nresources: [other]\n'),
      /^PROJECT changed while this command ran/,
    ],
    [
      'a file it found missing',
      (root) => writeFileSync(join(root, 'new.ts'), 'written by another command'),
      /^new\.ts changed while this command ran/,
    ],
    [
      'a directory it listed',
      (root) => writeFileSync(join(root, 'config', 'added.yaml'), 'x'),
      /^config changed while this command ran/,
    ],
  ];
  for (const [what, change, expected] of cases) {
    const { root } = sandbox();
    mkdirSync(join(root, 'config'));
    const tree = new VirtualTree(root);
    const project = tree.read('PROJECT')!;
    assert.equal(tree.exists('new.ts'), false);
    tree.list('config');
    change(root);
    const before = hashTree(root);
    tree.write('PROJECT', `${project}resources: [mine]\n`);
    tree.write('new.ts', 'mine');
    await assert.rejects(tree.commit(), refused(expected), what);
    assert.equal(hashTree(root), before, `nothing was written (${what})`);
  }
});

/** Starts `args` with every write step slowed, and kills it with SIGKILL once its journal says `state`. */
async function killDuring(dir: string, args: string[], state: 'applying'): Promise<void> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: dir,
    env: { ...process.env, [TEST_WRITE_DELAY_ENV]: '400' },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 30_000;
  for (;;) {
    assert.ok(Date.now() < deadline, `the command never reached ${state}`);
    try {
      if ((JSON.parse(readFileSync(join(dir, JOURNAL_FILE), 'utf8')) as { state: string }).state === state) break;
    } catch {
      // not written yet, or being replaced
    }
    await sleep(20);
  }
  child.kill('SIGKILL');
  await exited;
}

let baseProject: string | undefined;
function project(): string {
  if (!baseProject) {
    baseProject = tempProjectDir();
    runCliOk(['init', '--domain', 'example.com', '--skip-install'], baseProject);
  }
  return copyProject(baseProject);
}

test('recovery after kill -9 never overwrites a file edited since; it names the file and keeps the journal', async () => {
  const dir = project();
  await killDuring(dir, ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], 'applying');
  // The user goes on working before the next command: their edits must survive recovery.
  const pending = (
    JSON.parse(readFileSync(join(dir, JOURNAL_FILE), 'utf8')) as { id: string; changes: { path: string }[] }
  ).changes.map((c) => c.path);
  const journalId = (JSON.parse(readFileSync(join(dir, JOURNAL_FILE), 'utf8')) as { id: string }).id;
  const notApplied = pending.filter(
    (path) => existsSync(join(dir, `${path}.ts-operator-sdk-${journalId}.tmp`)) && existsSync(join(dir, path)),
  );
  assert.ok(notApplied.length > 0, `some update was still pending when killed: ${pending.join(', ')}`);
  const edited = notApplied[notApplied.length - 1]!;
  writeFileSync(join(dir, edited), `${readFileSync(join(dir, edited), 'utf8')}// the user's newer edit\n`);
  const before = hashTree(dir);
  const result = runCli(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Other'], dir);
  assert.equal(result.status, 1);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(
    lines[0]!,
    new RegExp(
      `^Error: the interrupted write of \`ts-operator-sdk create api .*\` was not finished: ${edited.replace(/[.]/g, '\\.')} changed after the command was interrupted`,
    ),
  );
  assert.equal(hashTree(dir), before, 'recovery changed nothing, the edit included');
});

test('recovery runs when the next command starts in a subdirectory of the project', async () => {
  const dir = project();
  await killDuring(dir, ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], 'applying');
  const result = runCli(['version'], join(dir, 'config'));
  assert.equal(result.status, 0, result.stderr);
  assert.match(
    result.stderr,
    /^Recovered an interrupted write in .*memcached-operator: completed the \d+ file changes of `ts-operator-sdk create api/,
  );
  assert.equal(existsSync(join(dir, JOURNAL_FILE)), false);
  assert.match(readFileSync(join(dir, 'PROJECT'), 'utf8'), /kind: Memcached/);
  assert.deepEqual(
    readdirSync(dir).filter((name) => name.includes('.ts-operator-sdk-')),
    [],
  );
});

test('recovery of an undo refuses to remove a file the user changed after the interruption', async () => {
  const { root } = sandbox();
  writeFileSync(join(root, 'a.txt'), 'old');
  // A real commit that is then set back to "undoing", as a failed apply leaves it.
  const tree = new VirtualTree(root);
  tree.write('a.txt', 'new');
  tree.write('created.txt', 'created');
  await tree.commit();
  const id = '1-0123abcd';
  writeFileSync(join(root, `a.txt.ts-operator-sdk-${id}.bak`), 'old');
  writeFileSync(join(root, 'created.txt'), 'created, then edited by the user');
  const { bytesFingerprint } = await import('../../src/scaffold/fingerprint.js');
  writeFileSync(
    join(root, JOURNAL_FILE),
    JSON.stringify({
      format: 3,
      id,
      state: 'undoing',
      owner: { pid: 1, started: 'not-init' },
      command: 'create api --kind Test',
      directories: [],
      changes: [
        { action: 'UPDATE', path: 'a.txt', before: bytesFingerprint('old'), after: bytesFingerprint('new') },
        { action: 'CREATE', path: 'created.txt', before: 'content:absent', after: bytesFingerprint('created') },
      ],
    }),
  );
  const before = hashTree(root);
  await assert.rejects(
    recoverInterruptedWrite(root, () => undefined),
    refused(
      /^the interrupted write of `ts-operator-sdk create api --kind Test` was not undone: created\.txt changed after the command was interrupted/,
    ),
  );
  assert.equal(hashTree(root), before);
});
