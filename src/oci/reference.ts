/**
 * Image references as the Docker/OCI distribution grammar defines them
 * (`[registry[:port]/]repository[:tag][@digest]`), parsed without a
 * registry call, so a typo fails before anything touches a cluster.
 */

/** A parsed image reference. */
export interface ImageReference {
  /** The registry host, with its port: `quay.io`, `localhost:5000`; `docker.io` when the reference names none. */
  registry: string;
  /** The repository path inside the registry: `example/memcached-operator-bundle` (`library/x` for Docker Hub's short names). */
  repository: string;
  /** The tag; `latest` when the reference has neither a tag nor a digest. */
  tag?: string;
  /** The digest (`sha256:...`), when the reference pins one. */
  digest?: string;
  /** The reference as the user wrote it. */
  original: string;
}

const DOCKER_HUB = 'docker.io';
/** One path component: lowercase alphanumerics joined by `.`, `_`, `__` or runs of `-`. */
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,}$/;
/** A host name or IPv4 address, or a bracketed IPv6 address, with an optional port. */
const REGISTRY_HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/** A reference that does not follow the grammar; `reason` says which part is wrong. */
export class InvalidReferenceError extends Error {
  constructor(
    readonly reference: string,
    readonly reason: string,
  ) {
    super(`"${reference}" is not a valid image reference: ${reason}`);
    this.name = 'InvalidReferenceError';
  }
}

/** Parses `text` as an image reference; throws InvalidReferenceError naming the faulty part. */
export function parseImageReference(text: string): ImageReference {
  const fail = (reason: string): never => {
    throw new InvalidReferenceError(text, reason);
  };
  if (text === '') fail('it is empty');
  if (/\s/.test(text)) fail('it contains whitespace');
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) fail(`digest "${digest}" is not <algorithm>:<hex>`);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const lastColon = rest.lastIndexOf(':');
  if (lastColon > lastSlash) {
    tag = rest.slice(lastColon + 1);
    rest = rest.slice(0, lastColon);
    if (!TAG.test(tag))
      fail(`tag "${tag}" may only hold letters, digits, _, . and - (at most 128, not starting with . or -)`);
  }
  const parts = rest.split('/');
  let registry = DOCKER_HUB;
  // As Docker decides: the first component is a registry when it has a dot, a port, or is localhost.
  if (parts.length > 1 && (/[.:]/.test(parts[0]!) || parts[0] === 'localhost' || parts[0]!.startsWith('['))) {
    registry = parts.shift()!;
    if (!REGISTRY_HOST.test(registry)) fail(`registry "${registry}" is not a host name with an optional port`);
  }
  if (parts.length === 0 || parts.some((part) => part === '')) fail('the repository path has an empty component');
  for (const part of parts) {
    if (!PATH_COMPONENT.test(part))
      fail(`repository component "${part}" must be lowercase letters and digits, joined by ".", "_" or "-"`);
  }
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift('library');
  const repository = parts.join('/');
  if (repository.length > 255) fail('the repository path is longer than 255 characters');
  return { registry, repository, tag: tag ?? (digest ? undefined : 'latest'), digest, original: text };
}

/** The reference in canonical form: `registry/repository[:tag][@digest]`. */
export function formatReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** Whether the registry is on this machine, where registries commonly serve plain HTTP (as Docker assumes). */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.replace(/:[0-9]+$/, '');
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}
