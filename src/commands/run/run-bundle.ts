/**
 * `run bundle` and `run bundle-upgrade`, operator-sdk's file-based catalog
 * path: the bundle image is pulled and rendered into a catalog, the catalog
 * goes into a ConfigMap, a registry pod serves it with `opm serve` from
 * --index-image, a CatalogSource points at the pod, an OperatorGroup (when
 * the namespace has none) sets the install mode, and a Subscription with
 * manual approval installs the CSV, whose InstallPlan we approve. The
 * command waits until the CSV has Succeeded; on any failure it deletes what
 * it created and names what blocked it.
 */
import { createHash } from 'node:crypto';
import type { CommandIO } from '../../cli/io.js';
import { UsageError } from '../../errors.js';
import { pullImageFiles, RegistryError } from '../../oci/registry-client.js';
import { InvalidReferenceError, parseImageReference, type ImageReference } from '../../oci/reference.js';
import { cleanupPackage, OPERATOR_GROUP_NAME, ownedCrdNames, PACKAGE_LABEL } from '../../cluster/bundle-package.js';
import { CommandTimeoutError, formatDuration } from '../../cluster/connection.js';
import { describePod, diagnose } from '../../cluster/diagnosis.js';
import { KubeSession, OLM_V1, OLM_V1ALPHA1, type ClusterObject } from '../../cluster/session.js';
import { csvName, readBundle, supportedInstallModes, type Bundle } from './bundle-image.js';
import { catalogFor, catalogWithUpgrade, parseCatalog, serializeCatalog, type CatalogBlob } from './catalog.js';

/** operator-sdk's default --index-image: the image `opm serve` runs from. */
export const DEFAULT_INDEX_IMAGE = 'quay.io/operator-framework/opm:latest';
/** Where the CatalogSource records --index-image, for bundle-upgrade's registry pod (operator-sdk's annotation). */
const INDEX_IMAGE_ANNOTATION = 'operators.operatorframework.io/index-image';
/** The ConfigMap key (and file) the catalog is stored under. */
const CATALOG_KEY = 'catalog.json';
const GRPC_PORT = 50051;
/** A ConfigMap holds at most 1 MiB. */
const MAX_CATALOG_BYTES = 1024 * 1024 - 16 * 1024;
const SECURITY_CONTEXT_CONFIGS = ['legacy', 'restricted'] as const;
/** Time granted after a failed `run bundle` (its --timeout may be used up) to delete what it created. */
const CLEANUP_BUDGET_MS = 60_000;
/** Time granted after a failed `run bundle-upgrade` to put the previous catalog back. */
const RESTORE_BUDGET_MS = 30_000;
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;

/** What both commands were asked for. */
export interface RunBundleOptions {
  bundleImage: string;
  kubeconfig?: string;
  namespace?: string;
  timeoutMs: number;
  indexImage: string;
  installMode?: string;
  serviceAccount?: string;
  imagePullPolicy: string;
  securityContextConfig: string;
  skipTlsVerify: boolean;
  useHttp: boolean;
  io: CommandIO;
}

/** Checks the flags and the image reference, before any network call. */
function checkInput(options: RunBundleOptions): ImageReference {
  let ref: ImageReference;
  try {
    ref = parseImageReference(options.bundleImage);
  } catch (err) {
    if (err instanceof InvalidReferenceError)
      throw new UsageError(
        `bundle image ${err.message}`,
        'pass the bundle image as <registry>/<repository>:<tag>, e.g. quay.io/example/memcached-operator-bundle:v0.0.1',
      );
    throw err;
  }
  try {
    parseImageReference(options.indexImage);
  } catch (err) {
    throw new UsageError(`--index-image ${(err as Error).message}`, `pass an opm image, e.g. ${DEFAULT_INDEX_IMAGE}`);
  }
  if (!(SECURITY_CONTEXT_CONFIGS as readonly string[]).includes(options.securityContextConfig))
    throw new UsageError(
      `--security-context-config ${options.securityContextConfig} is not a security context config`,
      `use ${SECURITY_CONTEXT_CONFIGS.join(' or ')}`,
    );
  if (!(PULL_POLICIES as readonly string[]).includes(options.imagePullPolicy))
    throw new UsageError(
      `--image-pull-policy ${options.imagePullPolicy} is not a pull policy`,
      `use ${PULL_POLICIES.join(', ')}`,
    );
  if (options.installMode !== undefined) parseInstallMode(options.installMode);
  return ref;
}

/** `AllNamespaces`, `OwnNamespace`, `SingleNamespace=ns`, `MultiNamespace=a,b` → the mode and its target namespaces. */
function parseInstallMode(text: string, namespace = ''): { type: string; targets: string[] } {
  const [type, list] = text.split('=', 2) as [string, string | undefined];
  const targets = (list ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const ok =
    (type === 'AllNamespaces' && list === undefined) ||
    (type === 'OwnNamespace' && list === undefined) ||
    (type === 'SingleNamespace' && targets.length === 1) ||
    (type === 'MultiNamespace' && targets.length > 0);
  if (!ok)
    throw new UsageError(
      `--install-mode ${text} is not an install mode`,
      'use AllNamespaces, OwnNamespace, SingleNamespace=<namespace> or MultiNamespace=<ns1>,<ns2>',
    );
  return { type, targets: type === 'OwnNamespace' ? [namespace] : targets };
}

/** Pulls and reads the bundle image within the command's time; registry failures become one line with a fix. */
async function pullBundle(ref: ImageReference, options: RunBundleOptions, signal: AbortSignal): Promise<Bundle> {
  options.io.progress(`Pulling bundle image ${options.bundleImage}`);
  try {
    return readBundle(
      options.bundleImage,
      await pullImageFiles(ref, { useHttp: options.useHttp, skipTlsVerify: options.skipTlsVerify, signal }),
    );
  } catch (err) {
    if (signal.aborted) {
      const limit =
        signal.reason instanceof CommandTimeoutError ? ` of ${formatDuration(signal.reason.timeoutMs)}` : '';
      throw new UsageError(
        `pulling bundle image ${options.bundleImage} did not finish within the --timeout${limit}`,
        'check that the registry answers, or pass a longer --timeout',
        { cause: err },
      );
    }
    if (err instanceof RegistryError) {
      const fix =
        err.status === 404
          ? 'check the image name and tag, and push the bundle first (make bundle-build bundle-push)'
          : err.status === 401 || err.status === 403
            ? 'make the bundle repository public (only anonymous pulls are supported)'
            : err.status === 0
              ? 'check that the registry is up; pass --use-http for a plain-HTTP registry or --skip-tls-verify for a self-signed one'
              : 'check the registry and the image';
      throw new UsageError(`cannot pull bundle image ${options.bundleImage}: ${err.message}`, fix, { cause: err });
    }
    if (err instanceof UsageError) throw err;
    throw new UsageError(
      `cannot read bundle image ${options.bundleImage}: ${(err as Error).message}`,
      'check that it is a bundle image built with bundle.Dockerfile',
      { cause: err },
    );
  }
}

/** Fails with operator-sdk's advice when the cluster does not serve OLM's kinds. */
async function requireOlm(session: KubeSession): Promise<void> {
  for (const [apiVersion, kind] of [
    [OLM_V1ALPHA1, 'CatalogSource'],
    [OLM_V1ALPHA1, 'Subscription'],
    [OLM_V1, 'OperatorGroup'],
  ] as const) {
    if (!(await session.serves(apiVersion, kind))) {
      throw new UsageError(
        `OLM is not installed in this cluster: it does not serve ${kind} (${apiVersion})`,
        'run `ts-operator-sdk olm install` first',
      );
    }
  }
}

/** Names of the objects for one package. */
function names(packageName: string) {
  const catalog = `${packageName}-catalog`.slice(0, 63).replace(/-+$/, '');
  return { catalog, configMap: `${catalog}-fbc`.slice(0, 253) };
}

/** Runs `run bundle`. */
export async function runBundle(options: RunBundleOptions): Promise<void> {
  const ref = checkInput(options);
  const session = await KubeSession.connect(options);
  const namespace = options.namespace ?? session.defaultNamespace();
  const { io } = options;
  let bundle: Bundle | undefined;
  let createdOperatorGroup = false;
  const preexistingCrds = new Set<string>();
  let started = false;
  try {
    await requireOlm(session);
    bundle = await pullBundle(ref, options, session.signal);
    const { catalog: catalogName, configMap } = names(bundle.packageName);
    if (await session.get(OLM_V1ALPHA1, 'CatalogSource', catalogName, namespace)) {
      throw new UsageError(
        `package ${bundle.packageName} is already run in namespace ${namespace} (CatalogSource ${catalogName} exists)`,
        `run \`ts-operator-sdk run bundle-upgrade\` with a newer bundle, or \`ts-operator-sdk cleanup ${bundle.packageName} -n ${namespace}\` first`,
      );
    }
    const groups = await session.list(OLM_V1, 'OperatorGroup', namespace);
    const mode = chooseInstallMode(bundle, options.installMode, namespace, groups);
    for (const name of ownedCrdNames(bundle.csv))
      if (await session.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name)) preexistingCrds.add(name);
    started = true;

    const labels = { [PACKAGE_LABEL]: bundle.packageName };
    const catalogText = serializeCatalog(catalogFor(bundle));
    await createCatalog(session, options, namespace, catalogName, configMap, catalogText, labels);
    if (mode) {
      await session.create({
        apiVersion: OLM_V1,
        kind: 'OperatorGroup',
        metadata: { name: OPERATOR_GROUP_NAME, namespace, labels },
        spec: mode.type === 'AllNamespaces' ? {} : { targetNamespaces: mode.targets },
      });
      createdOperatorGroup = true;
      io.progress(`Created OperatorGroup ${OPERATOR_GROUP_NAME} (install mode ${mode.type})`);
    }
    const channel = bundle.defaultChannel ?? bundle.channels[0]!;
    const subscription =
      `${bundle.packageName}-v${String(bundle.csv.spec?.version ?? '').replace(/[^a-z0-9]+/gi, '-')}-sub`
        .toLowerCase()
        .slice(0, 63)
        .replace(/-+$/, '');
    await session.create({
      apiVersion: OLM_V1ALPHA1,
      kind: 'Subscription',
      metadata: { name: subscription, namespace, labels },
      spec: {
        name: bundle.packageName,
        channel,
        source: catalogName,
        sourceNamespace: namespace,
        startingCSV: csvName(bundle),
        installPlanApproval: 'Manual',
      },
    });
    io.progress(`Created Subscription ${subscription}`);
    await waitForCsv(session, namespace, csvName(bundle), catalogName, options);
    io.progress(`OLM has successfully installed "${csvName(bundle)}"`);
  } catch (err) {
    if (started && bundle) {
      io.progress(`run bundle failed; deleting what it created in namespace ${namespace}`);
      session.overtime(CLEANUP_BUDGET_MS);
      await cleanupPackage(session, {
        packageName: bundle.packageName,
        namespace,
        deleteCrds: true,
        keepCrds: preexistingCrds,
        deleteOperatorGroups: createdOperatorGroup,
        io,
      }).catch((cleanupErr: unknown) =>
        io.progress(
          `cleanup failed too: ${(session.failure(cleanupErr, 'deleting what it created') as Error).message.split('\n')[0]}`,
        ),
      );
    }
    throw session.failure(err, 'running the bundle');
  } finally {
    await session.close();
  }
}

/** Runs `run bundle-upgrade`: the new bundle joins the package's catalog as the upgrade of the installed CSV. */
export async function runBundleUpgrade(options: RunBundleOptions): Promise<void> {
  const ref = checkInput(options);
  const session = await KubeSession.connect(options);
  const namespace = options.namespace ?? session.defaultNamespace();
  const { io } = options;
  let restore: (() => Promise<void>) | undefined;
  try {
    await requireOlm(session);
    const bundle = await pullBundle(ref, options, session.signal);
    const { catalog: catalogName, configMap } = names(bundle.packageName);
    const subscription = (await session.list(OLM_V1ALPHA1, 'Subscription', namespace)).find(
      (sub) => sub.spec?.name === bundle.packageName,
    );
    const catalogSource = await session.get(OLM_V1ALPHA1, 'CatalogSource', catalogName, namespace);
    const stored = await session.get('v1', 'ConfigMap', configMap, namespace);
    if (!subscription || !catalogSource || !stored) {
      throw new UsageError(
        `package ${bundle.packageName} was not installed with \`run bundle\` in namespace ${namespace} (${!subscription ? 'no Subscription' : !catalogSource ? `no CatalogSource ${catalogName}` : `no ConfigMap ${configMap}`})`,
        `run \`ts-operator-sdk run bundle\` with the current bundle first, or pass -n with its namespace`,
      );
    }
    const installed = (subscription.status?.installedCSV ?? subscription.status?.currentCSV) as string | undefined;
    if (!installed)
      throw new UsageError(
        `Subscription ${subscription.metadata!.name} has no installed CSV yet`,
        'wait for the current install to finish (see `kubectl get csv`), then run bundle-upgrade again',
      );
    const oldText = String((stored.data as Record<string, string> | undefined)?.[CATALOG_KEY] ?? '');
    const catalog: CatalogBlob[] = parseCatalog(oldText);
    const newText = serializeCatalog(catalogWithUpgrade(catalog, bundle, installed));
    const oldAddress = catalogSource.spec?.address as string | undefined;
    const oldPods = await session.list('v1', 'Pod', namespace, `${PACKAGE_LABEL}=${bundle.packageName}`);
    restore = async () => {
      io.progress('run bundle-upgrade failed; restoring the previous catalog');
      await session.mergePatch(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: configMap, namespace } },
        { data: { [CATALOG_KEY]: oldText } },
      );
      for (const pod of await session.list('v1', 'Pod', namespace, `${PACKAGE_LABEL}=${bundle.packageName}`)) {
        if (!oldPods.some((old) => old.metadata!.name === pod.metadata!.name)) await session.delete(pod);
      }
      if (oldAddress) await session.mergePatch(catalogSource, { spec: { address: oldAddress } });
    };
    checkCatalogSize(newText);
    await session.mergePatch(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: configMap, namespace } },
      { data: { [CATALOG_KEY]: newText } },
    );
    // bundle-upgrade has no --index-image (as operator-sdk): the new registry pod runs the image run bundle used.
    const indexImage = catalogSource.metadata?.annotations?.[INDEX_IMAGE_ANNOTATION] ?? options.indexImage;
    const pod = await createRegistryPod(
      session,
      { ...options, indexImage },
      namespace,
      catalogName,
      configMap,
      newText,
      { [PACKAGE_LABEL]: bundle.packageName },
    );
    await pointCatalogAtPod(session, namespace, catalogName, pod, options);
    for (const old of oldPods) await session.delete(old);
    io.progress(`Updated CatalogSource ${catalogName} with bundle ${csvName(bundle)} (replaces ${installed})`);
    await waitForCsv(session, namespace, csvName(bundle), catalogName, options);
    restore = undefined;
    io.progress(`Successfully upgraded to "${csvName(bundle)}"`);
  } catch (err) {
    if (restore) {
      session.overtime(RESTORE_BUDGET_MS);
      await restore().catch((restoreErr: unknown) =>
        io.progress(
          `restoring failed too: ${(session.failure(restoreErr, 'restoring the catalog') as Error).message.split('\n')[0]}`,
        ),
      );
    }
    throw session.failure(err, 'upgrading the bundle');
  } finally {
    await session.close();
  }
}

/**
 * The OperatorGroup to create, or undefined to use the namespace's own.
 * Without --install-mode: the namespace's group if it has one, else the
 * first of AllNamespaces, OwnNamespace the CSV supports.
 */
function chooseInstallMode(
  bundle: Bundle,
  requested: string | undefined,
  namespace: string,
  groups: ClusterObject[],
): { type: string; targets: string[] } | undefined {
  const supported = supportedInstallModes(bundle);
  const mode = requested !== undefined ? parseInstallMode(requested, namespace) : undefined;
  if (mode && !supported.includes(mode.type)) {
    throw new UsageError(
      `--install-mode ${requested} is not supported by ${csvName(bundle)} (it supports ${supported.join(', ') || 'no install mode'})`,
      `pass one of ${supported.join(', ')}`,
    );
  }
  if (groups.length > 0) {
    const group = groups[0]!;
    const targets = (group.spec?.targetNamespaces ?? []) as string[];
    if (mode && (mode.type === 'AllNamespaces' ? targets.length > 0 : targets.join(',') !== mode.targets.join(','))) {
      throw new UsageError(
        `namespace ${namespace} already has OperatorGroup ${group.metadata!.name} targeting ${targets.length > 0 ? targets.join(',') : 'all namespaces'}, which does not match --install-mode ${requested}`,
        'leave out --install-mode to use that OperatorGroup, or run the bundle in another namespace with -n',
      );
    }
    return undefined;
  }
  if (mode) return mode;
  for (const type of ['AllNamespaces', 'OwnNamespace'])
    if (supported.includes(type)) return { type, targets: type === 'OwnNamespace' ? [namespace] : [] };
  throw new UsageError(
    `${csvName(bundle)} supports neither AllNamespaces nor OwnNamespace (it supports ${supported.join(', ') || 'no install mode'})`,
    'pass --install-mode, e.g. SingleNamespace=<namespace>',
  );
}

function checkCatalogSize(text: string): void {
  if (Buffer.byteLength(text) > MAX_CATALOG_BYTES)
    throw new UsageError(
      `the catalog is ${Buffer.byteLength(text)} bytes, more than a ConfigMap holds (1 MiB)`,
      'shrink the bundle (CRD descriptions, alm-examples), or serve your own catalog image',
    );
}

/** The ConfigMap, the registry pod and the CatalogSource for a new catalog. */
async function createCatalog(
  session: KubeSession,
  options: RunBundleOptions,
  namespace: string,
  catalogName: string,
  configMap: string,
  catalogText: string,
  labels: Record<string, string>,
): Promise<void> {
  checkCatalogSize(catalogText);
  await session.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: configMap, namespace, labels },
    data: { [CATALOG_KEY]: catalogText },
  });
  await session.create({
    apiVersion: OLM_V1ALPHA1,
    kind: 'CatalogSource',
    metadata: { name: catalogName, namespace, labels, annotations: { [INDEX_IMAGE_ANNOTATION]: options.indexImage } },
    spec: {
      sourceType: 'grpc',
      displayName: catalogName,
      publisher: 'operator-sdk',
      grpcPodConfig: { securityContextConfig: options.securityContextConfig },
    },
  });
  options.io.progress(`Created CatalogSource ${catalogName}`);
  const pod = await createRegistryPod(session, options, namespace, catalogName, configMap, catalogText, labels);
  await pointCatalogAtPod(session, namespace, catalogName, pod, options);
}

/** A pod running `opm serve` on the ConfigMap's catalog, named after the catalog content (so an upgrade gets a new pod). */
async function createRegistryPod(
  session: KubeSession,
  options: RunBundleOptions,
  namespace: string,
  catalogName: string,
  configMap: string,
  catalogText: string,
  labels: Record<string, string>,
): Promise<ClusterObject> {
  const hash = createHash('sha256').update(catalogText).digest('hex').slice(0, 8);
  const name = `${catalogName.slice(0, 50)}-${hash}`;
  const restricted = options.securityContextConfig === 'restricted';
  const pod: ClusterObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { ...labels, 'olm.catalogSource': catalogName } },
    spec: {
      serviceAccountName: options.serviceAccount,
      ...(restricted ? { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } } : {}),
      containers: [
        {
          name: 'registry-grpc',
          image: options.indexImage,
          imagePullPolicy: options.imagePullPolicy,
          command: ['/bin/opm', 'serve', '/configs', '-p', String(GRPC_PORT)],
          ports: [{ name: 'grpc', containerPort: GRPC_PORT }],
          readinessProbe: { grpc: { port: GRPC_PORT }, periodSeconds: 2, failureThreshold: 30 },
          volumeMounts: [
            // subPath: a plain file, not the ConfigMap volume's ..data symlink and timestamped
            // directory, which opm would walk into and read as a second copy of the catalog.
            { name: 'catalog', mountPath: `/configs/catalog/${CATALOG_KEY}`, subPath: CATALOG_KEY, readOnly: true },
            // opm serve keeps its cache in a temp dir; the image may have no /tmp.
            { name: 'cache', mountPath: '/tmp' },
          ],
          ...(restricted
            ? { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }
            : {}),
        },
      ],
      volumes: [
        { name: 'catalog', configMap: { name: configMap } },
        { name: 'cache', emptyDir: {} },
      ],
    },
  };
  await session.create(pod);
  options.io.progress(`Created registry pod ${name}`);
  return pod;
}

/** Waits for the registry pod to be ready, then points the CatalogSource at its address. */
async function pointCatalogAtPod(
  session: KubeSession,
  namespace: string,
  catalogName: string,
  pod: ClusterObject,
  options: RunBundleOptions,
): Promise<void> {
  const ready = await session.pollUntil(async () => {
    const current = await session.get('v1', 'Pod', pod.metadata!.name!, namespace);
    if (current?.status?.phase === 'Failed' || current?.status?.phase === 'Succeeded')
      throw new UsageError(
        `registry pod ${pod.metadata!.name} exited (${describePod(current)})`,
        `check that --index-image ${options.indexImage} runs \`/bin/opm serve\` (kubectl -n ${namespace} logs ${pod.metadata!.name})`,
      );
    const isReady = ((current?.status?.conditions ?? []) as { type: string; status: string }[]).some(
      (c) => c.type === 'Ready' && c.status === 'True',
    );
    return isReady && current?.status?.podIP ? (current.status.podIP as string) : undefined;
  });
  if (!ready) {
    throw timeoutError(
      options,
      await diagnose(session, async () => {
        const current = await session.get('v1', 'Pod', pod.metadata!.name!, namespace);
        return `registry pod ${namespace}/${pod.metadata!.name} is not ready: ${current ? describePod(current) : 'it is gone'}`;
      }),
    );
  }
  const address = ready.includes(':') ? `[${ready}]:${GRPC_PORT}` : `${ready}:${GRPC_PORT}`;
  await session.mergePatch(
    { apiVersion: OLM_V1ALPHA1, kind: 'CatalogSource', metadata: { name: catalogName, namespace } },
    { spec: { address } },
  );
}

/**
 * Approves the InstallPlan that installs `csv` and waits for the CSV to
 * succeed; a timeout names the furthest step that was not reached.
 */
async function waitForCsv(
  session: KubeSession,
  namespace: string,
  csv: string,
  catalogName: string,
  options: RunBundleOptions,
): Promise<void> {
  options.io.progress(`Waiting for ClusterServiceVersion "${namespace}/${csv}" to reach 'Succeeded' phase`);
  let lastPhase = '';
  const done = await session.pollUntil(async () => {
    for (const plan of await session.list(OLM_V1ALPHA1, 'InstallPlan', namespace)) {
      if (((plan.spec?.clusterServiceVersionNames ?? []) as string[]).includes(csv) && plan.spec?.approved === false) {
        await session.mergePatch(plan, { spec: { approved: true } });
        options.io.progress(`Approved InstallPlan ${plan.metadata!.name}`);
      }
    }
    const current = await session.get(OLM_V1ALPHA1, 'ClusterServiceVersion', csv, namespace);
    const phase = current?.status?.phase ?? '';
    if (phase && phase !== lastPhase)
      options.io.progress(`  Found ClusterServiceVersion "${namespace}/${csv}" phase: ${phase}`);
    lastPhase = phase;
    if (phase === 'Failed')
      throw new UsageError(
        `ClusterServiceVersion ${csv} failed: ${current!.status!.reason ?? ''} ${current!.status!.message ?? ''}`.trim(),
        `fix the operator (kubectl -n ${namespace} describe csv ${csv}), then \`ts-operator-sdk cleanup\` and run the bundle again`,
      );
    return phase === 'Succeeded' ? true : undefined;
  });
  if (!done)
    throw timeoutError(options, await diagnose(session, () => installBlocker(session, namespace, csv, catalogName)));
}

/** What an install is stuck on, from the first step that is not done: catalog, subscription, install plan, CSV. */
async function installBlocker(
  session: KubeSession,
  namespace: string,
  csv: string,
  catalogName: string,
): Promise<string> {
  const current = await session.get(OLM_V1ALPHA1, 'ClusterServiceVersion', csv, namespace);
  if (current) {
    const status = current.status ?? {};
    return `ClusterServiceVersion ${csv} is in phase ${status.phase || 'none'}${status.reason ? ` (${status.reason}${status.message ? `: ${status.message}` : ''})` : ''}`;
  }
  const plan = (await session.list(OLM_V1ALPHA1, 'InstallPlan', namespace)).find((p) =>
    ((p.spec?.clusterServiceVersionNames ?? []) as string[]).includes(csv),
  );
  if (plan) {
    const failed = ((plan.status?.conditions ?? []) as { status: string; reason?: string; message?: string }[]).find(
      (c) => c.status !== 'True',
    );
    return `InstallPlan ${plan.metadata!.name} is in phase ${plan.status?.phase || 'none'}${failed ? ` (${failed.reason ?? ''}${failed.message ? `: ${failed.message}` : ''})` : ''}`;
  }
  const subscription = (await session.list(OLM_V1ALPHA1, 'Subscription', namespace)).find(
    (sub) => sub.spec?.source === catalogName,
  );
  const subCondition = (
    (subscription?.status?.conditions ?? []) as { type: string; status: string; message?: string }[]
  ).find((c) => c.status === 'True' && /Failed|Unhealthy/.test(c.type));
  if (subCondition)
    return `Subscription ${subscription!.metadata!.name} has ${subCondition.type}${subCondition.message ? `: ${subCondition.message}` : ''}`;
  const catalog = await session.get(OLM_V1ALPHA1, 'CatalogSource', catalogName, namespace);
  const state = (catalog?.status?.connectionState as { lastObservedState?: string } | undefined)?.lastObservedState;
  if (state !== 'READY')
    return `CatalogSource ${catalogName} is ${state ? `in connection state ${state}` : 'not connected (catalog-operator never reported on it: is OLM running? see `ts-operator-sdk olm status`)'}`;
  return `Subscription ${subscription ? subscription.metadata!.name : '(gone)'} has no InstallPlan yet (${subscription?.status?.state ? `state ${subscription.status.state}` : 'catalog-operator has not resolved it'})`;
}

function timeoutError(options: RunBundleOptions, blocker: string): UsageError {
  return new UsageError(
    `timed out after ${formatDuration(options.timeoutMs)} waiting for the bundle to install: ${blocker}`,
    'fix what blocks it, or pass a longer --timeout',
  );
}
