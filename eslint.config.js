// The SDK lints itself as it makes its users' projects lint theirs
// (templates/init/eslint.config.js.hbs): typescript-eslint's type-checked
// rules, because what matters most in an operator is a promise nobody awaits
// (a write that may never happen, or an error nobody sees). Formatting is
// Prettier's job (`npm run format`), so no rule here is about layout.
// @ts-check
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import eslint from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import noImportCycle from './eslint-rules/no-import-cycle.js';

/**
 * The layers of src/, top to bottom (STYLE.md): a module imports its own
 * layer and the layers below it, never one above, the way controller-runtime's
 * depguard keeps pkg/ acyclic. What each layer is:
 * - main.ts: the CLI's entry, wiring the commands.
 * - commands/<name>: one folder per command; a command never imports another's.
 * - cli: what commands share to talk to the user (io, context, flags, stdin).
 * - cluster: the API-server session of the commands that act on a cluster.
 * - generators: CRDs, RBAC, webhooks, CSV, bundle, types from CRDs.
 * - scaffold: the virtual tree, templates, markers, the PROJECT model.
 * - validation: bundle and CRD checks, object names.
 * - oci: image references and the registry client.
 * - runtime: what generated operators import; it imports nothing above it
 *   but src/errors.ts (see the zone after the layers).
 * - base modules every layer may use: errors, paths, YAML input, the string
 *   order of sorted output, the CLI's hash (FNV).
 */
const LAYERS = [
  ['src/main.ts'],
  ['src/commands'],
  ['src/cli'],
  ['src/cluster'],
  ['src/generators'],
  ['src/scaffold'],
  ['src/validation'],
  ['src/oci'],
  ['src/runtime'],
  ['src/yaml-input.ts', 'src/yaml-output.ts', 'src/paths.ts', 'src/errors.ts', 'src/byte-order.ts', 'src/fnv.ts'],
];

// A new folder or file directly under src/ must be placed in a layer, or the rule would not see it.
const unplaced = readdirSync(join(import.meta.dirname, 'src')).filter(
  (entry) => !LAYERS.flat().includes(`src/${entry}`),
);
if (unplaced.length > 0) throw new Error(`eslint.config.js: put src/${unplaced.join(', src/')} in a layer of LAYERS`);

const layerZones = LAYERS.slice(1).map((layer, index) => ({
  target: layer,
  from: LAYERS.slice(0, index + 1).flat(),
  message: 'A layer imports only the layers below it (LAYERS in eslint.config.js).',
}));
const commandZones = readdirSync(join(import.meta.dirname, 'src', 'commands')).map((command) => ({
  target: `src/commands/${command}`,
  from: 'src/commands',
  except: [`./${command}`],
  message: 'A command never imports another command: move what both need below the commands (e.g. src/cluster).',
}));
const runtimeZone = {
  target: 'src/runtime',
  from: 'src',
  except: ['./runtime', './errors.ts'],
  message: 'The runtime is what operators import: it imports only itself and src/errors.ts.',
};

/**
 * The runtime's packages, bottom to top (README, "The runtime's packages"): a
 * package imports only the levels below its own, never a package of its own
 * level or above, as controller-runtime's pkg/ does. The top level is the root
 * entry point, which re-exports the few names an operator needs.
 */
const RUNTIME_LEVELS = [
  ['node-builtins.ts', 'runnable.ts'],
  ['api', 'log', 'healthz', 'httpserver'],
  ['transport', 'certs', 'handler'],
  ['metrics', 'pod'],
  ['client', 'workqueue', 'leaderelection'],
  ['cache', 'recorder', 'controllerutil'],
  ['predicate', 'source'],
  ['controller', 'webhook'],
  ['manager'],
  ['builder', 'envtest'],
  ['index.ts'],
];
const runtimeEntries = readdirSync(join(import.meta.dirname, 'src', 'runtime'));
const unplacedRuntime = runtimeEntries.filter((entry) => !RUNTIME_LEVELS.flat().includes(entry));
if (unplacedRuntime.length > 0) {
  throw new Error(`eslint.config.js: put src/runtime/${unplacedRuntime.join(', src/runtime/')} in RUNTIME_LEVELS`);
}
const runtimePackageZones = RUNTIME_LEVELS.flatMap((level, index) =>
  level.map((entry) => ({
    target: `src/runtime/${entry}`,
    from: RUNTIME_LEVELS.slice(index)
      .flat()
      .filter((other) => other !== entry)
      .map((other) => `src/runtime/${other}`),
    message: 'A runtime package imports only the packages below its level (RUNTIME_LEVELS in eslint.config.js).',
  })),
).filter((zone) => zone.from.length > 0);

export default defineConfig(
  // test/fixtures holds goldens and generator inputs, outside tsconfig.json;
  // templates/ is Handlebars.
  globalIgnores(['dist/', 'templates/', 'test/fixtures/']),
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // A promise wrapper forwards what it was handed (an AbortSignal's reason, a caught error) as it
      // is, as `throw` may (only-throw-error's default); a literal or a plain object is still refused.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // typescript is loaded with `import ts = require('typescript')`: as an ES import, Node first
      // scans its 9 MB CommonJS file for module syntax (~0.25 s of every generator run).
      '@typescript-eslint/no-require-imports': ['error', { allow: ['^typescript$'] }],
      // `const { dropped, ...rest } = object` is how a field is left out of a copy; `_name` marks a
      // parameter a signature needs, or a loop variable a loop needs, that the body does not use.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'local/no-import-cycle': 'error' },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Imports name the compiled .js; the resolver finds the .ts beside it.
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { basePath: import.meta.dirname, zones: [...layerZones, ...commandZones, runtimeZone, ...runtimePackageZones] },
      ],
    },
  },
  {
    // Tests match generated YAML and TypeScript by its indentation: a regex
    // that quotes the output verbatim (/^  to: RouteSpecTo;$/m) reads as the
    // text it checks, where ' {2}' would not.
    //
    // Test doubles implement async interfaces (reconcile, mappers, clients) with bodies that need no
    // await: `async` is what makes their throw a rejection, as the real thing's would be.
    files: ['test/**/*.ts'],
    rules: { 'no-regex-spaces': 'off', '@typescript-eslint/require-await': 'off' },
  },
  {
    // These tests break a valid fixture bundle one field at a time (csv.spec.installModes = 7,
    // owned[0].version = 'v9'): the edit callbacks take the parsed YAML as `any`, since a type
    // that allowed every breakage would be `any` by another name, and typing each fixture would
    // only restate the fixture files.
    files: [
      'test/unit/broken-bundles.ts',
      'test/unit/bundle-validate.test.ts',
      'test/unit/bad-input-bundle.test.ts',
      'test/unit/bad-input-boundary.test.ts',
    ],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // This file is JavaScript, outside tsconfig.json: lint it without types.
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
