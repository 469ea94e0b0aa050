/**
 * The scaffold markers: the lines generated files carry so a later command
 * knows where to add its code (kubebuilder's `+kubebuilder:scaffold:<name>`).
 * This is their one list: inserters find them by name (./inserter.ts),
 * `generate manifests` skips every line with the prefix
 * (FOREIGN_MARKER_PREFIXES), and test/unit/scaffold-markers.test.ts holds the
 * templates to it (every marker line a template writes is one of these, and
 * each of these is written by a template), so a marker cannot be spelled two
 * ways.
 */

/** The name every scaffold marker starts with (after its comment leader and `+`), as marker parsers see it. */
export const SCAFFOLD_MARKER_PREFIX = 'kubebuilder:scaffold:';

const inTypeScript = (name: string): string => `// +${SCAFFOLD_MARKER_PREFIX}${name}`;
const inYaml = (name: string): string => `# +${SCAFFOLD_MARKER_PREFIX}${name}`;

/** Every scaffold marker, by the name templates and inserters use, with the line it is in the file. */
export const ScaffoldMarkers = {
  /** main.ts: the imports of controllers and webhooks. */
  imports: inTypeScript('imports'),
  /** main.ts: where each controller and webhook is set up with the manager. */
  builder: inTypeScript('builder'),
  /** config/crd/kustomization.yaml: one `- bases/<group>_<plural>.yaml` per CRD. */
  crdResources: inYaml('crdkustomizeresource'),
  /** config/crd/kustomization.yaml: the conversion-webhook patch of each CRD. */
  crdWebhookPatch: inYaml('crdkustomizewebhookpatch'),
  /** config/samples/kustomization.yaml: one entry per sample. */
  samples: inYaml('manifestskustomizesamples'),
  /** config/rbac/kustomization.yaml: the admin/editor/viewer roles of each kind. */
  rbacRoles: inYaml('rbackustomizeroles'),
  /** config/default/kustomization.yaml: cert-manager's CA injection into a CRD (namespace, then name). */
  caInjectionNamespace: inYaml('crdkustomizecainjectionns'),
  caInjectionName: inYaml('crdkustomizecainjectionname'),
  /** config/scorecard/kustomization.yaml: scorecard test patches (operator-sdk's). */
  scorecardPatches: inYaml('patches'),
  /** A kind's webhook file: each webhook type adds its imports, builder call and types. */
  webhookImports: inTypeScript('webhook-imports'),
  webhookBuilder: inTypeScript('webhook-builder'),
  webhookTypes: inTypeScript('webhook-types'),
  /** A kind's webhook test: each webhook type adds its imports, tests and the CRDs conversion needs. */
  webhookTestImports: inTypeScript('webhook-test-imports'),
  webhookTests: inTypeScript('webhook-tests'),
  webhookConversionCrds: inTypeScript('webhook-conversion-crds'),
} as const;
