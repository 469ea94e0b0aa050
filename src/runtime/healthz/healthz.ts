import type { IncomingMessage, ServerResponse } from 'node:http';

/** A probe check: resolve to pass, throw (or reject) to fail with that message. */
export type Checker = () => void | Promise<void>;

/** Always passes: the process is alive enough to answer. */
export const ping: Checker = () => undefined;

/**
 * `/healthz` and `/readyz` handlers over named checks, as controller-runtime's
 * healthz package: 200 `ok` when every check passes, 503 listing the failed
 * ones otherwise. `?verbose` lists every check.
 */
export class HealthProbes {
  private readonly liveness = new Map<string, Checker>();
  private readonly readiness = new Map<string, Checker>();

  addHealthzCheck(name: string, check: Checker): void {
    this.liveness.set(name, check);
  }

  addReadyzCheck(name: string, check: Checker): void {
    this.readiness.set(name, check);
  }

  /** Routes `/healthz` and `/readyz` (and `/healthz/<check>`); 404 otherwise. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://probe');
    const [, endpoint, only] = url.pathname.split('/');
    const checks = endpoint === 'healthz' ? this.liveness : endpoint === 'readyz' ? this.readiness : undefined;
    if (!checks) {
      res.statusCode = 404;
      res.end('not found\n');
      return;
    }
    const selected = [...checks.entries()].filter(([name]) => !only || name === only);
    if (only && selected.length === 0) {
      res.statusCode = 404;
      res.end(`no check named "${only}"\n`);
      return;
    }
    const results = await Promise.all(
      selected.map(async ([name, check]) => {
        try {
          await check();
          return { name, error: undefined };
        } catch (err) {
          return { name, error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
    const failed = results.filter((result) => result.error !== undefined);
    res.statusCode = failed.length ? 503 : 200;
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    if (!failed.length && !url.searchParams.has('verbose')) {
      res.end('ok');
      return;
    }
    const lines = results.map((result) =>
      result.error === undefined ? `[+]${result.name} ok` : `[-]${result.name} failed: ${result.error}`,
    );
    res.end(`${lines.join('\n')}\n${failed.length ? `${endpoint} check failed` : `${endpoint} check passed`}\n`);
  }
}
