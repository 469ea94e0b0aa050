#!/usr/bin/env node
// Thin launcher: the CLI lives in dist/ so that `npx ts-operator-sdk` starts
// without compiling anything.
//
// Everything up to the dynamic import below must run on any Node that can
// load an ES module: the checks exist to turn an old Node or a missing
// dependency into one line saying what to do, instead of a stack trace or a
// screen of "Cannot find module" errors.
// Built-ins through process.getBuiltinModule (Node 20.16, 22.3 and later; older ones
// import them, only to be refused below): an ES import of node:fs makes Node
// read every export, whose getters load fs/promises, the file streams and
// readline's modules, ~3 ms of every command that never uses them.
const builtin = (name) => process.getBuiltinModule?.(name) ?? import(name);
const { readFileSync } = await builtin('node:fs');
const module = await builtin('node:module');
const { homedir } = await builtin('node:os');
const { join } = await builtin('node:path');

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** `Error: <problem>. <Fix>.`, the CLI's one-line form, then exit 1. */
function refuse(problem, fix) {
  process.stderr.write(`Error: ${problem}. ${fix}.\n`);
  process.exit(1);
}

// engines.node is `>=MAJOR.MINOR.PATCH`; a range of another shape is not
// checked here (npm's engine-strict still checks it at install).
const required = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(String(packageJson.engines?.node ?? '').trim());
if (required) {
  const wanted = required.slice(1).map(Number);
  const actual = process.versions.node.split('.').map(Number);
  const older = actual[0] - wanted[0] || actual[1] - wanted[1] || actual[2] - wanted[2];
  if (older < 0) {
    refuse(
      `ts-operator-sdk needs Node.js ${packageJson.engines.node}, but this is Node.js v${process.versions.node} (${process.execPath})`,
      `Install Node.js ${wanted[0]}.${wanted[1]} or newer (e.g. \`nvm install ${wanted[0]}\`), put it first on PATH and run the command again`,
    );
  }
}

// V8's compile cache: the CLI's modules are compiled once and later runs read
// the code cache from disk instead of parsing every module again. It lives in
// the user cache directory (XDG_CACHE_HOME, else ~/.cache) beside the other
// things ts-operator-sdk caches. A home that cannot be written (a read-only
// container, a locked-down CI user) only loses the speed-up: Node reports the
// failure in the returned status, which is ignored, and anything thrown is
// swallowed for the same reason. NODE_COMPILE_CACHE and
// NODE_DISABLE_COMPILE_CACHE keep their meaning (Node checks them first).
try {
  module.enableCompileCache?.(
    join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ts-operator-sdk', 'compile-cache'),
  );
} catch {
  // No cache: the run is only slower.
}

let run;
try {
  ({ run } = await import('../dist/cli/bundle/main.js'));
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  if (String(err.url ?? '').endsWith('/dist/cli/bundle/main.js')) {
    refuse(
      'ts-operator-sdk is not built (dist/ is missing)',
      'Run `npm run build` in the ts-operator-sdk checkout, or use the package made by `npm pack`',
    );
  }
  // A dependency the bundle left out: one line naming the install when it is
  // an optional one (src/cli/missing-dependency.ts says why), else the stack.
  const { missingDependencyLine } = await import('../dist/cli/bundle/missing-dependency.js');
  const line = missingDependencyLine(err, packageJson.optionalDependencies);
  if (line !== undefined) {
    process.stderr.write(`${line}\n`);
    process.exit(1);
  }
  throw err;
}

// The CLI writes stdout and stderr with synchronous writes and reports a
// failed stdout itself (src/main.ts: one line, or exit 141 for a closed pipe,
// as a Go CLI killed by SIGPIPE). stdout is left alone here: creating
// process.stdout would make a pipe non-blocking. Some modules write to
// process.stderr directly; a failure there has nowhere to be reported, so it
// is ignored instead of crashing the run with a stack trace.
process.stderr.on('error', () => {});

process.exitCode = await run(process.argv);
