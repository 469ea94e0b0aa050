// The SDK lints itself as it makes its users' projects lint theirs
// (templates/init/eslint.config.js.hbs): typescript-eslint's type-checked
// rules, because what matters most in an operator is a promise nobody awaits
// (a write that may never happen, or an error nobody sees). Formatting is
// Prettier's job (`npm run format`), so no rule here is about layout.
// @ts-check
import eslint from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

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
    },
  },
  {
    // Tests match generated YAML and TypeScript by its indentation: a regex
    // that quotes the output verbatim (/^  to: RouteSpecTo;$/m) reads as the
    // text it checks, where ' {2}' would not.
    files: ['test/**/*.ts'],
    rules: { 'no-regex-spaces': 'off' },
  },
  {
    // This file is JavaScript, outside tsconfig.json: lint it without types.
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
