import type { Command } from 'commander';
import { commandGroup } from '../../cli/command-group.js';
import type { CliContext } from '../../cli/context.js';

interface RunFlags {
  kubeconfig?: string;
  namespace?: string;
  timeout: string;
  indexImage?: string;
  installMode?: string;
  serviceAccount?: string;
  imagePullPolicy: string;
  securityContextConfig: string;
  skipTlsVerify?: boolean;
  skipTls?: boolean;
  useHttp?: boolean;
}

/** The flags both run commands share, with operator-sdk's names and defaults. */
function commonFlags(command: Command): Command {
  return command
    .option('--kubeconfig <path>', 'path to the kubeconfig file to use for CLI requests')
    .option('-n, --namespace <namespace>', 'if present, namespace scope for this CLI request')
    .option('--timeout <duration>', 'duration to wait for the command to complete before failing', '2m')
    .option(
      '--service-account <name>',
      'service account name to bind registry objects to; if unset, the default service account is used',
    )
    .option(
      '--image-pull-policy <policy>',
      'image pull policy for the registry pod (Always, IfNotPresent, Never)',
      'Always',
    )
    .option(
      '--security-context-config <config>',
      'security context of the registry pod: legacy or restricted',
      'legacy',
    )
    .option('--skip-tls-verify', 'skip TLS certificate verification when pulling the bundle image')
    .option('--skip-tls', 'pull the bundle image over plain HTTP (deprecated alias of --use-http)')
    .option('--use-http', 'pull the bundle image over plain HTTP (loopback registries always are)');
}

async function options(bundleImage: string, opts: RunFlags, ctx: CliContext) {
  const { parseDuration } = await import('../../cluster/session.js');
  const { DEFAULT_INDEX_IMAGE } = await import('./run-bundle.js');
  return {
    bundleImage,
    kubeconfig: opts.kubeconfig,
    namespace: opts.namespace,
    timeoutMs: parseDuration('--timeout', opts.timeout),
    indexImage: opts.indexImage ?? DEFAULT_INDEX_IMAGE,
    installMode: opts.installMode,
    serviceAccount: opts.serviceAccount,
    imagePullPolicy: opts.imagePullPolicy,
    securityContextConfig: opts.securityContextConfig,
    skipTlsVerify: opts.skipTlsVerify === true,
    useHttp: opts.useHttp === true || opts.skipTls === true,
    io: ctx.io,
  };
}

/**
 * Registers `run bundle` and `run bundle-upgrade`: install an operator bundle
 * image through OLM, as operator-sdk's commands of the same names do.
 */
export function registerRun(program: Command, ctx: CliContext): void {
  const group = commandGroup(program, 'run', 'Run an Operator in a variety of environments');
  commonFlags(
    group
      .command('bundle')
      .description('Deploy an Operator in the bundle format with OLM')
      .argument('<bundle-image>', 'the bundle image, e.g. quay.io/example/memcached-operator-bundle:v0.0.1')
      .option(
        '--index-image <image>',
        'index image in which to inject the bundle (runs `opm serve`)',
        'quay.io/operator-framework/opm:latest',
      )
      .option(
        '--install-mode <mode>',
        'install mode: AllNamespaces, OwnNamespace, SingleNamespace=<ns> or MultiNamespace=<ns1>,<ns2>',
      ),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ ts-operator-sdk run bundle localhost:5000/memcached-operator-bundle:v0.0.1 -n operators`,
    )
    .action(async (bundleImage: string, opts: RunFlags) => {
      const { runBundle } = await import('./run-bundle.js');
      await runBundle(await options(bundleImage, opts, ctx));
    });
  commonFlags(
    group
      .command('bundle-upgrade')
      .description('Upgrade an Operator previously installed in the bundle format with OLM')
      .argument('<bundle-image>', 'the new bundle image'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ ts-operator-sdk run bundle-upgrade localhost:5000/memcached-operator-bundle:v0.0.2 -n operators`,
    )
    .action(async (bundleImage: string, opts: RunFlags) => {
      const { runBundleUpgrade } = await import('./run-bundle.js');
      await runBundleUpgrade(await options(bundleImage, opts, ctx));
    });
}
