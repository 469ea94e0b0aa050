/**
 * An unsupported Node is refused in one line, before anything that needs a
 * newer Node is loaded: by the CLI launcher itself, and by `npm install` in
 * this repository and in generated projects (engine-strict in .npmrc). A
 * missing CLI dependency (optionalDependencies left out) is one line too.
 *
 * The old Node is the machine's own (a v20 on PATH or in /usr/bin); a copy of
 * the launcher whose package.json asks for Node 99 checks the same code path
 * with the current Node, so the refusal is tested even where no old Node is
 * installed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT, runCli, runCliOk, tempProjectDir } from '../scaffold/harness.js';

const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };

/** A Node binary older than 24 on this machine (PATH, then /usr/bin), if any. */
function oldNode(): string | undefined {
  const candidates = [
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'node')),
    '/usr/bin/node',
    '/usr/local/bin/node',
  ];
  for (const candidate of candidates) {
    if (!existsSync(candidate)) continue;
    const version = spawnSync(candidate, ['-v'], { encoding: 'utf8' }).stdout.trim();
    const major = Number(/^v(\d+)\./.exec(version)?.[1]);
    if (major < 24) return candidate;
  }
  return undefined;
}

/** A copy of the launcher and its package.json, with `edit` applied to the package.json. */
function launcherCopy(edit: (pkg: Record<string, unknown>) => void): string {
  const root = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-launcher-'));
  cpSync(join(REPO_ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  edit(pkg);
  writeFileSync(join(root, 'package.json'), JSON.stringify(pkg));
  return root;
}

const errorLines = (stderr: string): string[] => stderr.split('\n').filter(Boolean);

test('the launcher refuses a Node older than engines.node in one line naming the fix', () => {
  const root = launcherCopy((pkg) => {
    pkg.engines = { node: '>=99.0.0' };
  });
  const result = spawnSync(process.execPath, [join(root, 'bin', 'ts-operator-sdk.js'), 'version'], {
    encoding: 'utf8',
  });
  assert.equal(result.status, 1);
  assert.deepEqual(errorLines(result.stderr), [
    `Error: ts-operator-sdk needs Node.js >=99.0.0, but this is Node.js v${process.versions.node} (${process.execPath}). Install Node.js 99.0 or newer (e.g. \`nvm install 99\`), put it first on PATH and run the command again.`,
  ]);
  assert.equal(result.stdout, '');
});

test("the machine's old Node gets the one-line refusal from the real launcher", (t) => {
  const node = oldNode();
  if (!node) return t.skip('no Node older than 24 on this machine');
  const result = runCli(['init', '--domain', 'example.com'], tempProjectDir(), { nodeBinary: node });
  assert.equal(result.status, 1);
  const lines = errorLines(result.stderr);
  assert.equal(lines.length, 1, result.stderr);
  assert.match(
    lines[0]!,
    new RegExp(
      `^Error: ts-operator-sdk needs Node\\.js ${packageJson.engines.node}, but this is Node\\.js v\\d+\\.\\d+\\.\\d+ \\(.*\\)\\. Install Node\\.js 24\\.0 or newer`,
    ),
  );
});

test('without the optional dependencies the bundled CLI runs, and a command that needs typescript names the install in one line', () => {
  // A package root with the built CLI but no node_modules: what `npm ci --omit=optional` leaves of the CLI's dependencies.
  const root = launcherCopy(() => undefined);
  mkdirSync(join(root, 'dist'));
  cpSync(join(REPO_ROOT, 'dist', 'cli'), join(root, 'dist', 'cli'), { recursive: true });
  const launcher = join(root, 'bin', 'ts-operator-sdk.js');
  // commander, yaml, ajv and Handlebars are inside the bundle.
  const version = spawnSync(process.execPath, [launcher, 'version'], { encoding: 'utf8' });
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout, /^ts-operator-sdk version: /);
  // typescript is not: the commands that parse the API types load it on use.
  const manifests = spawnSync(process.execPath, [launcher, 'generate', 'manifests'], {
    cwd: tempProjectDir(),
    encoding: 'utf8',
  });
  assert.equal(manifests.status, 1);
  assert.deepEqual(errorLines(manifests.stderr), [
    'Error: the ts-operator-sdk CLI needs its optional dependencies, and typescript is not installed (an install with --omit=optional, or on an unsupported Node, leaves them out). Run `npm install --include=optional` in the project (an operator image may omit them).',
  ]);
});

test('the launcher names a missing optional dependency of the bundle in one line, and leaves any other missing package unmasked', () => {
  // A bundle whose main imports `dependency`, in a package root without node_modules.
  const launcherFor = (dependency: string): string => {
    const root = launcherCopy(() => undefined);
    const bundle = join(root, 'dist', 'cli', 'bundle');
    cpSync(join(REPO_ROOT, 'dist', 'cli', 'bundle'), bundle, { recursive: true });
    writeFileSync(join(bundle, 'main.js'), `import '${dependency}';\nexport async function run() { return 0; }\n`);
    return join(root, 'bin', 'ts-operator-sdk.js');
  };
  const optional = spawnSync(process.execPath, [launcherFor('typescript'), 'version'], { encoding: 'utf8' });
  assert.equal(optional.status, 1);
  assert.deepEqual(errorLines(optional.stderr), [
    'Error: the ts-operator-sdk CLI needs its optional dependencies, and typescript is not installed (an install with --omit=optional, or on an unsupported Node, leaves them out). Run `npm install --include=optional` in the project (an operator image may omit them).',
  ]);
  const other = spawnSync(process.execPath, [launcherFor('no-such-package-of-ts-operator-sdk'), 'version'], {
    encoding: 'utf8',
  });
  assert.equal(other.status, 1);
  assert.match(other.stderr, /Cannot find package 'no-such-package-of-ts-operator-sdk'/);
  assert.doesNotMatch(other.stderr, /--include=optional/);
});

test('npm refuses an old Node in this repository and in a generated project (engine-strict)', (t) => {
  assert.match(readFileSync(join(REPO_ROOT, '.npmrc'), 'utf8'), /^engine-strict=true$/m);
  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  assert.match(readFileSync(join(dir, '.npmrc'), 'utf8'), /^engine-strict=true$/m);
  const node = oldNode();
  if (!node) return t.skip('no Node older than 24 on this machine');
  const npmCli = join(node, '..', '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  if (!existsSync(npmCli)) return t.skip(`no npm next to ${node}`);
  // npm checks engines after resolving the dependency tree, so the dependencies
  // are dropped to keep this test off the network (offline, too): what is
  // checked is the project's own engines under its .npmrc.
  const packagePath = join(dir, 'package.json');
  const generated = JSON.parse(readFileSync(packagePath, 'utf8')) as Record<string, unknown>;
  writeFileSync(packagePath, JSON.stringify({ ...generated, dependencies: {}, devDependencies: {} }));
  const result = spawnSync(node, [npmCli, 'install', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, npm_config_offline: 'true' },
  });
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /EBADENGINE/);
  const engines = generated.engines as { node: string };
  assert.match(result.stderr, new RegExp(`Required: \\{"node":"${engines.node}"\\}`));
  assert.ok(!existsSync(join(dir, 'node_modules')), 'nothing was installed');
});

test('the launcher keeps its compile cache in the user cache dir, and runs the same when that cannot be written', () => {
  const dir = tempProjectDir();
  const cacheHome = mkdtempSync(join(tmpdir(), 'ts-operator-sdk-cache-home-'));
  // NODE_COMPILE_CACHE would take precedence over the launcher's directory.
  const env = { XDG_CACHE_HOME: cacheHome, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined };
  const cached = runCliOk(['version'], dir, { env });
  assert.ok(
    readdirSync(join(cacheHome, 'ts-operator-sdk', 'compile-cache')).length > 0,
    'the compile cache is written under $XDG_CACHE_HOME/ts-operator-sdk',
  );
  // A cache home that is a file: the cache directory can never be created (as on a read-only home).
  const blocked = join(cacheHome, 'not-a-directory');
  writeFileSync(blocked, '');
  const uncached = runCli(['version'], dir, { env: { ...env, XDG_CACHE_HOME: blocked } });
  assert.equal(uncached.status, 0);
  assert.equal(uncached.stderr, '');
  assert.equal(uncached.stdout, cached.stdout);
});
