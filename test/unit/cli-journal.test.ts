/**
 * The commit journal's cases that signals cannot reach: a failed apply,
 * recovery of the `undoing` state, journals that are not ours to act on, and
 * file modes. Journals are written here by hand in the module's format; the
 * interruption suite (test/scaffold/interrupted-writes.test.ts) produces real
 * ones with signals.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { bytesFingerprint } from '../../src/scaffold/fingerprint.js';
import { JOURNAL_FILE, recoverInterruptedWrite } from '../../src/scaffold/journal.js';
import { VirtualTree } from '../../src/scaffold/tree.js';
import { hashTree } from '../scaffold/harness.js';

function tempDir(): string {
  return join(mkdtempSync(join(tmpdir(), 'ts-operator-sdk-journal-')), 'project');
}

/** A pid that no process has now: one that has just exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

/** One change as written here: the target's text before the command (absent: it did not exist) and the text it writes. */
interface HandChange {
  action: string;
  path: string;
  before?: string;
  after?: string;
}

function writeJournal(
  dir: string,
  journal: { id: string; state: string; pid: number; changes: HandChange[]; directories?: string[] },
): void {
  const changes = journal.changes.map(({ action, path, before, after }) => ({
    action,
    path,
    before: before === undefined ? 'content:absent' : bytesFingerprint(before),
    ...(after === undefined ? {} : { after: bytesFingerprint(after) }),
  }));
  writeFileSync(
    join(dir, JOURNAL_FILE),
    JSON.stringify({
      format: 3,
      id: journal.id,
      state: journal.state,
      owner: { pid: journal.pid },
      command: 'create api --kind Test',
      directories: journal.directories ?? [],
      changes,
    }),
  );
}

async function recover(dir: string): Promise<string[]> {
  const lines: string[] = [];
  await recoverInterruptedWrite(dir, (line) => lines.push(line));
  return lines;
}

/**
 * Runs `body` while another command (a live process) holds the journal of a
 * write in `dir` applying `change`, then kills that process.
 */
async function whileAnotherCommandWrites(
  dir: string,
  change: HandChange,
  body: (pid: number) => Promise<void>,
): Promise<void> {
  const running = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
  try {
    writeJournal(dir, { id: `${running.pid}-0123abcd`, state: 'applying', pid: running.pid!, changes: [change] });
    await body(running.pid!);
  } finally {
    running.kill('SIGKILL');
  }
}

test('an apply that fails half-way is undone from the backups, modes included', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'b'), { recursive: true });
  writeFileSync(join(dir, 'a.txt'), 'old a');
  chmodSync(join(dir, 'a.txt'), 0o640);
  writeFileSync(join(dir, 'del.txt'), 'to delete');
  // Renaming a file onto a directory fails (EISDIR), after the three changes sorted before it were applied.
  mkdirSync(join(dir, 'zzz'));
  const before = hashTree(dir);
  const tree = new VirtualTree(dir);
  tree.write('a.txt', 'new a');
  tree.write('b/new.txt', 'new');
  tree.write('c/d/new.txt', 'new in new directories');
  tree.delete('del.txt');
  tree.write('zzz', 'onto a directory');
  await assert.rejects(
    tree.commit(),
    (error: unknown) =>
      error instanceof UsageError &&
      /could not write the project files \(EISDIR at zzz\); nothing was changed/.test(error.message),
  );
  assert.equal(hashTree(dir), before);
});

test('a replaced file keeps its mode; a created one gets the default', async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\n');
  chmodSync(join(dir, 'run.sh'), 0o751);
  const tree = new VirtualTree(dir);
  tree.write('run.sh', '#!/bin/sh\necho hi\n');
  tree.write('new.txt', 'x');
  await tree.commit();
  assert.equal(statSync(join(dir, 'run.sh')).mode & 0o7777, 0o751);
  assert.equal(readFileSync(join(dir, 'run.sh'), 'utf8'), '#!/bin/sh\necho hi\n');
  assert.equal(statSync(join(dir, 'new.txt')).mode & 0o7777, 0o666 & ~process.umask());
  assert.deepEqual(readdirSync(dir).sort(), ['new.txt', 'run.sh'], 'no staged file, backup or journal is left');
});

test('recovery finishes undoing a write that was being undone', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'sub'), { recursive: true });
  writeFileSync(join(dir, 'a.txt'), 'old a');
  writeFileSync(join(dir, 'gone.txt'), 'deleted file');
  const before = hashTree(dir);
  // The disk as a killed undo left it: a.txt replaced (backup kept), new.txt
  // created, gone.txt deleted (backup kept), sub/created made by the commit.
  const id = `${deadPid()}-0123abcd`;
  writeFileSync(join(dir, `a.txt.ts-operator-sdk-${id}.bak`), 'old a');
  writeFileSync(join(dir, 'a.txt'), 'new a');
  writeFileSync(join(dir, `gone.txt.ts-operator-sdk-${id}.bak`), 'deleted file');
  rmSync(join(dir, 'gone.txt'));
  mkdirSync(join(dir, 'sub', 'created'));
  writeFileSync(join(dir, 'sub', 'created', 'new.txt'), 'new');
  writeJournal(dir, {
    id,
    state: 'undoing',
    pid: Number(id.split('-')[0]),
    directories: ['sub/created'],
    changes: [
      { action: 'UPDATE', path: 'a.txt', before: 'old a', after: 'new a' },
      { action: 'DELETE', path: 'gone.txt', before: 'deleted file' },
      { action: 'CREATE', path: 'sub/created/new.txt', after: 'new' },
    ],
  });
  assert.deepEqual(await recover(dir), [
    'Recovered an interrupted write: finished undoing the 3 file changes of `ts-operator-sdk create api --kind Test`.',
  ]);
  assert.equal(hashTree(dir), before);
});

test('recovery completes an applying write, and undoes it when it cannot be completed', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'zzz'), { recursive: true });
  writeFileSync(join(dir, 'a.txt'), 'old a');
  const before = hashTree(dir);
  const id = `${deadPid()}-0123abcd`;
  const pid = Number(id.split('-')[0]);
  const changes = [
    { action: 'UPDATE', path: 'a.txt', before: 'old a', after: 'new a' },
    { action: 'CREATE', path: 'zzz', after: 'file' },
  ];
  // a.txt was applied; zzz's staged file waits, but zzz has become a directory.
  writeFileSync(join(dir, `a.txt.ts-operator-sdk-${id}.bak`), 'old a');
  writeFileSync(join(dir, 'a.txt'), 'new a');
  writeFileSync(join(dir, `zzz.ts-operator-sdk-${id}.tmp`), 'file');
  writeJournal(dir, { id, state: 'applying', pid, changes });
  const lines = await recover(dir);
  assert.equal(lines.length, 1);
  assert.match(
    lines[0]!,
    /^Recovered an interrupted write: undid the 2 file changes of `ts-operator-sdk create api --kind Test`, which could not be completed \(EISDIR at zzz\)\.$/,
  );
  assert.equal(hashTree(dir), before);

  // The same with zzz free: completed.
  rmSync(join(dir, 'zzz'), { recursive: true });
  writeFileSync(join(dir, `a.txt.ts-operator-sdk-${id}.bak`), 'old a');
  writeFileSync(join(dir, 'a.txt'), 'new a');
  writeFileSync(join(dir, `zzz.ts-operator-sdk-${id}.tmp`), 'file');
  writeJournal(dir, { id, state: 'applying', pid, changes });
  assert.deepEqual(await recover(dir), [
    'Recovered an interrupted write: completed the 2 file changes of `ts-operator-sdk create api --kind Test`.',
  ]);
  assert.deepEqual(readdirSync(dir).sort(), ['a.txt', 'zzz']);
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'new a');
  assert.equal(readFileSync(join(dir, 'zzz'), 'utf8'), 'file');
});

test('a journal from the directory never makes recovery delete a file outside the project', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-journal-'));
  const dir = join(parent, 'project');
  mkdirSync(dir);
  writeFileSync(join(parent, 'precious.txt'), 'keep me');
  const id = `${deadPid()}-0123abcd`;
  writeJournal(dir, {
    id,
    state: 'undoing',
    pid: Number(id.split('-')[0]),
    changes: [{ action: 'CREATE', path: '../precious.txt', after: 'keep me' }],
  });
  await recover(dir);
  assert.equal(readFileSync(join(parent, 'precious.txt'), 'utf8'), 'keep me');
  assert.equal(existsSync(join(dir, JOURNAL_FILE)), false);
});

test('the journal of a command still running is left alone, and a second write gives up after waiting 5 s for it', async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'a.txt'), 'a');
  await whileAnotherCommandWrites(dir, { action: 'UPDATE', path: 'a.txt', before: 'a', after: 'b' }, async (pid) => {
    const before = hashTree(dir);
    assert.deepEqual(await recover(dir), []);
    assert.equal(hashTree(dir), before);
    const tree = new VirtualTree(dir);
    tree.write('a.txt', 'b');
    await assert.rejects(
      tree.commit(),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message ===
          `another ts-operator-sdk command (pid ${pid}) is writing this project (${JOURNAL_FILE} exists). Wait for it to finish and run the command again.`,
    );
    assert.equal(hashTree(dir), before);
  });
});

test('an unreadable journal is a one-line error naming the file and the fix', async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, JOURNAL_FILE), '{"format": 1, "id":');
  await assert.rejects(
    recover(dir),
    (error: unknown) =>
      error instanceof UsageError &&
      !error.message.includes('\n') &&
      /^the interrupted-write journal \.ts-operator-sdk-journal\.json cannot be read .*Delete \.ts-operator-sdk-journal\.json/i.test(
        error.message,
      ),
  );
  writeFileSync(join(dir, JOURNAL_FILE), JSON.stringify({ format: 99 }));
  await assert.rejects(
    recover(dir),
    (error: unknown) =>
      error instanceof UsageError && /is not a journal this version of ts-operator-sdk understands/.test(error.message),
  );
});

test(
  'a journal that is a dangling symbolic link is an error, not a journal that has just ended',
  { timeout: 30_000 },
  async () => {
    // Reading it fails with ENOENT, as a journal removed by a command that just finished does; but it stays,
    // so recovery must not take it for gone, and a commit must not wait on it forever.
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    symlinkSync(join(dir, 'nowhere.json'), join(dir, JOURNAL_FILE));
    await assert.rejects(
      recover(dir),
      (error: unknown) =>
        error instanceof UsageError &&
        /^the interrupted-write journal \S+ cannot be read \(ENOENT\)/.test(error.message),
    );
    const tree = new VirtualTree(dir);
    tree.write('a.txt', 'a');
    await assert.rejects(
      tree.commit(),
      (error: unknown) =>
        error instanceof UsageError && /^another ts-operator-sdk command is writing this project/.test(error.message),
    );
    assert.equal(existsSync(join(dir, 'a.txt')), false);
  },
);

test('journal temp files of dead processes are removed; without a journal nothing else is touched', async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${JOURNAL_FILE}.${deadPid()}-0123abcd.tmp`), '{}');
  writeFileSync(join(dir, `${JOURNAL_FILE}.${process.pid}-0123abcd.tmp`), '{}');
  writeFileSync(join(dir, 'user.tmp'), 'mine');
  assert.deepEqual(await recover(dir), []);
  assert.deepEqual(readdirSync(dir).sort(), [`${JOURNAL_FILE}.${process.pid}-0123abcd.tmp`, 'user.tmp']);
  // A directory that does not exist (deleted working directory) is not this module's error to report.
  assert.deepEqual(await recover(join(dir, 'missing')), []);
});

test('a write that finds another command committing waits for it, then goes on', async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'a.txt'), 'a');
  await whileAnotherCommandWrites(dir, { action: 'CREATE', path: 'other.txt', after: 'x' }, async () => {
    // The other command finishes its write 300 ms later.
    setTimeout(() => rmSync(join(dir, JOURNAL_FILE)), 300);
    const tree = new VirtualTree(dir);
    tree.write('b.txt', 'b');
    await tree.commit();
    assert.equal(readFileSync(join(dir, 'b.txt'), 'utf8'), 'b');
    assert.deepEqual(readdirSync(dir).sort(), ['a.txt', 'b.txt']);
  });
});
