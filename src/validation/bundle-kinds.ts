/**
 * The kinds a registry+v1 bundle may carry (operator-registry's
 * supported_resources.go): `generate bundle` writes only these, and `bundle
 * validate` rejects any other. Its own module, so the bundle writer loads
 * the list without the validator.
 */
export const BUNDLE_SUPPORTED_KINDS: ReadonlySet<string> = new Set([
  'ClusterServiceVersion',
  'CustomResourceDefinition',
  'Secret',
  'ClusterRole',
  'ClusterRoleBinding',
  'ConfigMap',
  'ServiceAccount',
  'Service',
  'Role',
  'RoleBinding',
  'PrometheusRule',
  'ServiceMonitor',
  'PodDisruptionBudget',
  'PriorityClass',
  'VerticalPodAutoscaler',
  'ConsoleYAMLSample',
  'ConsoleQuickStart',
  'ConsoleCLIDownload',
  'ConsoleLink',
  'ConsolePlugin',
  'NetworkPolicy',
]);
