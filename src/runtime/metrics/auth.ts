import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../log/log.js';
import type { RestClient } from '../transport/rest.js';

/** controller-runtime's cache lifetimes for the metrics filter: authentications 1 min, allows 5 min, denials 30 s. */
export const AUTHENTICATION_CACHE_TTL_MS = 60_000;
export const AUTHORIZATION_ALLOW_CACHE_TTL_MS = 5 * 60_000;
export const AUTHORIZATION_DENY_CACHE_TTL_MS = 30_000;
/** Bound on each review call, as controller-runtime's TokenAccessReviewTimeout. */
const REVIEW_TIMEOUT_MS = 10_000;
/** Entries kept per cache; a scraper uses one token, so this only bounds abuse with many tokens. */
const MAX_CACHE_ENTRIES = 1024;

/** Who a TokenReview said the caller is. */
interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The filter's verdict on one request: 200 lets it through, anything else is answered with `message`. */
export interface AuthVerdict {
  status: 200 | 401 | 403 | 500;
  message: string;
}

/**
 * Authentication through TokenReview and authorization through
 * SubjectAccessReview for the metrics endpoint, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization`: a bearer token is
 * reviewed by the API server, and its user must be allowed the request's
 * verb (the lowercase HTTP method) on the non-resource URL (the path), which
 * the `metrics-reader` ClusterRole grants for `get /metrics`. Answers are
 * cached so a scrape every few seconds costs no API calls. The manager's
 * own identity needs `create` on tokenreviews and subjectaccessreviews
 * (kubebuilder's `metrics_auth_role`).
 */
export class MetricsAuthFilter {
  private readonly authentications = new TtlCache<ReviewedUser | null>();
  private readonly authorizations = new TtlCache<boolean>();

  constructor(
    private readonly rest: RestClient,
    private readonly log: Logger,
  ) {}

  /** Decides whether `req` may read metrics. */
  async check(req: IncomingMessage): Promise<AuthVerdict> {
    const token = bearerToken(req.headers.authorization);
    if (!token) return { status: 401, message: 'Unauthorized' };
    let user: ReviewedUser | null;
    try {
      user = await this.authenticate(token);
    } catch (err) {
      this.log.error({ err }, 'Authentication failed');
      return { status: 500, message: 'Authentication failed' };
    }
    if (!user) return { status: 401, message: 'Unauthorized' };
    const verb = (req.method ?? 'GET').toLowerCase();
    const path = new URL(req.url ?? '/', 'https://metrics').pathname;
    try {
      if (await this.authorize(user, verb, path)) return { status: 200, message: 'ok' };
    } catch (err) {
      const message = `Authorization for user ${user.username} failed`;
      this.log.error({ err }, message);
      return { status: 500, message };
    }
    return { status: 403, message: `Authorization denied for user ${user.username}` };
  }

  private async authenticate(token: string): Promise<ReviewedUser | null> {
    // The cache key is a hash: the token itself never sits in memory longer than the request.
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.authentications.get(key);
    if (cached !== undefined) return cached;
    const review = await this.rest.request<{
      status?: { authenticated?: boolean; user?: ReviewedUser; error?: string };
    }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      timeoutMs: REVIEW_TIMEOUT_MS,
    });
    const user = review.status?.authenticated && review.status.user?.username ? review.status.user : null;
    this.authentications.set(key, user, AUTHENTICATION_CACHE_TTL_MS);
    return user;
  }

  private async authorize(user: ReviewedUser, verb: string, path: string): Promise<boolean> {
    const key = JSON.stringify([
      user.username,
      user.uid ?? '',
      [...(user.groups ?? [])].sort(),
      user.extra ?? {},
      verb,
      path,
    ]);
    const cached = this.authorizations.get(key);
    if (cached !== undefined) return cached;
    const review = await this.rest.request<{ status?: { allowed?: boolean } }>(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            uid: user.uid,
            groups: user.groups,
            extra: user.extra,
            nonResourceAttributes: { path, verb },
          },
        },
        timeoutMs: REVIEW_TIMEOUT_MS,
      },
    );
    const allowed = review.status?.allowed === true;
    this.authorizations.set(key, allowed, allowed ? AUTHORIZATION_ALLOW_CACHE_TTL_MS : AUTHORIZATION_DENY_CACHE_TTL_MS);
    return allowed;
  }
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/** A small map whose entries expire; the oldest entry goes first when it is full. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= MAX_CACHE_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, expires: Date.now() + ttlMs });
  }
}
