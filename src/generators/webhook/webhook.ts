/**
 * controller-gen's webhook generator: `+kubebuilder:webhook:` markers become
 * the MutatingWebhookConfiguration and ValidatingWebhookConfiguration of
 * `config/webhook/manifests.yaml` (admissionregistration.k8s.io/v1).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readLineMarkers, type Marker, type MarkerValue } from '../markers/grammar.js';
import type { ProblemList } from '../problems.js';

/** Where `generate manifests` writes the webhook configurations, as `make manifests` does. */
export const WEBHOOK_MANIFEST_PATH = 'config/webhook/manifests.yaml';

/**
 * Directories searched for webhook markers. kubebuilder scaffolds webhooks in
 * internal/webhook/<version>/ (api/<version>/ with --legacy); apis/ and
 * controllers/ are this SDK's layouts; webhooks/ is a common hand-made one.
 */
export const WEBHOOK_MARKER_DIRS: readonly string[] = ['apis', 'api', 'controllers', 'internal', 'webhooks'];

/** The names controller-gen gives both configurations; kustomize's namePrefix makes them unique per project. */
export const MUTATING_CONFIGURATION_NAME = 'mutating-webhook-configuration';
/** See MUTATING_CONFIGURATION_NAME. */
export const VALIDATING_CONFIGURATION_NAME = 'validating-webhook-configuration';

/** The Service kubebuilder scaffolds in config/webhook/service.yaml; kustomize rewrites name and namespace. */
const DEFAULT_SERVICE = { name: 'webhook-service', namespace: 'system' };

/** admissionregistration.k8s.io/v1 RuleWithOperations. */
export interface WebhookRule {
  apiGroups: string[];
  apiVersions: string[];
  operations: string[];
  resources: string[];
}

/** admissionregistration.k8s.io/v1 WebhookClientConfig: a Service or a URL, never both. */
export interface WebhookClientConfig {
  service?: { name: string; namespace: string; path?: string; port?: number };
  url?: string;
}

/** One webhook of either configuration; reinvocationPolicy exists only on mutating ones. */
export interface AdmissionWebhook {
  name: string;
  admissionReviewVersions: string[];
  clientConfig: WebhookClientConfig;
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy?: 'Exact' | 'Equivalent';
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  rules: WebhookRule[];
  sideEffects: 'None' | 'NoneOnDryRun';
  timeoutSeconds?: number;
}

/** A Mutating- or ValidatingWebhookConfiguration as written to the manifest. */
export interface WebhookConfiguration {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
  metadata: { name: string };
  webhooks: AdmissionWebhook[];
}

/**
 * Finds every `+kubebuilder:webhook` marker in one source file (in `//` or
 * JSDoc comments). Malformed markers are reported with file:line.
 */
export function readWebhookMarkers(text: string, displayFile: string, problems: ProblemList): Marker[] {
  return readLineMarkers(text, 'kubebuilder:webhook', displayFile, (line, message) =>
    problems.add(displayFile, line, message),
  );
}

/**
 * Reads the webhook markers of every .ts file under WEBHOOK_MARKER_DIRS of
 * the project, in a stable order (directory list, then path).
 */
export function readProjectWebhookMarkers(projectDir: string, problems: ProblemList): Marker[] {
  const markers: Marker[] = [];
  for (const dir of WEBHOOK_MARKER_DIRS) {
    const abs = path.join(projectDir, dir);
    if (!existsSync(abs)) continue;
    const files = readdirSync(abs, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !e.name.endsWith('.test.ts'))
      .map((e) => path.join(e.parentPath, e.name))
      .sort();
    for (const file of files) {
      const display = path.relative(projectDir, file).split(path.sep).join('/');
      markers.push(...readWebhookMarkers(readFileSync(file, 'utf8'), display, problems));
    }
  }
  return markers;
}

/**
 * Builds the configurations from the markers: a MutatingWebhookConfiguration
 * if any marker has mutating=true, then a ValidatingWebhookConfiguration if
 * any has mutating=false, each with its webhooks sorted by name. Returns an
 * empty list when there are no markers, so no manifest is written. Every
 * invalid argument is reported to `problems` with the marker's file:line.
 */
export function buildWebhookConfigurations(markers: readonly Marker[], problems: ProblemList): WebhookConfiguration[] {
  const mutating: Array<{ webhook: AdmissionWebhook; marker: Marker }> = [];
  const validating: Array<{ webhook: AdmissionWebhook; marker: Marker }> = [];
  for (const marker of markers) {
    const built = toWebhook(marker, problems);
    if (built) (built.mutating ? mutating : validating).push({ webhook: built.webhook, marker });
  }
  const configurations: WebhookConfiguration[] = [];
  if (mutating.length > 0)
    configurations.push(configuration('MutatingWebhookConfiguration', MUTATING_CONFIGURATION_NAME, mutating, problems));
  if (validating.length > 0)
    configurations.push(
      configuration('ValidatingWebhookConfiguration', VALIDATING_CONFIGURATION_NAME, validating, problems),
    );
  return configurations;
}

function configuration(
  kind: WebhookConfiguration['kind'],
  name: string,
  entries: Array<{ webhook: AdmissionWebhook; marker: Marker }>,
  problems: ProblemList,
): WebhookConfiguration {
  // The API server rejects a configuration whose webhooks share a name, so catch it here with the marker's location.
  const firstByName = new Map<string, Marker>();
  for (const { webhook, marker } of entries) {
    const first = firstByName.get(webhook.name);
    if (first) {
      problems.add(
        marker.file,
        marker.line,
        `${marker.source}: the ${kind} already has a webhook named ${webhook.name} (${first.file}:${first.line}): give each webhook a unique name=`,
      );
    } else firstByName.set(webhook.name, marker);
  }
  // Stable sort: the manifest does not change when markers move between files.
  const webhooks = entries.map((e) => e.webhook).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks };
}

const OPERATIONS: Readonly<Record<string, string>> = {
  create: 'CREATE',
  update: 'UPDATE',
  delete: 'DELETE',
  connect: 'CONNECT',
  '*': '*',
};
const FAILURE_POLICIES: Readonly<Record<string, AdmissionWebhook['failurePolicy']>> = {
  fail: 'Fail',
  ignore: 'Ignore',
};
const MATCH_POLICIES: Readonly<Record<string, NonNullable<AdmissionWebhook['matchPolicy']>>> = {
  exact: 'Exact',
  equivalent: 'Equivalent',
};
const SIDE_EFFECTS: Readonly<Record<string, AdmissionWebhook['sideEffects']>> = {
  none: 'None',
  noneondryrun: 'NoneOnDryRun',
};
const REINVOCATION_POLICIES: Readonly<Record<string, NonNullable<AdmissionWebhook['reinvocationPolicy']>>> = {
  never: 'Never',
  ifneeded: 'IfNeeded',
};
/** AdmissionReview versions the API server can send; a webhook must accept at least one. */
const KNOWN_REVIEW_VERSIONS = ['v1', 'v1beta1'];
/** A fully qualified name: a DNS-1123 subdomain of at least three labels (the API server's rule for webhook names). */
const QUALIFIED_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?){2,}$/;

const texts = (value: MarkerValue | undefined): string[] | undefined =>
  Array.isArray(value) ? value.map((r) => r.text) : undefined;
const text = (value: MarkerValue | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

/** Converts one marker; undefined (with problems recorded) when any argument is invalid. */
function toWebhook(
  marker: Marker,
  problems: ProblemList,
): { mutating: boolean; webhook: AdmissionWebhook } | undefined {
  const args = marker.args;
  const errors: string[] = [];
  const fail = (message: string): undefined => {
    errors.push(message);
    return undefined;
  };

  const missing = [
    'mutating',
    'name',
    'sideEffects',
    'admissionReviewVersions',
    'groups',
    'resources',
    'verbs',
    'versions',
  ].filter((k) => args[k] === undefined);
  if (args['path'] === undefined && args['url'] === undefined) missing.unshift('path');
  if (missing.length > 0)
    fail(
      `missing ${missing.map((k) => `${k}=`).join(', ')}: controller-gen needs them, e.g. +kubebuilder:webhook:path=/mutate-cache-example-com-v1-memcached,mutating=true,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1,name=mmemcached-v1.kb.io,admissionReviewVersions=v1`,
    );
  const mutating = args['mutating'] === true;

  const name = text(args['name']);
  if (name !== undefined && !QUALIFIED_NAME.test(name))
    fail(
      `name=${name} is not a fully qualified name: use lower-case DNS labels with at least three segments, like mmemcached-v1.kb.io`,
    );

  const failurePolicyRaw = text(args['failurePolicy']);
  const failurePolicy = failurePolicyRaw === undefined ? 'Fail' : FAILURE_POLICIES[failurePolicyRaw.toLowerCase()];
  if (!failurePolicy) fail(`failurePolicy=${failurePolicyRaw} is not valid: use fail or ignore`);

  const sideEffectsRaw = text(args['sideEffects']);
  const sideEffects = sideEffectsRaw === undefined ? undefined : SIDE_EFFECTS[sideEffectsRaw.toLowerCase()];
  if (sideEffectsRaw !== undefined && !sideEffects) {
    fail(
      `sideEffects=${sideEffectsRaw} is not valid for admissionregistration.k8s.io/v1: use None, or NoneOnDryRun if the webhook skips its side effects on dry runs`,
    );
  }

  const matchPolicyRaw = text(args['matchPolicy']);
  const matchPolicy = matchPolicyRaw === undefined ? undefined : MATCH_POLICIES[matchPolicyRaw.toLowerCase()];
  if (matchPolicyRaw !== undefined && !matchPolicy)
    fail(`matchPolicy=${matchPolicyRaw} is not valid: use Exact or Equivalent`);

  const reinvocationRaw = text(args['reinvocationPolicy']);
  const reinvocationPolicy =
    reinvocationRaw === undefined ? undefined : REINVOCATION_POLICIES[reinvocationRaw.toLowerCase()];
  if (reinvocationRaw !== undefined && !reinvocationPolicy)
    fail(`reinvocationPolicy=${reinvocationRaw} is not valid: use Never or IfNeeded`);
  if (reinvocationRaw !== undefined && args['mutating'] === false)
    fail('reinvocationPolicy= applies only to mutating webhooks: remove it or set mutating=true');

  const timeoutSeconds = args['timeoutSeconds'] as number | undefined;
  if (timeoutSeconds !== undefined && (timeoutSeconds < 1 || timeoutSeconds > 30))
    fail(`timeoutSeconds=${timeoutSeconds} is out of range: the API server accepts 1 to 30`);

  const verbs = texts(args['verbs']) ?? [];
  const operations = verbs.map(
    (verb) =>
      OPERATIONS[verb.toLowerCase()] ??
      fail(`verbs= has "${verb}", which is not an admission operation: use create, update, delete, connect or *`),
  );
  if (args['verbs'] !== undefined && verbs.length === 0)
    fail('verbs= is empty: list the operations, e.g. verbs=create;update');

  const groups = (texts(args['groups']) ?? []).map((g) => (g === 'core' ? '' : g));
  const resources = texts(args['resources']) ?? [];
  const versions = texts(args['versions']) ?? [];
  if (args['resources'] !== undefined && resources.length === 0)
    fail('resources= is empty: name the plural resource, e.g. resources=memcacheds');
  if (args['versions'] !== undefined && versions.length === 0)
    fail('versions= is empty: name the API versions, e.g. versions=v1');

  const reviewVersions = texts(args['admissionReviewVersions']);
  if (reviewVersions !== undefined && !reviewVersions.some((v) => KNOWN_REVIEW_VERSIONS.includes(v))) {
    fail(`admissionReviewVersions=${reviewVersions.join(';')} has no version the API server sends: include v1`);
  }

  const webhookVersions = texts(args['webhookVersions']);
  const unsupported = webhookVersions?.filter((v) => v !== 'v1') ?? [];
  if (unsupported.length > 0)
    fail(
      `webhookVersions=${webhookVersions!.join(';')} is not supported: admissionregistration.k8s.io/v1 is the only version served, write webhookVersions=v1 or leave it out`,
    );

  const clientConfig = toClientConfig(marker, fail);

  if (errors.length > 0) {
    for (const message of errors) problems.add(marker.file, marker.line, `${marker.source}: ${message}`);
    return undefined;
  }
  const webhook: AdmissionWebhook = {
    name: name!,
    admissionReviewVersions: reviewVersions!,
    clientConfig: clientConfig!,
    failurePolicy: failurePolicy!,
    matchPolicy,
    reinvocationPolicy,
    rules: [{ apiGroups: groups, apiVersions: versions, operations: operations as string[], resources }],
    sideEffects: sideEffects!,
    timeoutSeconds,
  };
  return { mutating, webhook };
}

/** A Service reference (kubebuilder's default) or, with url=, a URL; url cannot be combined with the Service arguments. */
function toClientConfig(marker: Marker, fail: (message: string) => undefined): WebhookClientConfig | undefined {
  const args = marker.args;
  const url = text(args['url']);
  const webhookPath = text(args['path']);
  const servicePort = args['servicePort'] as number | undefined;
  if (url !== undefined) {
    const serviceArgs = ['path', 'serviceName', 'serviceNamespace', 'servicePort'].filter((k) => args[k] !== undefined);
    if (serviceArgs.length > 0)
      return fail(
        `url= cannot be combined with ${serviceArgs.map((k) => `${k}=`).join(', ')}: the API server calls either a URL or a Service; put the path into the URL or drop url=`,
      );
    if (!/^https:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(url))
      return fail(
        `url=${url} is not valid: the API server only calls https://host[:port]/path URLs without query or fragment`,
      );
    return { url };
  }
  if (webhookPath === undefined) return undefined;
  if (!webhookPath.startsWith('/'))
    return fail(`path=${webhookPath} must start with /, like /mutate-cache-example-com-v1-memcached`);
  if (servicePort !== undefined && (servicePort < 1 || servicePort > 65535))
    return fail(`servicePort=${servicePort} is not a port: use 1 to 65535`);
  return {
    service: {
      name: text(args['serviceName']) ?? DEFAULT_SERVICE.name,
      namespace: text(args['serviceNamespace']) ?? DEFAULT_SERVICE.namespace,
      path: webhookPath,
      port: servicePort,
    },
  };
}
