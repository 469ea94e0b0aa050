import type { Command } from 'commander';
import { commandGroup } from '../../cli/command-group.js';
import type { CliContext } from '../../cli/context.js';

interface OlmFlags {
  kubeconfig?: string;
  version?: string;
  timeout: string;
  olmNamespace?: string;
}

/**
 * Registers `olm install`, `olm status` and `olm uninstall` with
 * operator-sdk's flags: OLM v0 from its release manifests.
 */
export function registerOlm(program: Command, ctx: CliContext): void {
  const group = commandGroup(program, 'olm', 'Manage the Operator Lifecycle Manager installation in your cluster');
  const run = async (which: 'install' | 'status' | 'uninstall', opts: OlmFlags): Promise<void> => {
    const { parseDuration } = await import('../../cluster/session.js');
    const install = await import('./install.js');
    const options = {
      kubeconfig: opts.kubeconfig,
      version: opts.version,
      timeoutMs: parseDuration('--timeout', opts.timeout),
      olmNamespace: opts.olmNamespace ?? install.DEFAULT_OLM_NAMESPACE,
      io: ctx.io,
    };
    if (which === 'install') await install.olmInstall(options);
    else if (which === 'status') await install.olmStatus(options);
    else await install.olmUninstall(options);
  };
  group
    .command('install')
    .description('Install Operator Lifecycle Manager in your cluster')
    .option(
      '--version <version>',
      'version of OLM resources to install (a release such as 0.28.0, or latest)',
      '0.28.0',
    )
    .option('--timeout <duration>', 'time to wait for the command to complete before failing', '2m')
    .option('--kubeconfig <path>', 'path to the kubeconfig file to use for CLI requests')
    .action((opts: OlmFlags) => run('install', opts));
  group
    .command('status')
    .description('Get the status of the Operator Lifecycle Manager installation in your cluster')
    .option('--olm-namespace <namespace>', 'namespace where OLM is installed', 'olm')
    .option('--version <version>', 'version of OLM installed on cluster; if unset, it is detected')
    .option('--timeout <duration>', 'time to wait for the command to complete before failing', '2m')
    .option('--kubeconfig <path>', 'path to the kubeconfig file to use for CLI requests')
    .action((opts: OlmFlags) => run('status', opts));
  group
    .command('uninstall')
    .description('Uninstall Operator Lifecycle Manager from your cluster')
    .option('--olm-namespace <namespace>', 'namespace from where OLM is to be uninstalled', 'olm')
    .option('--version <version>', 'version of OLM resources to uninstall; if unset, it is detected')
    .option('--timeout <duration>', 'time to wait for the command to complete before failing', '2m')
    .option('--kubeconfig <path>', 'path to the kubeconfig file to use for CLI requests')
    .action((opts: OlmFlags) => run('uninstall', opts));
}
