/*
 * The paths a kind's admission webhooks are served at, named as
 * controller-runtime names them. The one definition both sides use: the
 * webhook builder registers its handlers here, and `create webhook` writes the
 * same path into the `+kubebuilder:webhook` marker the manifests come from, so
 * the API server calls the path the operator serves.
 */
import type { Kind } from '../api/kinds.js';

type WebhookKind = Pick<Kind, 'group' | 'version' | 'kind'>;

/**
 * The defaulting webhook's path for `kind`:
 * `/mutate-<group with dots as dashes>-<version>-<lowercase kind>`; the core
 * group `''` leaves the group part empty (`/mutate--v1-pod`), as controller-runtime does.
 */
export function mutatingWebhookPath(kind: WebhookKind): string {
  return admissionPath('mutate', kind);
}

/** The validating webhook's path for `kind`: `/validate-<group with dashes>-<version>-<lowercase kind>`. */
export function validatingWebhookPath(kind: WebhookKind): string {
  return admissionPath('validate', kind);
}

function admissionPath(prefix: 'mutate' | 'validate', kind: WebhookKind): string {
  return `/${prefix}-${kind.group.replaceAll('.', '-')}-${kind.version}-${kind.kind.toLowerCase()}`;
}
