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
