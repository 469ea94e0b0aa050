/**
 * What the CLI loads of Node just to start. commander imports node:process
 * and the CLI node:util; an ES import of a built-in reads every export, lazy
 * getters included, so node:process's would create process.stdin, stdout and
 * stderr (a created stdout turns a piped one non-blocking, which
 * src/cli/io.ts avoids) and load the report module, and node:util's would
 * load worker_threads and parseArgs: time every command pays. The bundle
 * (scripts/bundle-cli.js) reads both through process.getBuiltinModule; this
 * test catches a build where an ES import of either comes back. So do the
 * launcher and the bundle for node:fs, whose getters load fs/promises, the
 * file streams and readline's interface; process.stdin, created before a
 * command reads it, loaded the same (an fs.ReadStream for /dev/null, as here).
 * node:crypto is kept out of the commands that write a project (src/fnv.ts says why).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT, tempProjectDir } from '../scaffold/harness.js';

/**
 * Node's modules that `version` must not load: what only the ESM facade of
 * node:process or node:util would load, and the built-ins loaded only where
 * used (commander's child_process, stdin's readline, bundle validate's tty).
 */
const FACADE_ONLY_MODULES = [
  'NativeModule internal/process/report',
  'NativeModule worker_threads',
  'NativeModule internal/util/parse_args/parse_args',
  'NativeModule child_process',
  'NativeModule readline',
  'NativeModule tty',
  'NativeModule internal/fs/promises',
  'NativeModule internal/readline/interface',
];

/**
 * Node's modules a CLI run in `cwd` loaded: written at exit, after the command
 * ran, to stderr (stdout is the command's), and read from its last line.
 */
function loadedBuiltins(args: string[], cwd?: string): Set<string> {
  const probe = `data:text/javascript,process.on('exit', () => process.stderr.write('\\n' + JSON.stringify(process.moduleLoadList)))`;
  // stdin is /dev/null, as in CI: a process.stdin created early would be an fs.ReadStream.
  const run = spawnSync(process.execPath, ['--import', probe, join(REPO_ROOT, 'bin', 'ts-operator-sdk.js'), ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.equal(run.status, 0, run.stderr);
  const builtins = new Set(JSON.parse(run.stderr.slice(run.stderr.lastIndexOf('\n') + 1)) as string[]);
  assert.ok(builtins.has('NativeModule internal/modules/esm/loader'), 'the probe should see the modules Node loaded');
  return builtins;
}

test('the CLI starts without the ESM facades of node:process, node:util and node:fs, and without built-ins only some commands use', () => {
  const dir = tempProjectDir();
  for (const args of [['version'], ['init', '--domain', 'example.com', '--skip-install']]) {
    const builtins = loadedBuiltins(args, dir);
    assert.deepEqual(
      FACADE_ONLY_MODULES.filter((name) => builtins.has(name)),
      [],
      args.join(' '),
    );
  }
});

test('init and create api write a project without loading node:crypto', () => {
  const dir = tempProjectDir();
  for (const args of [
    ['init', '--domain', 'example.com', '--skip-install'],
    ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'],
  ]) {
    assert.equal(loadedBuiltins(args, dir).has('NativeModule crypto'), false, `${args.join(' ')} loaded node:crypto`);
  }
});
