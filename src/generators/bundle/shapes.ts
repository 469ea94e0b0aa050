/**
 * The shape checks `generate bundle` runs before filling the CSV: every
 * field the filler reads must have the type it reads it as. The API server
 * would reject these objects anyway; catching them here turns a crash deep
 * in the filler (`containers: 7`, `spec.install: 5`) into one line naming
 * the field.
 */
import { UsageError } from '../../errors.js';
import type { CollectedManifests, ManifestObject } from './input-objects.js';

type Expected = 'object' | 'array' | 'string';

/** What a field that passed its check holds. */
interface Checked {
  object: Record<string, unknown>;
  array: unknown[];
  string: string;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `${typeof value} ${JSON.stringify(value)?.slice(0, 40)}`;
}

function matches<E extends Expected>(value: unknown, expected: E): value is Checked[E] {
  if (expected === 'array') return Array.isArray(value);
  if (expected === 'object') return value !== null && typeof value === 'object' && !Array.isArray(value);
  return typeof value === 'string';
}

const WORDS: Record<Expected, string> = { object: 'a map', array: 'a list', string: 'a string' };

/**
 * Checks one optional field (absent or null is fine) and returns it. `owner`
 * names the object in the message, `path` the field, `fix` what to do.
 */
function field<E extends Expected>(
  value: unknown,
  expected: E,
  owner: string,
  path: string,
  fix: string,
): Checked[E] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!matches(value, expected))
    throw new UsageError(`${path} of ${owner} is ${typeOf(value)}, not ${WORDS[expected]}`, fix);
  return value;
}

/** Like {@link field}, but the field must be there. */
function required<E extends Expected>(
  value: unknown,
  expected: E,
  owner: string,
  path: string,
  fix: string,
): Checked[E] {
  if (value === undefined || value === null) throw new UsageError(`${path} of ${owner} is missing`, fix);
  return field(value, expected, owner, path, fix)!;
}

/** Checks a list field whose items must all be maps; returns the items. */
function mapList(value: unknown, owner: string, path: string, fix: string): Record<string, unknown>[] {
  const list = field(value, 'array', owner, path, fix) ?? [];
  list.forEach((item, index) => required(item, 'object', owner, `${path}[${index}]`, fix));
  return list as Record<string, unknown>[];
}

/** The fields of the base CSV the filler reads. `source` is where the base came from. */
export function checkBaseCsvShape(csv: Record<string, unknown>, source: string): void {
  const owner = `the base CSV ${source}`;
  const fix = 'fix it, or regenerate it with `ts-operator-sdk generate kustomize manifests`';
  const metadata = field(csv['metadata'], 'object', owner, 'metadata', fix);
  field(metadata?.['annotations'], 'object', owner, 'metadata.annotations', fix);
  const spec = field(csv['spec'], 'object', owner, 'spec', fix);
  if (!spec) return;
  field(
    spec['version'] === undefined || typeof spec['version'] === 'string' ? undefined : spec['version'],
    'string',
    owner,
    'spec.version',
    fix,
  );
  const install = field(spec['install'], 'object', owner, 'spec.install', fix);
  field(install?.['strategy'], 'string', owner, 'spec.install.strategy', fix);
  const installSpec = field(install?.['spec'], 'object', owner, 'spec.install.spec', fix);
  mapList(installSpec?.['deployments'], owner, 'spec.install.spec.deployments', fix);
  const crds = field(spec['customresourcedefinitions'], 'object', owner, 'spec.customresourcedefinitions', fix);
  mapList(crds?.['owned'], owner, 'spec.customresourcedefinitions.owned', fix);
  for (const [index, image] of mapList(spec['relatedImages'], owner, 'spec.relatedImages', fix).entries()) {
    required(image['image'], 'string', owner, `spec.relatedImages[${index}].image`, fix);
  }
}

/** The fields of the input manifests the filler reads (pod specs, RBAC, CRDs, Services, webhooks). */
export function checkManifestShapes(manifests: CollectedManifests): void {
  const name = (object: ManifestObject): string => `${object.kind} ${object.metadata.name}`;
  const fix = (object: ManifestObject): string =>
    `fix ${name(object)} in the input manifests (the API server would refuse it too)`;
  for (const deployment of manifests.deployments) {
    const owner = name(deployment);
    const spec = field(deployment['spec'], 'object', owner, 'spec', fix(deployment));
    const template = field(spec?.['template'], 'object', owner, 'spec.template', fix(deployment));
    field(template?.['metadata'], 'object', owner, 'spec.template.metadata', fix(deployment));
    const pod = field(template?.['spec'], 'object', owner, 'spec.template.spec', fix(deployment));
    for (const list of ['containers', 'initContainers']) {
      for (const [index, container] of mapList(
        pod?.[list],
        owner,
        `spec.template.spec.${list}`,
        fix(deployment),
      ).entries()) {
        const path = `spec.template.spec.${list}[${index}]`;
        field(container['image'], 'string', owner, `${path}.image`, fix(deployment));
        for (const [envIndex, env] of mapList(container['env'], owner, `${path}.env`, fix(deployment)).entries()) {
          required(env['name'], 'string', owner, `${path}.env[${envIndex}].name`, fix(deployment));
        }
      }
    }
  }
  for (const role of [...manifests.roles, ...manifests.clusterRoles])
    mapList(role['rules'], name(role), 'rules', fix(role));
  for (const binding of [...manifests.roleBindings, ...manifests.clusterRoleBindings]) {
    field(binding['roleRef'], 'object', name(binding), 'roleRef', fix(binding));
    mapList(binding['subjects'], name(binding), 'subjects', fix(binding));
  }
  for (const crd of manifests.crds) {
    const owner = name(crd);
    const crdFix = `fix ${owner}, or regenerate it with \`make manifests\``;
    const spec = field(crd['spec'], 'object', owner, 'spec', crdFix);
    if (!spec) throw new UsageError(`${owner} has no spec`, crdFix);
    const names = field(spec['names'], 'object', owner, 'spec.names', crdFix);
    for (const [path, value] of [
      ['spec.group', spec['group']],
      ['spec.names.plural', names?.['plural']],
      ['spec.names.kind', names?.['kind']],
    ] as const) {
      if (typeof value !== 'string' || value === '') throw new UsageError(`${owner} has no ${path}`, crdFix);
    }
    for (const [index, version] of mapList(spec['versions'], owner, 'spec.versions', crdFix).entries()) {
      required(version['name'], 'string', owner, `spec.versions[${index}].name`, crdFix);
    }
    field(spec['conversion'], 'object', owner, 'spec.conversion', crdFix);
  }
  for (const service of manifests.services) {
    const spec = field(service['spec'], 'object', name(service), 'spec', fix(service));
    field(spec?.['selector'], 'object', name(service), 'spec.selector', fix(service));
    mapList(spec?.['ports'], name(service), 'spec.ports', fix(service));
  }
  for (const { webhook } of manifests.webhooks) {
    required(
      webhook,
      'object',
      'a webhook configuration',
      'webhooks[]',
      'fix the webhook configuration in the input manifests',
    );
    field(
      webhook['clientConfig'],
      'object',
      `webhook ${String(webhook['name'])}`,
      'clientConfig',
      'fix the webhook configuration in the input manifests',
    );
  }
}
