import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import { resolveFlagPath } from '../../paths.js';
import type { CliContext } from '../../cli/context.js';
import { shellQuote } from '../../cli/shell.js';

/** Overrides the index URL when --index-url is not given, so a Makefile target can be pointed at a mirror without editing it. */
export const ENVTEST_INDEX_URL_VARIABLE = 'TS_OPERATOR_SDK_ENVTEST_INDEX_URL';
/** What `-p` prints: the directory alone (for `$(...)`), or a shell line that exports it. */
const PRINT_MODES = ['path', 'env'] as const;
type PrintMode = (typeof PRINT_MODES)[number];

/**
 * Registers `setup-envtest`: controller-runtime's setup-envtest for users who
 * have no Go. It downloads the official envtest release archive (etcd,
 * kube-apiserver, kubectl) into a cache and prints the directory to use as
 * KUBEBUILDER_ASSETS.
 */
export function registerSetupEnvtest(program: Command, ctx: CliContext): void {
  program
    .command('setup-envtest')
    .description('Download the envtest binaries (etcd, kube-apiserver, kubectl) and print their directory')
    .argument(
      '[version]',
      "Kubernetes version: latest, 1.36, 1.36.x or 1.36.3 (`use <version>`, Go setup-envtest's form, works too)",
      'latest',
    )
    // The generated Makefile (and Go habit) spell it `setup-envtest use <version>`.
    .argument('[use-version]')
    .option('--bin-dir <dir>', 'cache directory (default: $XDG_DATA_HOME/ts-operator-sdk/envtest)')
    .option(
      '--index-url <url>',
      `the envtest-releases.yaml index to read (default: $${ENVTEST_INDEX_URL_VARIABLE}, else controller-tools' published index)`,
    )
    .option('--os <os>', "Go-style OS of the binaries (default: this machine's)")
    .option('--arch <arch>', "Go-style architecture of the binaries (default: this machine's)")
    // Go's setup-envtest defaults to a human overview; ours prints the path by default, so `-p path` is what Makefiles copied from kubebuilder ask for.
    .option(
      '-p, --print <mode>',
      'what to print: path (the directory) or env (an `export KUBEBUILDER_ASSETS=...` line)',
      'path',
    )
    .addHelpText(
      'after',
      `
Examples:
  # Newest release; use the printed directory as KUBEBUILDER_ASSETS
  $ export KUBEBUILDER_ASSETS=$(ts-operator-sdk setup-envtest)

  # A given minor version, into a project-local directory
  $ ts-operator-sdk setup-envtest 1.36.x --bin-dir ./bin/k8s

  # Kubebuilder's Makefile form
  $ KUBEBUILDER_ASSETS="$(ts-operator-sdk setup-envtest use 1.36.3 --bin-dir ./bin -p path)" npm test`,
    )
    .action(
      async (
        first: string,
        second: string | undefined,
        opts: { binDir?: string; indexUrl?: string; os?: string; arch?: string; print: string },
      ) => {
        if (second !== undefined && first !== 'use')
          throw new UsageError(
            `unexpected argument "${second}" after version "${first}"`,
            'pass one version, e.g. `ts-operator-sdk setup-envtest 1.36.x`',
          );
        if (!(PRINT_MODES as readonly string[]).includes(opts.print))
          throw new UsageError(`-p ${opts.print} is not a print mode`, `use ${PRINT_MODES.join(' or ')}`);
        const print = opts.print as PrintMode;
        const indexUrl = opts.indexUrl ?? (process.env[ENVTEST_INDEX_URL_VARIABLE] || undefined);
        const version = first === 'use' ? (second ?? 'latest') : first;
        const binDir = opts.binDir === undefined ? undefined : resolveFlagPath(ctx.cwd, opts.binDir);
        if (binDir !== undefined && statSync(binDir, { throwIfNoEntry: false })?.isDirectory() === false) {
          throw new UsageError(
            `--bin-dir ${opts.binDir} is not a directory`,
            'pass a directory for the envtest binaries, e.g. --bin-dir ./bin/k8s',
          );
        }
        // Loaded on use, so other commands start fast.
        const { setupEnvtestAssets } = await import('../../runtime/envtest/setup-envtest.js');
        let dir: string;
        try {
          dir = await setupEnvtestAssets({
            version,
            cacheDir: binDir,
            indexUrl,
            platform: opts.os,
            arch: opts.arch,
            log: (line) => ctx.io.progress(line),
          });
        } catch (err) {
          if (err instanceof UsageError) throw err;
          // Anything else is the machine's (a cache directory that cannot be written, say), not a bug.
          throw new UsageError(
            err instanceof Error ? err.message : String(err),
            'set KUBEBUILDER_ASSETS to binaries you already have',
            { cause: err },
          );
        }
        // Outside the try: a stdout that cannot be written is the CLI's to report, not a download failure.
        ctx.io.out(print === 'env' ? `export KUBEBUILDER_ASSETS=${shellQuote(dir)}` : dir);
      },
    );
}
