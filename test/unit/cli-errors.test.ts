/**
 * The CLI's one error path (UsageError) and its one boolean-flag parser,
 * run in-process through `run(argv, ctx)` with a context that captures output.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Option } from 'commander';
import type { CliContext } from '../../src/cli/context.js';
import { parseBooleanFlag } from '../../src/cli/flags.js';
import { UsageError } from '../../src/errors.js';
import { buildProgram, run } from '../../src/main.js';
import { tempProjectDir } from '../scaffold/harness.js';

/** A non-interactive context that records stdout and stderr lines. */
function capturingContext(cwd: string): CliContext & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    cwd,
    interactive: false,
    exitCode: 0,
    verbose: false,
    setVerbose: () => undefined,
    close: () => undefined,
    io: {
      out: (line) => void stdout.push(line),
      progress: (line) => void stderr.push(line),
      debug: () => undefined,
      confirm: () => Promise.reject(new Error('no prompts in this test')),
    },
  };
}

test('a UsageError with source problems prints each file:line problem, then the one Error line', async () => {
  const dir = tempProjectDir();
  const cli = (args: string[]) => run(['node', 'ts-operator-sdk', ...args], capturingContext(dir));
  assert.equal(await cli(['init', '--domain', 'example.com', '--skip-install']), 0);
  assert.equal(await cli(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached']), 0);
  const typesFile = join(dir, 'apis/v1/memcached_types.ts');
  const types = readFileSync(typesFile, 'utf8');
  const withFloat = types.replace(/(export interface MemcachedSpec \{\n)/, '$1  ratio?: number;\n');
  assert.notEqual(withFloat, types, 'the types file has a MemcachedSpec to break');
  writeFileSync(typesFile, withFloat);

  const ctx = capturingContext(dir);
  assert.equal(await run(['node', 'ts-operator-sdk', 'generate', 'manifests'], ctx), 1);
  assert.equal(ctx.stderr.length, 2, ctx.stderr.join('\n'));
  assert.match(ctx.stderr[0]!, /^apis\/v1\/memcached_types\.ts:\d+: a plain number has no integer format/);
  assert.equal(
    ctx.stderr[1],
    'Error: generate manifests found 1 problem in the API types and controllers (listed above); nothing was written. Fix them and run it again.',
  );
});

test('UsageError: the CLI sentence, and the chained form for library callers', () => {
  const error = new UsageError('cannot read version "x"', 'use latest or X.Y.Z', { component: 'envtest' });
  assert.equal(error.sentence, 'cannot read version "x". Use latest or X.Y.Z.');
  assert.equal(error.message, 'envtest: cannot read version "x": use latest or X.Y.Z');
  assert.equal(error.chained, 'cannot read version "x": use latest or X.Y.Z');
});

test('every [bool] flag of every command parses with the one parseBooleanFlag', () => {
  const program = buildProgram(capturingContext(process.cwd()));
  const boolFlags: string[] = [];
  const walk = (command: typeof program, path: string): void => {
    for (const option of command.options as Option[]) {
      if (!option.flags.includes('[bool]')) continue;
      boolFlags.push(`${path} ${option.long}`);
      assert.equal(option.parseArg, parseBooleanFlag, `${path} ${option.long} uses another parser`);
    }
    for (const child of command.commands) walk(child, `${path} ${child.name()}`.trim());
  };
  walk(program, '');
  // The flags the brief named: --interactive used to reject yes where --namespaced took it.
  for (const flag of [
    'create api --namespaced',
    'generate kustomize manifests --interactive',
    'generate bundle --overwrite',
  ]) {
    assert.ok(boolFlags.includes(flag), `${flag} is a [bool] flag (found: ${boolFlags.join(', ')})`);
  }
  for (const spelling of ['true', 'TRUE', 't', '1', 'yes', 'Yes'])
    assert.equal(parseBooleanFlag(spelling), true, spelling);
  for (const spelling of ['false', 'False', 'f', '0', 'no', 'NO'])
    assert.equal(parseBooleanFlag(spelling), false, spelling);
  assert.throws(() => parseBooleanFlag('maybe'), /"maybe" is not true or false/);
});
