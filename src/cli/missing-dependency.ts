/**
 * The one line for a CLI dependency that is not installed. Two places meet
 * one: the launcher (bin/ts-operator-sdk.js), when loading the CLI's bundle
 * fails, and the CLI (main.ts), when a command loads typescript, which the
 * bundle leaves out. This module is its own entry of the bundle
 * (scripts/bundle-cli.js) so the launcher can load it, and only on failure.
 *
 * The CLI's own dependencies are optionalDependencies so an operator image
 * can drop them (`npm ci --omit=optional`). So is @kubernetes/client-node,
 * which the runtime imports only for a kubeconfig that needs it (a legacy
 * auth-provider, a proxy-url) and then names the fix itself. A missing
 * package that is not one of them is a broken install or a bug, and is left
 * to the caller's own report: naming --include=optional would send the user
 * the wrong way.
 */

/**
 * `Error: ... Run npm install --include=optional ...` when `error` is the
 * failure to load one of `optionalDependencies` (the package.json field);
 * otherwise undefined.
 */
export function missingDependencyLine(
  error: unknown,
  optionalDependencies: Readonly<Record<string, string>> | undefined,
): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  // ES modules report ERR_MODULE_NOT_FOUND; require() (typescript is loaded through createRequire) MODULE_NOT_FOUND.
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  // A package, or a file inside one: the message names it either way.
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(String((error as Error).message))?.[1] ?? '';
  const dependency = Object.keys(optionalDependencies ?? {}).find(
    (name) => missing === name || missing.includes(`/node_modules/${name}/`),
  );
  if (dependency === undefined) return undefined;
  return `Error: the ts-operator-sdk CLI needs its optional dependencies, and ${dependency} is not installed (an install with --omit=optional, or on an unsupported Node, leaves them out). Run \`npm install --include=optional\` in the project (an operator image may omit them).`;
}
