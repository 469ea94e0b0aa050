/**
 * The bundle's YAML objects as the validators read them. Nothing checks these
 * shapes when a file is read: a bundle under validation may hold anything, so
 * every leaf is `unknown` and the validators read it defensively (optional
 * chaining, String(), comparisons), as operator-framework/api's tolerant
 * decoding does. The field names are the api's Go structs'.
 */

/** An item of a YAML list: a list may hold null. */
export type ListItem<T> = T | null | undefined;

/** metadata, as far as the validators read it. */
export interface ObjectMetaDocument {
  name?: unknown;
  generateName?: unknown;
  namespace?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** A decoded YAML object of the bundle; `Spec` is what its kind's spec holds. */
export interface ManifestDocument<Spec = Record<string, unknown>> {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: ObjectMetaDocument;
  spec?: Spec;
  [field: string]: unknown;
}

/** An owned or required CRD of a CSV (CRDDescription). */
export interface CrdDescriptionDocument {
  name?: unknown;
  version?: unknown;
  kind?: unknown;
  description?: unknown;
}

/** A policy rule of a CSV's permissions. */
export interface PolicyRuleDocument {
  apiGroups?: unknown[];
  resources?: unknown[];
  verbs?: unknown[];
}

/** A deployment of the CSV's install strategy. */
export interface StrategyDeploymentDocument {
  name?: unknown;
  spec?: {
    template?: {
      spec?: {
        serviceAccountName?: unknown;
        containers?: ListItem<{ name?: unknown; resources?: { requests?: { cpu?: unknown; memory?: unknown } } }>[];
      };
    };
  };
}

/** A webhook definition of the CSV. */
export interface WebhookDefinitionDocument {
  generateName?: unknown;
  type?: unknown;
  deploymentName?: unknown;
  conversionCRDs?: unknown[];
  rules?: ListItem<{ apiGroups?: unknown[]; resources?: unknown[] }>[];
}

/** A ClusterServiceVersion's spec. */
export interface CsvSpecDocument {
  version?: unknown;
  replaces?: unknown;
  minKubeVersion?: unknown;
  displayName?: unknown;
  provider?: { name?: unknown };
  maintainers?: ListItem<{ name?: unknown; email?: unknown }>[];
  links?: ListItem<{ name?: unknown; url?: unknown }>[];
  /** A list of `{ base64data, mediatype }` in a well-formed CSV; checked with Array.isArray. */
  icon?: unknown;
  /** A list of `{ type, supported }` in a well-formed CSV; checked with Array.isArray. */
  installModes?: unknown;
  webhookdefinitions?: ListItem<WebhookDefinitionDocument>[];
  customresourcedefinitions?: {
    owned?: ListItem<CrdDescriptionDocument>[];
    required?: ListItem<CrdDescriptionDocument>[];
  };
  apiservicedefinitions?: { owned?: ListItem<{ group?: unknown; version?: unknown; kind?: unknown }>[] };
  install?: {
    strategy?: unknown;
    spec?: {
      deployments?: ListItem<StrategyDeploymentDocument>[];
      permissions?: ListItem<{ rules?: ListItem<PolicyRuleDocument>[] }>[];
      clusterPermissions?: ListItem<{ rules?: ListItem<PolicyRuleDocument>[] }>[];
    };
  };
}

/** A CustomResourceDefinition version (apiextensions v1, or v1beta1's per-version fields). */
export interface CrdVersionDocument {
  name?: unknown;
  served?: unknown;
  storage?: unknown;
  [field: string]: unknown;
}

/** A CustomResourceDefinition's spec (apiextensions v1 or v1beta1). */
export interface CrdSpecDocument {
  group?: unknown;
  scope?: unknown;
  names?: { plural?: unknown; kind?: unknown };
  /** A list of versions in a well-formed CRD; checked with Array.isArray. */
  versions?: unknown;
  /** v1beta1's single version. */
  version?: unknown;
  preserveUnknownFields?: unknown;
  conversion?: { strategy?: unknown };
  [field: string]: unknown;
}

/**
 * A YAML leaf as the checks compare and print it: String() of it. A mapping
 * or list where the api expects a string prints as JavaScript stringifies it
 * (`[object Object]`, `a,b`) and fails the comparison, as a string check
 * should.
 */
export function leafText(value: unknown): string {
  return String(value);
}
