/**
 * An operator package in the cluster, as `run bundle` installs it and
 * `cleanup <package>` removes it (as operator-sdk's cleanup does): its
 * Subscription, the CSVs it installed and their InstallPlans, the CRDs the
 * CSVs own, the CatalogSource with its registry pod and catalog ConfigMap,
 * and the OperatorGroup `run bundle` created. `run bundle` also removes it
 * this way when it fails.
 */
import { UsageError } from '../errors.js';
import { formatDuration } from './connection.js';
import { deleteAll, type ProgressLog } from './deletion.js';
import { describeObject, KubeSession, OLM_V1, OLM_V1ALPHA1, type ClusterObject } from './session.js';

/** Marks every object `run bundle` creates, with the package as value, so cleanup finds them. */
export const PACKAGE_LABEL = 'ts-operator-sdk.io/run-bundle-package';
/** The OperatorGroup `run bundle` creates when the namespace has none (operator-sdk's name). */
export const OPERATOR_GROUP_NAME = 'operator-sdk-og';

/** The names of the CRDs the CSV owns (`memcacheds.cache.example.com`). */
export function ownedCrdNames(csv: ClusterObject | undefined): string[] {
  const crds = csv?.spec?.customresourcedefinitions as { owned?: { name?: string }[] } | undefined;
  return (crds?.owned ?? []).map((crd) => crd.name).filter((name): name is string => Boolean(name));
}

/** What to remove. */
export interface CleanupOptions {
  packageName: string;
  namespace: string;
  /** Delete the CRDs the package's CSVs own (operator-sdk's --delete-crds). */
  deleteCrds: boolean;
  /** CRDs never to delete (run bundle's failure path keeps CRDs that existed before it). Default: none. */
  keepCrds?: ReadonlySet<string>;
  /** Delete the OperatorGroup run bundle created, when no other Subscription needs it (--delete-operator-groups). */
  deleteOperatorGroups: boolean;
  io: ProgressLog;
}

/** Removes the package's objects, within the session's time; returns how many objects it deleted. */
export async function cleanupPackage(session: KubeSession, options: CleanupOptions): Promise<number> {
  const { packageName, namespace, io } = options;
  const ours = `${PACKAGE_LABEL}=${packageName}`;
  const subscriptions = (await session.list(OLM_V1ALPHA1, 'Subscription', namespace)).filter(
    (sub) => sub.spec?.name === packageName,
  );
  const csvNames = new Set<string>();
  for (const sub of subscriptions) {
    for (const field of ['installedCSV', 'currentCSV'])
      if (sub.status?.[field]) csvNames.add(sub.status[field] as string);
    if (sub.spec?.startingCSV) csvNames.add(sub.spec.startingCSV as string);
  }
  // OLM labels the CSVs it installs `operators.coreos.com/<package>.<namespace>`; that also finds CSVs an upgrade replaced.
  for (const csv of await session.list(
    OLM_V1ALPHA1,
    'ClusterServiceVersion',
    namespace,
    `operators.coreos.com/${packageName}.${namespace}`,
  ))
    csvNames.add(csv.metadata!.name!);
  const csvs: ClusterObject[] = [];
  for (const name of csvNames) {
    const csv = await session.get(OLM_V1ALPHA1, 'ClusterServiceVersion', name, namespace);
    if (csv) csvs.push({ ...csv, apiVersion: OLM_V1ALPHA1, kind: 'ClusterServiceVersion' });
  }
  const plans = (await session.list(OLM_V1ALPHA1, 'InstallPlan', namespace)).filter((plan) =>
    ((plan.spec?.clusterServiceVersionNames ?? []) as string[]).some((name) => csvNames.has(name)),
  );
  const crds: ClusterObject[] = [];
  if (options.deleteCrds) {
    for (const name of new Set(csvs.flatMap((csv) => ownedCrdNames(csv)))) {
      if (!options.keepCrds?.has(name))
        crds.push({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });
    }
  }
  const catalogs = await session.list(OLM_V1ALPHA1, 'CatalogSource', namespace, ours);
  const pods = await session.list('v1', 'Pod', namespace, ours);
  const configMaps = await session.list('v1', 'ConfigMap', namespace, ours);
  const groups: ClusterObject[] = [];
  if (options.deleteOperatorGroups) {
    const others = (await session.list(OLM_V1ALPHA1, 'Subscription', namespace)).filter(
      (sub) => sub.spec?.name !== packageName,
    );
    if (others.length === 0)
      groups.push(
        ...(await session.list(OLM_V1, 'OperatorGroup', namespace, ours)).filter(
          (group) => group.metadata!.name === OPERATOR_GROUP_NAME,
        ),
      );
  }
  // Subscriptions first, so OLM does not reinstall the CSV we delete next; CRDs after the CSVs that own them.
  const all = [
    ...subscriptions.map((sub) => ({ ...sub, apiVersion: OLM_V1ALPHA1, kind: 'Subscription' })),
    ...csvs,
    ...plans,
    ...crds,
    ...catalogs,
    ...pods,
    ...configMaps,
    ...groups,
  ] as ClusterObject[];
  for (const obj of all) io.debug(`deleting ${describeObject(obj)}`);
  // deleteAll deletes in reverse order (CRDs last); hand it the list reversed so it deletes in the order above.
  const left = await deleteAll(session, [...all].reverse(), io);
  if (left.length > 0) {
    throw new UsageError(
      `timed out after ${formatDuration(session.rest.budgetMs)} deleting ${left.length} objects of package ${packageName} (${left.slice(0, 3).map(describeObject).join(', ')})`,
      'check their finalizers with kubectl, or pass a longer --timeout',
    );
  }
  return all.length;
}
