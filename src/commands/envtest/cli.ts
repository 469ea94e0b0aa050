import type { Command } from 'commander';
import { commandGroup } from '../../cli/command-group.js';
import type { CliContext } from '../../cli/context.js';
import { UsageError } from '../../errors.js';
import { resolveFlagPath } from '../../paths.js';

/** Where `envtest start` writes its kubeconfig unless told: the project's bin/, which the generated .gitignore already ignores. */
export const DEFAULT_ENVTEST_KUBECONFIG = 'bin/envtest.kubeconfig';

/**
 * Registers `envtest start`: the control plane the generated tests use
 * (etcd + kube-apiserver), run in the foreground for `make run`, so a local
 * cluster needs neither Docker nor kind.
 */
export function registerEnvtest(program: Command, ctx: CliContext): void {
  const group = commandGroup(program, 'envtest', 'Run the envtest control plane (etcd + kube-apiserver) outside tests');
  group
    .command('start')
    .description(
      'Start etcd and kube-apiserver in the foreground, install the CRDs, write a kubeconfig; Ctrl-C stops them',
    )
    .option(
      '--bin-dir <dir>',
      'directory with etcd and kube-apiserver (default: $KUBEBUILDER_ASSETS, else the newest setup-envtest download in ./bin or the user cache)',
    )
    .option('--kubeconfig <path>', 'where to write the admin kubeconfig (removed on stop)', DEFAULT_ENVTEST_KUBECONFIG)
    .option(
      '--crd-dir <dir>',
      'CRD YAML to install; repeatable (default: config/crd/bases when it exists)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--port <port>', 'kube-apiserver port on 127.0.0.1 (default: a free port)')
    .addHelpText(
      'after',
      `
Examples:
  # In a generated project (make envtest-start runs setup-envtest first)
  $ npx ts-operator-sdk envtest start
  # then, in another shell:
  $ export KUBECONFIG="$PWD/bin/envtest.kubeconfig" && make install run`,
    )
    .action(
      async (opts: { binDir?: string; kubeconfig: string; crdDir: string[]; port?: string }, command: Command) => {
        let port: number | undefined;
        if (opts.port !== undefined) {
          port = Number(opts.port);
          if (!/^\d+$/.test(opts.port) || port < 1 || port > 65535)
            throw new UsageError(
              `--port ${opts.port} is not a port number`,
              'pass a number from 1 to 65535, or leave --port out for a free port',
            );
        }
        // Loaded on use, so other commands start fast.
        const { startEnvtest } = await import('./start.js');
        await startEnvtest({
          cwd: ctx.cwd,
          binDir: opts.binDir === undefined ? undefined : resolveFlagPath(ctx.cwd, opts.binDir),
          kubeconfigPath: resolveFlagPath(ctx.cwd, opts.kubeconfig),
          kubeconfigNamed: command.getOptionValueSource('kubeconfig') !== 'default',
          crdDirs: opts.crdDir.map((dir) => resolveFlagPath(ctx.cwd, dir)),
          port,
          io: ctx.io,
        });
      },
    );
}
