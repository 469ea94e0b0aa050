/**
 * The bad-input contract every CLI command keeps, as a reusable table runner:
 * a non-zero exit, exactly one line on stderr that names the problem and the
 * fix, no stack trace, nothing on stdout, and a byte-identical directory
 * (paths, types, modes and contents). Tables live next to the commands they
 * exercise; each registers its cases with {@link badInputSuite}.
 */
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { hashTree, runCli, type RunOptions } from '../scaffold/harness.js';

/** One bad input and the error line it must produce. */
export interface BadInput {
  name: string;
  args: string[];
  /** The directory to run in; the suite's default project copy when omitted. */
  dir?: () => string;
  /** Changes made to the directory before the run (part of the "before" state). */
  prepare?: (dir: string) => void;
  /** How to run the CLI (another user, stdin input, environment). */
  run?: () => RunOptions & { setup?(dir: string): void };
  /** Must match the one error line. */
  error: RegExp;
  /**
   * Also keep the project's parent directory byte-identical: for input that
   * tries to write outside the project (`../` in a name, a link out). The
   * project must be the only entry of a temp directory (as copies are).
   */
  watchParent?: boolean;
  /**
   * For a problem in the user's sources: the one `file:line: message` line
   * printed above the error line (compilers' form, so editors can jump to
   * it). Default: no such line.
   */
  problem?: RegExp;
  /**
   * The form of the one line; default `Error: <sentence>.`. `bundle
   * validate` reports a bundle it cannot load as operator-sdk does, one
   * logrus fatal line ({@link FATAL_LOG_LINE}).
   */
  line?: RegExp;
}

/** A `prepare` step: writes `content` at `path` under the directory, creating directories. */
export function put(path: string, content = 'user content\n'): (dir: string) => void {
  return (dir) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  };
}

/** A `prepare` step: changes a file of the directory in place. */
export function edit(path: string, change: (text: string) => string): (dir: string) => void {
  return (dir) => writeFileSync(join(dir, path), change(readFileSync(join(dir, path), 'utf8')));
}

/** `bundle validate`'s one fatal log line (logrus text form, off a terminal). */
export const FATAL_LOG_LINE = /^time="[^"]+" level=fatal msg=".+"$/;

/** Registers one test per case; `defaultDir` gives a fresh project copy for cases without `dir`. */
export function badInputSuite(title: string, cases: readonly BadInput[], defaultDir: () => string): void {
  describe(title, () => {
    for (const bad of cases) {
      test(bad.name, () => {
        const dir = bad.dir ? bad.dir() : defaultDir();
        bad.prepare?.(dir);
        const run = bad.run?.() ?? {};
        run.setup?.(dir);
        const watched = bad.watchParent ? dirname(dir) : dir;
        const before = hashTree(watched);
        const result = runCli(bad.args, dir, run);
        assert.equal(result.status, 1, result.stderr);
        const lines = result.stderr.trimEnd().split('\n');
        if (bad.problem) assert.match(lines.shift()!, bad.problem);
        assert.equal(lines.length, 1, `expected one line of error, got:\n${result.stderr}`);
        assert.match(lines[0]!, bad.line ?? /^Error: .+\.$/);
        assert.doesNotMatch(lines[0]!, /\n\s+at |This is a bug/);
        assert.match(lines[0]!, bad.error);
        assert.equal(result.stdout, '');
        assert.equal(
          hashTree(watched),
          before,
          bad.watchParent ? 'the project or its parent directory changed' : 'the directory changed',
        );
      });
    }
  });
}

/**
 * Runs the CLI as `nobody` after `setup`, because root ignores permissions:
 * with a copy of this node binary that nobody may execute, and the
 * directories up to the temp root made traversable. Not root: `setup` alone,
 * or `whenNotRoot` when given.
 */
export function asNobody(
  setup: (dir: string) => void,
  whenNotRoot: (dir: string) => void = setup,
): () => RunOptions & { setup(dir: string): void } {
  return () => {
    if (process.getuid?.() !== 0) return { setup: whenNotRoot };
    const binDir = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-node-'));
    chmodSync(binDir, 0o755);
    const nodeBinary = join(binDir, 'node');
    copyFileSync(process.execPath, nodeBinary);
    chmodSync(nodeBinary, 0o755);
    return {
      uid: 65534,
      nodeBinary,
      setup: (dir) => {
        for (let path = dir; path.startsWith(tmpdir()) && path !== tmpdir(); path = join(path, '..'))
          chmodSync(path, 0o755);
        setup(dir);
      },
    };
  };
}
