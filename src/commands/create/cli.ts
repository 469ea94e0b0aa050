import type { Command } from 'commander';
import { commandGroup } from '../../cli/command-group.js';
import type { CliContext } from '../../cli/context.js';
import { parseBooleanFlag } from '../../cli/flags.js';
// Type only: erased, so the command's modules still load on use.
import type { CreateApiFlags } from './api-scaffold.js';

/** The `create` command group; `create api` and `create webhook` register on it. */
export function createCommand(program: Command): Command {
  return commandGroup(program, 'create', 'Scaffold a Kubernetes API or webhook', (create) =>
    create.addHelpText(
      'after',
      `
Examples:
  $ ts-operator-sdk create api --group cache --version v1 --kind Memcached
  $ ts-operator-sdk create webhook --group cache --version v1 --kind Memcached --defaulting --programmatic-validation`,
    ),
  );
}

/** Registers `create api` on the `create` group. */
export function registerCreateApi(program: Command, ctx: CliContext): void {
  createCommand(program)
    .command('api')
    .description('Scaffold a Kubernetes API: its types, a controller, samples and RBAC helpers')
    .option('--group <group>', 'resource group (empty: the API group is the domain itself)', '')
    .option('--version <version>', 'resource version, e.g. v1 or v1alpha1')
    .option('--kind <kind>', 'resource kind, PascalCase, e.g. Memcached')
    .option('--plural <plural>', 'resource plural, for kinds whose plural is irregular')
    .option('--resource [bool]', 'scaffold the types (asked on a terminal when left out)', parseBooleanFlag)
    .option('--controller [bool]', 'scaffold the controller (asked on a terminal when left out)', parseBooleanFlag)
    .option('--namespaced [bool]', 'resource is namespaced (false: cluster-scoped)', parseBooleanFlag, true)
    .option('--force', "overwrite this API's scaffold files if they exist", false)
    .option('--dry-run', 'print the files that would be created or updated, write nothing', false)
    .option(
      '--external-api-path <dir>',
      'a kind another project owns: the project directory of its TypeScript types (no CRD is scaffolded)',
    )
    .option('--external-api-domain <domain>', "the external kind's domain: its API group is <group>.<domain>")
    .option('--from-crd <file>', "with --external-api-path: generate the kind's types from this CRD file")
    .option(
      '--from-cluster <crd-name>',
      "with --external-api-path: generate the kind's types from this CRD in the kubeconfig's cluster",
    )
    .option('--timeout <duration>', 'with --from-cluster: time to wait for the cluster before failing (default 30s)')
    .addHelpText(
      'after',
      `
Examples:
  # Create a Memcached API with group cache and version v1
  $ ts-operator-sdk create api --group cache --version v1 --kind Memcached

  # A cluster-scoped API with an irregular plural
  $ ts-operator-sdk create api --group ops --version v1alpha1 --kind Cactus --plural cacti --namespaced=false

  # No group: the API group is the domain (e.g. quay.io/v1alpha1)
  $ ts-operator-sdk create api --version v1alpha1 --kind Podroute

  # Only the controller, for types that already exist
  $ ts-operator-sdk create api --group cache --version v1 --kind Memcached --resource=false --controller

  # A kind you don't own (OpenShift's Route): types generated from its CRD, and a controller
  $ ts-operator-sdk create api --group route --version v1 --kind Route --external-api-path apis/external/route/v1 --external-api-domain openshift.io --from-crd route-crd.yaml`,
    )
    .action(async (flags: CreateApiFlags) => {
      // Loaded on use: only the command that runs pays for its templates and modules.
      const { createApi } = await import('./api.js');
      await createApi({ directory: ctx.cwd, interactive: ctx.interactive, ...flags }, ctx.io);
    });
}

/** Parses `--spoke v1alpha1,v1beta1` (repeatable) into a list. */
function collectVersions(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').map((item) => item.trim())];
}

/** Registers `create webhook` on the `create` group. */
export function registerCreateWebhook(program: Command, ctx: CliContext): void {
  createCommand(program)
    .command('webhook')
    .description('Scaffold a webhook for an API: defaulting, validation and/or conversion')
    .option('--group <group>', 'resource group (empty: the API group is the domain itself)', '')
    .option('--version <version>', 'resource version, e.g. v1; for --conversion, the hub (storage) version')
    .option('--kind <kind>', 'resource kind, PascalCase, e.g. Memcached')
    .option('--defaulting', 'scaffold a defaulting (mutating) webhook', false)
    .option('--programmatic-validation', 'scaffold a validating webhook', false)
    .option('--conversion', 'scaffold a conversion webhook, with --version as the hub', false)
    .option(
      '--spoke <versions>',
      'for --conversion: the versions that convert to and from the hub (comma-separated or repeated)',
      collectVersions,
    )
    .option('--force', "scaffold this kind's webhook files again, overwriting them", false)
    .option('--dry-run', 'print the files that would be created or updated, write nothing', false)
    .addHelpText(
      'after',
      `
Examples:
  # Defaulting and validating webhooks for Memcached v1
  $ ts-operator-sdk create webhook --group cache --version v1 --kind Memcached --defaulting --programmatic-validation

  # A conversion webhook: v1 is the hub (storage version), v1alpha1 a spoke
  $ ts-operator-sdk create webhook --group cache --version v1 --kind Memcached --conversion --spoke v1alpha1

Then run \`make manifests\` to write config/webhook/manifests.yaml from the webhook markers.`,
    )
    .action(
      async (opts: {
        group: string;
        version?: string;
        kind?: string;
        defaulting: boolean;
        programmaticValidation: boolean;
        conversion: boolean;
        spoke?: string[];
        force: boolean;
        dryRun: boolean;
      }) => {
        const { createWebhook } = await import('./webhook.js');
        await createWebhook({ directory: ctx.cwd, ...opts }, ctx.io);
      },
    );
}
