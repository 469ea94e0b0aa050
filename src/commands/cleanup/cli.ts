import type { Command } from 'commander';
import type { CliContext } from '../../cli/context.js';
import { parseBooleanFlag } from '../../cli/flags.js';
import { UsageError } from '../../errors.js';

/**
 * Registers `cleanup <packageName>`: removes an operator installed with
 * `run bundle`, with operator-sdk's flags. --delete-all (the default) turns
 * on --delete-crds and --delete-operator-groups.
 */
export function registerCleanup(program: Command, ctx: CliContext): void {
  program
    .command('cleanup')
    .description('Clean up an Operator deployed with the run command')
    .argument(
      '<packageName>',
      "the operator package name (the bundle's operators.operatorframework.io.bundle.package.v1)",
    )
    .option('--delete-all [bool]', 'enables all delete flags', parseBooleanFlag, true)
    .option('--delete-crds [bool]', 'delete all owned CRDs and all CRs', parseBooleanFlag, false)
    .option('--delete-operator-groups [bool]', 'delete operator groups', parseBooleanFlag, false)
    .option('--kubeconfig <path>', 'path to the kubeconfig file to use for CLI requests')
    .option('-n, --namespace <namespace>', 'if present, namespace scope for this CLI request')
    .option('--timeout <duration>', 'time to wait for the command to complete before failing', '2m')
    .addHelpText(
      'after',
      `
Examples:
  $ ts-operator-sdk cleanup memcached-operator -n operators`,
    )
    .action(
      async (
        packageName: string,
        opts: {
          deleteAll: boolean;
          deleteCrds: boolean;
          deleteOperatorGroups: boolean;
          kubeconfig?: string;
          namespace?: string;
          timeout: string;
        },
      ) => {
        const { KubeSession, parseDuration } = await import('../../cluster/session.js');
        const { cleanupPackage } = await import('../../cluster/bundle-package.js');
        const timeoutMs = parseDuration('--timeout', opts.timeout);
        const session = await KubeSession.connect({ kubeconfig: opts.kubeconfig, timeoutMs });
        const namespace = opts.namespace ?? session.defaultNamespace();
        try {
          const deleted = await cleanupPackage(session, {
            packageName,
            namespace,
            deleteCrds: opts.deleteAll || opts.deleteCrds,
            deleteOperatorGroups: opts.deleteAll || opts.deleteOperatorGroups,
            io: ctx.io,
          });
          if (deleted === 0)
            throw new UsageError(
              `no operator with package ${packageName} found in namespace ${namespace}`,
              "check the package name (the bundle's package annotation) and pass -n with the namespace it was run in",
            );
          ctx.io.progress(`Operator "${packageName}" uninstalled`);
        } catch (err) {
          throw session.failure(err, `cleaning up ${packageName}`);
        } finally {
          await session.close();
        }
      },
    );
}
