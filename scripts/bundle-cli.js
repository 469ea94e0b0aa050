// The build's last step (`npm run build`): bundles the CLI that tsc wrote to
// dist/src into dist/cli/bundle, which bin/ts-operator-sdk.js loads.
//
// Why: every ES module Node loads costs a resolve, a read and a compile
// (a code-cache lookup at best), and the CLI's own modules with those of
// commander, yaml, ajv and Handlebars are hundreds of files per run. One
// chunk per lazily loaded command keeps the split the CLI already has (a
// command loads only what it runs), while each chunk is one file instead of
// dozens. Measured on the bench's inputs: `bundle validate` ~0.7x the
// unbundled wall time. A single file without splitting is slower (~4x for
// `version`): every module's top-level code, undici's included, runs on
// every start.
//
// Kept out of the bundle and loaded from node_modules: typescript (9 MB,
// required only by the commands that parse the API types) and
// @kubernetes/client-node (imported only for a kubeconfig that needs it).
// The rest of dist/src stays as tsc wrote it: the runtime that operators
// import, and the modules the unit tests import.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));
// Three levels under the package root, like dist/src/scaffold: package-info.ts
// finds package.json (and render.ts templates/) at ../../../ from its module.
const outdir = `${root}dist/cli/bundle`;

/**
 * Built-in modules whose ES import is costly, read from
 * process.getBuiltinModule instead. An ES import of a built-in makes Node
 * build the module's ESM facade, which reads every export once, and reading
 * an export runs its getter. node:process (imported by commander, so by
 * every command): process.stdin, stdout and stderr get created (and a created
 * stdout makes a piped stdout non-blocking, which src/cli/io.ts avoids on
 * purpose), with the report and finalization modules; node:util: parseArgs,
 * styleText's colors, diff and the worker modules. ~200 built-in modules
 * loaded by `init` before, ~195 after, ~2-5% fewer instructions per command
 * (cachegrind, `version` and `init`). node:fs: its getters load fs/promises,
 * the file streams and readline's interface (with bin/ts-operator-sdk.js and
 * a lazy process.stdin, `init` 2 % and `version` 3 % faster, paired runs,
 * 2026-11-27). Each listed module becomes a small ES
 * module whose exports are pure reads of the real one, so esbuild keeps only
 * the exports the CLI imports and nothing else is read. Only the costly ones
 * are listed: each is a module of the bundle, and one shared between
 * commands is one more chunk file to load (every built-in this way: 31
 * files loaded by `init` instead of 18, slower than the facades it saved).
 */
const WITHOUT_FACADE = /^(node:)?(process|util|fs)$/;
const builtinsWithoutFacade = {
  name: 'builtins-without-facade',
  setup(pluginBuild) {
    // An ES import only: a CommonJS require() of a built-in makes no facade
    // (esbuild leaves it to Node's require), and redirecting it would make
    // esbuild build a namespace object reading every export.
    pluginBuild.onResolve({ filter: WITHOUT_FACADE }, (args) =>
      args.kind === 'import-statement'
        ? { path: args.path.replace(/^(node:)?/, 'node:'), namespace: 'builtin' }
        : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => {
      const exported = Object.keys(process.getBuiltinModule(args.path)).filter((name) => name !== 'default');
      return {
        contents: [
          `const builtin = process.getBuiltinModule(${JSON.stringify(args.path)});`,
          'const read = (name) => builtin[name];',
          ...exported.map((name, index) => `const e${index} = /* @__PURE__ */ read(${JSON.stringify(name)});`),
          `export { ${exported.map((name, index) => `e${index} as ${name}`).join(', ')} };`,
          'export default builtin;',
        ].join('\n'),
        loader: 'js',
      };
    });
  },
};

/**
 * node:child_process for commander, loaded on first use: commander requires
 * it at load for executable (git-style) subcommands, which this CLI has none
 * of, and loading it (net, dgram and their modules with it) cost every
 * command ~1.5 ms. commander gets an object that loads the real module the
 * first time one of its properties is read.
 */
const lazyChildProcessForCommander = {
  name: 'lazy-child-process-for-commander',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)
        ? { path: 'node:child_process', namespace: 'lazy-builtin' }
        : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: `let real; module.exports = new Proxy({}, { get: (_, name) => (real ??= process.getBuiltinModule(${JSON.stringify(args.path)}))[name] });`,
      loader: 'js',
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
await build({
  // missing-dependency: the launcher's one line for a dependency that is not
  // installed, loaded by it only when loading main fails.
  entryPoints: { main: `${root}dist/src/main.js`, 'missing-dependency': `${root}dist/src/cli/missing-dependency.js` },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  external: ['typescript', '@kubernetes/client-node'],
  plugins: [builtinsWithoutFacade, lazyChildProcessForCommander],
  // CommonJS dependencies inside the bundle call require() (node:events,
  // node:child_process, ...), which an ES module lacks: each chunk gets one.
  banner: {
    js: "import { createRequire as __cliCreateRequire } from 'node:module'; const require = __cliCreateRequire(import.meta.url);",
  },
  // Not read at run time; a --verbose stack trace can be mapped with them to
  // src/ (file:line of the .ts, through tsc's maps). Without the sources'
  // text: with it the maps were 7 MB, and the packed tarball 1 MB larger.
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
});
