/**
 * What `pods/exec` and `pods/log` share: naming the pod, and turning the API
 * server's refusals of either into typed errors whose message says what to
 * change (the container name, the pod's state, the operator's RBAC).
 */
import { ApiError, BadRequestError, ForbiddenError, NotFoundError } from '../api/errors.js';

/** A pod, by key (`{ namespace, name }`) or as an object read from the API (`pod.metadata`). */
export type PodReference = { namespace: string; name: string } | { metadata?: { namespace?: string; name?: string } };

/** The pod named by `pod`; throws when the name or namespace is missing, before any request. */
export function podKey(pod: PodReference, what: string): { namespace: string; name: string } {
  const meta = podMeta(pod);
  if (!meta.name) throw new Error(`${what}: the pod has no name; pass { namespace, name } or a Pod read from the API`);
  if (!meta.namespace)
    throw new Error(
      `${what} pod "${meta.name}": the pod has no namespace; Pods are namespaced, so pass { namespace, name }`,
    );
  return { namespace: meta.namespace, name: meta.name };
}

/** The name and namespace `pod` carries, either of them possibly missing. */
export function podMeta(pod: PodReference): { namespace?: string; name?: string } {
  return 'metadata' in pod ? (pod.metadata ?? {}) : (pod as { namespace?: string; name?: string });
}

/** `/api/v1/namespaces/NS/pods/NAME/SUBRESOURCE`. */
export function podSubresourcePath(pod: { namespace: string; name: string }, subresource: 'exec' | 'log'): string {
  return `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}/${subresource}`;
}

/**
 * 400: the container named is not in the pod (or the pod has several and
 * none was named). `containers` lists the pod's containers when the server
 * named them.
 */
export class ContainerNotFoundError extends BadRequestError {}

/**
 * The pod cannot run a command or serve a log now: it has no node yet (not
 * scheduled), its node does not exist, it has completed, or the container
 * is still waiting to start. Usually worth a requeue, unlike a
 * ContainerNotFoundError. `statusCode` is the server's (400, or 404 for a
 * missing node, which is deliberately not a NotFoundError: the pod exists).
 */
export class PodNotRunningError extends ApiError {}

/**
 * The RBAC a call to each subresource needs, as the marker that grants it.
 * An exec over WebSocket is a GET upgraded, so the API server authorizes
 * `get` on pods/exec, and since 1.35 also `create` (as for the POST that
 * SPDY clients send): both verbs, for old and new servers alike.
 */
const RBAC_MARKERS = {
  exec: '// +kubebuilder:rbac:groups="",resources=pods/exec,verbs=create;get',
  log: '// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get',
} as const;

/**
 * Refines the API server's error for a pods/exec or pods/log call on `pod`:
 * a 400 that names a container becomes ContainerNotFoundError, one about the
 * pod's state (or a 404 for its node) PodNotRunningError, and a 403 says
 * which marker grants the call.
 * Other errors are returned unchanged. The server's messages are matched
 * because its Status carries only the reason `BadRequest` for all of them.
 */
export function refinePodError(
  err: unknown,
  subresource: 'exec' | 'log',
  pod: { namespace: string; name: string },
): unknown {
  if (err instanceof ForbiddenError) {
    return new ForbiddenError(
      err.statusCode,
      err.reason,
      `${err.message}; the operator's Role needs ${subresource === 'exec' ? 'create and get on pods/exec' : 'get on pods/log'}: add \`${RBAC_MARKERS[subresource]}\` to the reconciler and run \`make manifests\``,
      err.status,
    );
  }
  // The server reports a pod bound to a missing node as `pods "<node name>" not found`: name the node instead.
  if (err instanceof NotFoundError && err.status?.details?.name !== undefined && err.status.details.name !== pod.name) {
    return new PodNotRunningError(
      err.statusCode,
      err.reason,
      `pod ${pod.namespace}/${pod.name} is bound to node "${err.status.details.name}", which does not exist (the API server answered: ${err.message})`,
      err.status,
    );
  }
  if (!(err instanceof BadRequestError) || err instanceof ContainerNotFoundError || err instanceof PodNotRunningError)
    return err;
  const message = err.message;
  if (
    /container \S+ is not valid for pod|container "?[^"\s]+"? in pod "?[^"\s]+"? is not (valid|available)|a container name must be specified/.test(
      message,
    )
  ) {
    return rebuild(ContainerNotFoundError, err);
  }
  if (
    /does not have a host assigned|in a completed pod|is waiting to start|is terminated|PodInitializing|ContainerCreating/.test(
      message,
    )
  ) {
    return rebuild(PodNotRunningError, err);
  }
  return err;
}

function rebuild(type: new (...args: ConstructorParameters<typeof ApiError>) => ApiError, err: ApiError): ApiError {
  return new type(err.statusCode, err.reason, err.message, err.status);
}
