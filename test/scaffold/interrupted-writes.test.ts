/**
 * Interrupted writes (issue 11, item 13): the real CLI is signalled while it
 * changes many files, at random moments and, with the test-only write delay,
 * inside the write itself. Every tree must end up exactly as before or exactly
 * as after the command (every path, file mode and byte), once the next
 * command has recovered whatever a `kill -9` left, and no staged file or
 * journal may remain. A run that did not complete must not exit 0.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { JOURNAL_FILE, TEST_WRITE_DELAY_ENV } from '../../src/scaffold/journal.js';
import { CLI, SCENARIOS, scaffoldScenario, tempProjectDir } from './harness.js';

/** A command that changes many files, and the directory it starts from. */
interface Operation {
  name: string;
  args: string[];
  /** `project`: init --skip-install + create api Memcached; `empty`: an empty directory. */
  from: 'project' | 'empty';
  /** Cases of each kind for this operation. */
  randomCases: number;
  writePhaseCases: number;
}

const OPERATIONS: Operation[] = [
  {
    name: 'create api (new kind)',
    args: ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Frigate', '--resource', '--controller'],
    from: 'project',
    randomCases: 15,
    writePhaseCases: 5,
  },
  {
    name: 'edit --multigroup (moves files)',
    args: ['edit', '--multigroup'],
    from: 'project',
    randomCases: 15,
    writePhaseCases: 5,
  },
  {
    name: 'init',
    args: ['init', '--domain', 'example.com', '--skip-install'],
    from: 'empty',
    randomCases: 12,
    writePhaseCases: 5,
  },
  { name: 'generate manifests', args: ['generate', 'manifests'], from: 'project', randomCases: 8, writePhaseCases: 5 },
];

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGKILL'] as const;
type TestSignal = (typeof SIGNALS)[number];
/** Staged files and backups are `<target>.ts-operator-sdk-<pid>-<hex>.tmp|.bak`. */
const LEFTOVER = /\.ts-operator-sdk-[0-9]+-[0-9a-f]+\.(tmp|bak)$|^\.ts-operator-sdk-journal\.json/;
/** How long the injected delays make one commit's staging and apply phases last, each at least. */
const WRITE_PHASE_MS = 1500;
/** Child processes at once: enough to keep the suite short, few enough for a loaded 2-core machine. */
const CONCURRENCY = 3;
/** Uninterrupted runs per operation before the cases. */
const CALIBRATION_RUNS = 3;
/** A run that takes this long is stuck (the machine is slow, but not this slow). */
const RUN_TIMEOUT_MS = 120_000;

/** Seeded so a failure can be replayed: TS_OPERATOR_SDK_INTERRUPT_SEED=<seed>. */
const SEED = Number(process.env.TS_OPERATOR_SDK_INTERRUPT_SEED ?? Date.now() % 1_000_000);
const random = mulberry32(SEED);

/** Every path under a directory with its type, mode and content hash. */
type Snapshot = Map<string, string>;

interface Prepared {
  operation: Operation;
  template: string;
  before: Snapshot;
  after: Snapshot;
  /** Changed files, for sizing the write delay. */
  changedFiles: number;
  /** Wall time of an uninterrupted run, for spreading random signals over it. */
  durationMs: number;
}

interface Outcome {
  /** Exit code, or null when the process died by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** Whether the signal was sent while the process still ran. */
  signalled: boolean;
  /** The journal's state right after the signal was sent, if there was one. */
  stateAtSignal: string | undefined;
  /** stderr of the recovery run after SIGKILL, if one was made. */
  recovery?: { code: number | null; stderr: string; journalBefore: boolean };
  result: 'before' | 'after';
}

const prepared = new Map<string, Prepared>();
const tally = {
  random: { before: 0, after: 0, interruptedInWrite: 0, recovered: 0 },
  writePhase: { before: 0, after: 0, recovered: 0 },
};

/** The two starting points, copied for each case. */
const templates: string[] = [];

after(() => {
  for (const template of templates) rmSync(dirname(template), { recursive: true, force: true });
});

before(async () => {
  const project = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
  const empty = tempProjectDir();
  templates.push(project, empty);
  // Each operation runs uninterrupted CALIBRATION_RUNS times, under the same
  // concurrency as the cases: the snapshots must agree, and the median wall
  // time places the random signals.
  const runs = OPERATIONS.flatMap((operation) => Array.from({ length: CALIBRATION_RUNS }, () => operation));
  const results = new Map<string, { before: Snapshot; after: Snapshot; durationMs: number }[]>();
  await runPool(runs, async (operation) => {
    const dir = copyOf(operation.from === 'project' ? project : empty);
    const before = snapshot(dir);
    const started = Date.now();
    const run = await runCli(operation.args, dir);
    const durationMs = Date.now() - started;
    assert.equal(run.code, 0, `${operation.name} must succeed uninterrupted: ${run.stderr}`);
    results.set(operation.name, [...(results.get(operation.name) ?? []), { before, after: snapshot(dir), durationMs }]);
    rmSync(dirname(dir), { recursive: true, force: true });
  });
  for (const operation of OPERATIONS) {
    const [first, ...others] = results.get(operation.name)!;
    for (const other of others)
      assert.ok(sameSnapshot(first!.after, other.after), `${operation.name} produces the same tree every time`);
    const { before, after } = first!;
    const changedFiles = [...new Set([...before.keys(), ...after.keys()])].filter(
      (path) => before.get(path) !== after.get(path) && !(after.get(path) ?? before.get(path))!.startsWith('dir'),
    ).length;
    assert.ok(changedFiles >= 2, `${operation.name} changes files`);
    const durations = results
      .get(operation.name)!
      .map((result) => result.durationMs)
      .sort((a, b) => a - b);
    const durationMs = durations[Math.floor(durations.length / 2)]!;
    prepared.set(operation.name, {
      operation,
      template: operation.from === 'project' ? project : empty,
      before,
      after,
      changedFiles,
      durationMs,
    });
  }
});

describe('signals at random moments', { concurrency: CONCURRENCY }, () => {
  const cases = OPERATIONS.flatMap((operation) =>
    Array.from({ length: operation.randomCases }, (_, index) => ({ operation, index })),
  );
  for (const { operation, index } of cases) {
    // Drawn now, so the seed alone fixes every case.
    const signal = SIGNALS[Math.floor(random() * SIGNALS.length)]!;
    // Half spread over the whole run, half around its end, where the write is
    // (widely: a busy machine makes runs slower or faster than calibrated).
    const fraction = index % 2 === 0 ? random() * 1.1 : 0.6 + random() * 1.2;
    test(`${operation.name} #${index + 1}: ${signal} at ${Math.round(fraction * 100)}% of a run (seed ${SEED})`, async () => {
      const setup = prepared.get(operation.name)!;
      const outcome = await interrupt(setup, signal, { afterMs: fraction * setup.durationMs });
      if (outcome.stateAtSignal !== undefined) tally.random.interruptedInWrite += 1;
      tally.random[outcome.result] += 1;
      if (outcome.recovery?.journalBefore) tally.random.recovered += 1;
      assertExit(outcome, signal, false);
    });
  }
});

describe('signals during the write phase (injected write delay)', { concurrency: CONCURRENCY }, () => {
  const cases = OPERATIONS.flatMap((operation) =>
    Array.from({ length: operation.writePhaseCases }, (_, index) => ({ operation, index })),
  );
  let counter = 0;
  for (const { operation, index } of cases) {
    // Every operation gets catchable signals and kill -9 (8 of the 20 cases),
    // in both phases: staging (undone) and applying (finished).
    const signal = (['SIGINT', 'SIGKILL', 'SIGTERM', 'SIGKILL', 'SIGHUP'] as const)[(index + counter) % 5]!;
    const phase = counter++ % 2 === 0 ? 'staging' : 'applying';
    const fraction = random();
    test(`${operation.name} #${index + 1}: ${signal} at ${Math.round(fraction * 60)}% of ${phase} (seed ${SEED})`, async () => {
      const setup = prepared.get(operation.name)!;
      const delayMs = Math.ceil(WRITE_PHASE_MS / setup.changedFiles);
      // The commit sleeps delayMs before each staged write and again before
      // each rename, so each phase lasts at least WRITE_PHASE_MS. Signals
      // land within its first 60%, leaving the rest for the test to notice
      // the journal on a busy machine.
      const outcome = await interrupt(setup, signal, { phase, afterMs: fraction * 0.6 * WRITE_PHASE_MS, delayMs });
      assert.ok(
        outcome.stateAtSignal !== undefined,
        'the signal arrived while the journal existed, i.e. inside the write',
      );
      // Once "applying" is durable the write is always completed, never undone.
      if (outcome.stateAtSignal === 'applying') assert.equal(outcome.result, 'after');
      tally.writePhase[outcome.result] += 1;
      if (outcome.recovery?.journalBefore) tally.writePhase.recovered += 1;
      assertExit(outcome, signal, true);
    });
  }
});

test('summary: which side each interrupted tree ended on', (t) => {
  t.diagnostic(
    `seed ${SEED}; random: ${JSON.stringify(tally.random)}; write phase: ${JSON.stringify(tally.writePhase)}`,
  );
  // The write-phase cases must have hit both phases: undo before the point of no return, finish after it.
  assert.ok(
    tally.writePhase.before > 0 && tally.writePhase.after > 0,
    `write-phase interruptions ended on both sides: ${JSON.stringify(tally.writePhase)}`,
  );
});

/**
 * Runs the operation on a fresh copy and signals it `afterMs` after its start,
 * or after its journal reached `phase`. After SIGKILL, runs
 * `version` in the directory, as the next command a user would run. Asserts
 * the tree is the before or the after snapshot and nothing is left over.
 */
async function interrupt(
  setup: Prepared,
  signal: TestSignal,
  when: { afterMs: number; phase?: 'staging' | 'applying'; delayMs?: number },
): Promise<Outcome> {
  const dir = copyOf(setup.template);
  const env = when.delayMs === undefined ? {} : { [TEST_WRITE_DELAY_ENV]: String(when.delayMs) };
  const child = spawnCli(setup.operation.args, dir, env);
  if (when.phase !== undefined)
    await waitFor(() => journalState(dir) === when.phase, child, `the commit's journal to say ${when.phase}`);
  await sleep(when.afterMs);
  const signalled = child.process.exitCode === null && child.process.signalCode === null;
  if (signalled) child.process.kill(signal);
  const stateAtSignal = journalState(dir);
  const exit = await child.exited;
  const outcome: Omit<Outcome, 'result'> = { ...exit, signalled, stateAtSignal };
  if (signal === 'SIGKILL') {
    const journalBefore = existsSync(join(dir, JOURNAL_FILE));
    const recovery = await runCli(['version'], dir);
    outcome.recovery = { code: recovery.code, stderr: recovery.stderr, journalBefore };
    assert.equal(recovery.code, 0, `the recovery run succeeds: ${recovery.stderr}`);
    const recoveryLines = recovery.stderr
      .split('\n')
      .filter((line) => line.startsWith('Recovered an interrupted write'));
    assert.equal(
      recoveryLines.length,
      journalBefore ? 1 : 0,
      `one recovery line exactly when a journal was left: ${recovery.stderr}`,
    );
  } else {
    // A catchable signal never leaves a journal: the command finished or undid its write itself.
    assert.equal(existsSync(join(dir, JOURNAL_FILE)), false, `no journal after ${signal}: ${exit.stderr}`);
  }
  const leftovers = listAll(dir).filter((path) => LEFTOVER.test(path.split('/').pop()!));
  assert.deepEqual(leftovers, [], 'no staged file, backup or journal remains');
  const now = snapshot(dir);
  const result = sameSnapshot(now, setup.before) ? 'before' : sameSnapshot(now, setup.after) ? 'after' : undefined;
  if (result === undefined) {
    assert.fail(
      `the tree in ${dir} is neither the one before nor the one after ${setup.operation.args.join(' ')} (${signal}, exit ${exit.code ?? exit.signal}):\n${describeDifference(now, setup.before, setup.after)}\nstderr: ${exit.stderr}`,
    );
  }
  // Kept when an assertion failed, for a look; 70 copies a run are too many to keep otherwise.
  rmSync(dirname(dir), { recursive: true, force: true });
  return { ...outcome, result };
}

/**
 * An interrupted run that did not complete must not exit 0; one signalled in
 * the write exits 128 + the signal number (or dies by SIGKILL).
 */
function assertExit(outcome: Outcome, signal: TestSignal, inWrite: boolean): void {
  const exit = outcome.code ?? outcome.signal;
  if (outcome.result === 'before' && outcome.signalled) {
    assert.notEqual(outcome.code, 0, `a run stopped before its write must not exit 0 (stderr: ${outcome.stderr})`);
  }
  if (outcome.code === 0) {
    // Only possible when the signal reached a process that had already finished.
    assert.equal(outcome.result, 'after', 'exit 0 only with the complete result');
  }
  if (inWrite) {
    if (signal === 'SIGKILL') {
      assert.equal(outcome.signal, 'SIGKILL');
    } else {
      assert.equal(
        exit,
        128 + constants.signals[signal],
        `exit status for ${signal} during the write (stderr: ${outcome.stderr})`,
      );
      // The one line says truthfully which way the write went.
      const said =
        outcome.result === 'before'
          ? 'no project file had been changed yet, and none was'
          : 'the write was completed first';
      assert.match(outcome.stderr, new RegExp(`^Interrupted by ${signal}: .*${said}`, 'm'));
    }
  }
}

/** The state recorded in the directory's journal, or undefined without one. */
function journalState(dir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(dir, JOURNAL_FILE), 'utf8')) as { state?: string }).state;
  } catch {
    return undefined;
  }
}

interface ChildRun {
  process: ReturnType<typeof spawn>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): ChildRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stderr });
      });
    },
  );
  return { process: child, exited };
}

async function runCli(args: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  return spawnCli(args, cwd).exited;
}

async function waitFor(condition: () => boolean, child: ChildRun, what: string): Promise<void> {
  for (;;) {
    if (condition()) return;
    if (child.process.exitCode !== null || child.process.signalCode !== null) {
      const { stderr } = await child.exited;
      assert.fail(`the command ended before ${what}: ${stderr}`);
    }
    await sleep(5);
  }
}

/** Runs `work` over `items`, at most CONCURRENCY at a time. */
async function runPool<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
}

function copyOf(template: string): string {
  const dir = tempProjectDir();
  cpSync(template, dir, { recursive: true });
  return dir;
}

function listAll(dir: string, rel = ''): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(dir, rel))) {
    const path = rel ? `${rel}/${entry}` : entry;
    found.push(path);
    if (lstatSync(join(dir, path)).isDirectory()) found.push(...listAll(dir, path));
  }
  return found;
}

function snapshot(dir: string): Snapshot {
  const result: Snapshot = new Map();
  for (const path of listAll(dir).sort()) {
    const abs = join(dir, path);
    const stat = lstatSync(abs);
    const mode = (stat.mode & 0o7777).toString(8);
    if (stat.isDirectory()) result.set(path, `dir ${mode}`);
    else if (stat.isSymbolicLink()) result.set(path, `link ${readlinkSync(abs)}`);
    else result.set(path, `file ${mode} ${createHash('sha256').update(readFileSync(abs)).digest('hex')}`);
  }
  return result;
}

function sameSnapshot(a: Snapshot, b: Snapshot): boolean {
  return a.size === b.size && [...a].every(([path, entry]) => b.get(path) === entry);
}

function describeDifference(now: Snapshot, before: Snapshot, after: Snapshot): string {
  const lines: string[] = [];
  for (const path of [...new Set([...now.keys(), ...before.keys(), ...after.keys()])].sort()) {
    const [n, b, a] = [now.get(path), before.get(path), after.get(path)];
    if (n === b && n === a) continue;
    lines.push(
      `  ${path}: now ${n === undefined ? 'absent' : n === b ? 'as before' : n === a ? 'as after' : 'different'}; before ${b === undefined ? 'absent' : 'present'}, after ${a === undefined ? 'absent' : 'present'}`,
    );
  }
  return lines.join('\n');
}

/** A small seeded PRNG (mulberry32), so a seed replays the same cases. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
