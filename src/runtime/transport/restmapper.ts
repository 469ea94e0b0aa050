import type { KubernetesObject } from '../api/object.js';
import { NoKindMatchError, NotFoundError } from '../api/errors.js';
import { declaredKind, parseApiVersion, type Kind } from '../api/kinds.js';
import type { RestClient } from './rest.js';

/** One entry of an APIResourceList from discovery. */
interface DiscoveredResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/**
 * Maps an object's apiVersion and kind to its Kind (plural and scope), as
 * controller-runtime's RESTMapper does: kinds declared with `defineKind`
 * answer at once, anything else is looked up in API discovery, one request
 * per group-version, cached.
 */
export class RestMapper {
  private readonly discovered = new Map<string, Promise<Map<string, Kind>>>();

  constructor(private readonly rest: RestClient) {}

  /**
   * The Kind for an object, from its own apiVersion and kind. Throws a clear
   * error when either is missing, NoKindMatchError when the server has no
   * such kind.
   */
  async kindForObject<T extends KubernetesObject>(obj: T): Promise<Kind<T>> {
    if (!obj.apiVersion || !obj.kind) {
      const name = obj.metadata?.name ? ` "${obj.metadata.name}"` : '';
      throw new Error(
        `object${name} has no ${obj.apiVersion ? 'kind' : 'apiVersion'}: set apiVersion and kind on objects passed to the client (e.g. apiVersion: 'v1', kind: 'ConfigMap')`,
      );
    }
    return (await this.kindFor(obj.apiVersion, obj.kind)) as Kind<T>;
  }

  /** The Kind for an apiVersion and kind; throws NoKindMatchError if the server does not serve it. */
  async kindFor(apiVersion: string, kind: string): Promise<Kind> {
    const declared = declaredKind(apiVersion, kind);
    if (declared) return declared;
    let found = (await this.resourcesOf(apiVersion, false)).get(kind);
    // A CRD installed after the first lookup is not in the cached list, so a
    // miss refreshes the group-version once before giving up.
    if (!found) found = (await this.resourcesOf(apiVersion, true)).get(kind);
    if (!found) throw new NoKindMatchError(apiVersion, kind);
    return found;
  }

  /** Forgets discovered group-versions, e.g. after installing CRDs. */
  reset(): void {
    this.discovered.clear();
  }

  private resourcesOf(apiVersion: string, refresh: boolean): Promise<Map<string, Kind>> {
    let pending = this.discovered.get(apiVersion);
    if (!pending || refresh) {
      pending = this.discover(apiVersion);
      this.discovered.set(apiVersion, pending);
      // A failed lookup (network, 5xx) must not stick in the cache.
      pending.catch(() => {
        if (this.discovered.get(apiVersion) === pending) this.discovered.delete(apiVersion);
      });
    }
    return pending;
  }

  private async discover(apiVersion: string): Promise<Map<string, Kind>> {
    const { group, version } = parseApiVersion(apiVersion);
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const kinds = new Map<string, Kind>();
    let list: { resources?: DiscoveredResource[] };
    try {
      list = await this.rest.request<{ resources?: DiscoveredResource[] }>('GET', path);
    } catch (err) {
      if (err instanceof NotFoundError) return kinds;
      throw err;
    }
    for (const resource of list.resources ?? []) {
      // Subresources (`deployments/status`) share the kind of their parent.
      if (resource.name.includes('/')) continue;
      kinds.set(
        resource.kind,
        Object.freeze({
          group,
          version,
          apiVersion,
          kind: resource.kind,
          plural: resource.name,
          namespaced: resource.namespaced,
        }),
      );
    }
    return kinds;
  }
}
