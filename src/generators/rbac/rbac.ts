import type { Marker, RawValue } from '../markers/grammar.js';
import { readLineMarkers } from '../markers/grammar.js';
import type { ProblemList } from '../problems.js';
import { byteOrder } from '../../byte-order.js';

/** rbac.authorization.k8s.io/v1 PolicyRule. */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

/** One `+kubebuilder:rbac` marker, after parsing. */
interface RuleMarker {
  groups: string[];
  resources: string[];
  resourceNames: string[];
  urls: string[];
  verbs: string[];
  namespace: string;
  roleName: string;
}

/**
 * Finds every `+kubebuilder:rbac` marker in one source file (in `//` or
 * JSDoc comments). Malformed markers are reported with file:line.
 */
export function readRbacMarkers(text: string, displayFile: string, problems: ProblemList): Marker[] {
  return readLineMarkers(text, 'kubebuilder:rbac', displayFile, (line, message) =>
    problems.add(displayFile, line, message),
  );
}

const texts = (value: unknown): string[] => (Array.isArray(value) ? (value as RawValue[]).map((r) => r.text) : []);
const sortedUnique = (values: string[]): string[] => [...new Set(values)].sort();

function toRuleMarker(marker: Marker, problems: ProblemList): RuleMarker | undefined {
  const rule: RuleMarker = {
    groups: texts(marker.args['groups']).map((g) => (g === 'core' ? '' : g)),
    resources: texts(marker.args['resources']),
    resourceNames: texts(marker.args['resourceNames']),
    urls: texts(marker.args['urls']),
    verbs: texts(marker.args['verbs']),
    namespace: typeof marker.args['namespace'] === 'string' ? marker.args['namespace'] : '',
    roleName: typeof marker.args['roleName'] === 'string' ? marker.args['roleName'] : '',
  };
  if (rule.verbs.length === 0) {
    problems.add(marker.file, marker.line, `${marker.source}: verbs is empty: list them as verbs=get;list;watch`);
    return undefined;
  }
  if (rule.resources.length === 0 && rule.urls.length === 0) {
    problems.add(
      marker.file,
      marker.line,
      `${marker.source}: the rule grants nothing: set resources= (with groups=) or urls=`,
    );
    return undefined;
  }
  if (rule.resources.length > 0 && marker.args['groups'] === undefined) {
    problems.add(
      marker.file,
      marker.line,
      `${marker.source}: resources= needs groups= (write groups="" or groups=core for the core API group)`,
    );
    return undefined;
  }
  if (rule.urls.length > 0 && rule.namespace) {
    problems.add(
      marker.file,
      marker.line,
      `${marker.source}: urls= cannot be used with namespace=: non-resource URLs exist only in ClusterRoles`,
    );
    return undefined;
  }
  return rule;
}

interface WorkingRule {
  groups: string[];
  resources: string[];
  resourceNames: string[];
  urls: string[];
  verbs: string[];
}

const join = (values: string[]): string => sortedUnique(values).join('&');
const ruleKey = (r: WorkingRule): string =>
  `${join(r.groups)} + ${join(r.resources)} + ${join(r.resourceNames)} + ${join(r.urls)}`;

/** Merges rules that differ in one dimension only, in controller-gen's order (verbs, resources, groups, URLs). */
function mergeBy(rules: WorkingRule[], keyOf: (r: WorkingRule) => string, field: keyof WorkingRule): WorkingRule[] {
  const merged = new Map<string, WorkingRule>();
  for (const rule of rules) {
    const key = keyOf(rule);
    const existing = merged.get(key);
    if (existing) existing[field] = sortedUnique([...existing[field], ...rule[field]]);
    else merged.set(key, { ...rule, [field]: sortedUnique(rule[field]) });
  }
  return [...merged.values()];
}

/** Normalizes rules the way controller-gen does, so role.yaml diffs cleanly against its output. */
export function normalizeRules(markers: RuleMarker[]): PolicyRule[] {
  let rules: WorkingRule[] = [];
  for (const m of markers) {
    // controller-gen splits each marker into one rule per resource before merging.
    const resources = m.resources.length > 0 ? m.resources : [];
    const base = {
      groups: sortedUnique(m.groups),
      resourceNames: sortedUnique(m.resourceNames),
      urls: sortedUnique(m.urls),
      verbs: sortedUnique(m.verbs),
    };
    if (resources.length === 0) rules.push({ ...base, resources: [] });
    for (const resource of resources) rules.push({ ...base, resources: [resource] });
  }
  rules = mergeBy(rules, ruleKey, 'verbs');
  rules = mergeBy(
    rules,
    (r) => `${join(r.groups)} + ${join(r.resourceNames)} + ${join(r.urls)} + ${join(r.verbs)}`,
    'resources',
  );
  rules = mergeBy(
    rules,
    (r) => `${join(r.resources)} + ${join(r.resourceNames)} + ${join(r.urls)} + ${join(r.verbs)}`,
    'groups',
  );
  rules = mergeBy(
    rules,
    (r) => `${join(r.groups)} + ${join(r.resources)} + ${join(r.resourceNames)} + ${join(r.verbs)}`,
    'urls',
  );
  rules.sort((a, b) => (ruleKey(a) < ruleKey(b) ? -1 : ruleKey(a) > ruleKey(b) ? 1 : 0));
  return rules.map((r) => {
    const out: PolicyRule = { verbs: r.verbs.includes('*') ? ['*'] : r.verbs };
    if (r.groups.length > 0 || r.resources.length > 0) out.apiGroups = r.groups;
    if (r.resources.length > 0) out.resources = r.resources;
    if (r.resourceNames.length > 0) out.resourceNames = r.resourceNames;
    if (r.urls.length > 0) out.nonResourceURLs = r.urls;
    return out;
  });
}

/**
 * Builds the ClusterRole (markers without namespace) and one Role per
 * namespace, named `manager-role` unless a marker sets roleName. Objects are
 * ordered by namespace, then name, as controller-gen orders them.
 */
export function buildRoles(
  markers: readonly Marker[],
  problems: ProblemList,
  defaultRoleName = 'manager-role',
): Array<Record<string, unknown>> {
  const byRole = new Map<string, { namespace: string; name: string; rules: RuleMarker[] }>();
  for (const marker of markers) {
    const rule = toRuleMarker(marker, problems);
    if (!rule) continue;
    const name = rule.roleName || defaultRoleName;
    const key = `${rule.namespace}\u0000${name}`;
    const entry = byRole.get(key) ?? { namespace: rule.namespace, name, rules: [] };
    entry.rules.push(rule);
    byRole.set(key, entry);
  }
  return [...byRole.values()]
    .sort((a, b) => byteOrder(a.namespace, b.namespace) || byteOrder(a.name, b.name))
    .map(({ namespace, name, rules }) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: namespace ? 'Role' : 'ClusterRole',
      metadata: namespace ? { name, namespace } : { name },
      rules: normalizeRules(rules),
    }));
}
