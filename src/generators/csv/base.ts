import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import { sortKeysDeep } from '../../yaml-output.js';
import { yamlText } from '../render-yaml.js';
import type { OwnedCrdDescription } from './descriptors.js';
import { spacedWords } from './display-names.js';

/** The UI metadata `generate kustomize manifests` asks for on a terminal. Empty answers keep the placeholders. */
export interface CsvUiMetadata {
  displayName?: string;
  description?: string;
  providerName?: string;
  providerUrl?: string;
  keywords?: string[];
  maintainers?: Array<{ name: string; email: string }>;
}

/** A ClusterServiceVersion as plain data; only the fields the generators touch are typed. */
export type CsvObject = Record<string, unknown> & {
  metadata: Record<string, unknown> & { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
};

/** The apiVersion and kind every CSV carries. */
export const CSV_API_VERSION = 'operators.coreos.com/v1alpha1';
/** The kind of a ClusterServiceVersion. */
export const CSV_KIND = 'ClusterServiceVersion';

/**
 * The base CSV operator-sdk writes for a new project: placeholder UI
 * metadata (or the given answers), AllNamespaces install mode, the owned CRDs
 * with their marker descriptors, and an empty install strategy that
 * `generate bundle` fills.
 */
export function newBaseCsv(
  packageName: string,
  owned: readonly OwnedCrdDescription[],
  ui: CsvUiMetadata = {},
): CsvObject {
  const displayName = ui.displayName || spacedWords(packageName);
  return {
    apiVersion: CSV_API_VERSION,
    kind: CSV_KIND,
    metadata: {
      name: `${packageName}.v0.0.0`,
      namespace: 'placeholder',
      annotations: { 'alm-examples': '[]', capabilities: 'Basic Install' },
    },
    spec: {
      apiservicedefinitions: {},
      customresourcedefinitions: owned.length > 0 ? { owned: owned.map((o) => ({ ...o })) } : {},
      description: ui.description || `${displayName} description. TODO.`,
      displayName,
      icon: [{ base64data: '', mediatype: '' }],
      install: { spec: { deployments: null }, strategy: '' },
      installModes: [
        { supported: false, type: 'OwnNamespace' },
        { supported: false, type: 'SingleNamespace' },
        { supported: false, type: 'MultiNamespace' },
        { supported: true, type: 'AllNamespaces' },
      ],
      keywords: ui.keywords && ui.keywords.length > 0 ? ui.keywords : [packageName],
      links: [{ name: displayName, url: `https://${packageName}.domain` }],
      maintainers:
        ui.maintainers && ui.maintainers.length > 0
          ? ui.maintainers
          : [{ email: 'your@email.com', name: 'Maintainer Name' }],
      maturity: 'alpha',
      provider: { name: ui.providerName || 'Provider Name', url: ui.providerUrl || 'https://your.domain' },
      version: '0.0.0',
    },
  };
}

/** YAML in operator-sdk's layout: keys sorted, sequences flush with their key, nothing folded. */
export function renderYaml(value: unknown): string {
  // YAML 1.1 quoting: OLM's Go parsers read 1.1, where an unquoted createdAt is a timestamp and `yes` a boolean.
  return yamlText(sortKeysDeep(value), '1.1');
}

/**
 * Re-applies the marker-derived parts of the owned CRDs to an existing base
 * CSV, keeping every user edit: entries are matched by (name, version, kind);
 * a matched entry gets the markers' resources and descriptors when the
 * markers define them (hand-written ones stay otherwise) and keeps its own
 * display name and description; new APIs are appended; entries for APIs
 * not in PROJECT stay (`generate bundle` drops those without a CRD).
 * Returns the text unchanged, byte for byte, when nothing differs.
 */
export function updateBaseCsvText(existing: string, owned: readonly OwnedCrdDescription[]): string {
  const document = YAML.parseDocument(existing);
  const current = (
    document.getIn(['spec', 'customresourcedefinitions', 'owned']) as YAML.YAMLSeq | undefined
  )?.toJSON() as OwnedCrdDescription[] | undefined;
  const merged = mergeOwned(current ?? [], owned);
  if (isDeepStrictEqual(merged, current ?? [])) return existing;
  document.setIn(['spec', 'customresourcedefinitions', 'owned'], document.createNode(sortKeysDeep(merged)));
  return document.toString({ indentSeq: false, lineWidth: 0, minContentWidth: 0 });
}

/** See {@link updateBaseCsvText}. */
export function mergeOwned(
  current: readonly OwnedCrdDescription[],
  generated: readonly OwnedCrdDescription[],
): OwnedCrdDescription[] {
  const key = (o: Pick<OwnedCrdDescription, 'name' | 'version' | 'kind'>): string => `${o.name}/${o.version}/${o.kind}`;
  const byKey = new Map(generated.map((g) => [key(g), g]));
  const merged: OwnedCrdDescription[] = current.map((entry) => {
    const fresh = byKey.get(key(entry));
    if (!fresh) return entry;
    byKey.delete(key(entry));
    const next: OwnedCrdDescription = { ...entry };
    if (!next.displayName) next.displayName = fresh.displayName;
    if (!next.description && fresh.description) next.description = fresh.description;
    if (fresh.resources) next.resources = fresh.resources;
    if (fresh.specDescriptors) next.specDescriptors = fresh.specDescriptors;
    if (fresh.statusDescriptors) next.statusDescriptors = fresh.statusDescriptors;
    return next;
  });
  return [...merged, ...byKey.values()];
}
