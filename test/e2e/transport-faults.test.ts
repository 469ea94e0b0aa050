/**
 * The REST client's retries and timeouts against the real kube-apiserver,
 * with the fault proxy in front of it injecting what a healthy server will
 * not do on demand: throttling (429 + Retry-After), 5xx answers, hung
 * requests and reset connections. Every request the proxy does not fault
 * reaches the real server, so "then it succeeds" means the real object was
 * written or read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { Client, Manager, newControllerManagedBy } from '../../src/runtime/index.js';
import { silentLogger } from '../../src/runtime/log/index.js';
import {
  ApiConnectionError,
  ConfigMap,
  NotFoundError,
  RequestTimeoutError,
  ServerError,
  TooManyRequestsError,
} from '../../src/runtime/api/index.js';
import { RestClient, type WatchEvent } from '../../src/runtime/transport/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';

const NAMESPACE = 'transport';
const CONFIGMAPS = /^\/api\/v1\/namespaces\/transport\/configmaps/;

function configMap(name: string): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NAMESPACE },
    data: { created: 'through the proxy' },
  };
}

describe('REST client retries and timeouts, through the fault proxy', () => {
  let env: Environment;
  let proxy: FaultProxy;
  /** Straight to the API server, to check what really happened. */
  let direct: Client;
  /** Through the proxy, with the default options. */
  let client: Client;

  before(async () => {
    env = await startControlPlane();
    proxy = await startFaultProxy(env);
    direct = new Client({ rest: new RestClient(env.kubeConfig) });
    client = new Client({ rest: new RestClient(proxy.kubeConfig) });
    await direct.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    // Resolve ConfigMap's kind now, so discovery requests do not mix into the counts below.
    await client.create(configMap('warm-up'));
  });

  after(async () => {
    await proxy?.stop();
    await env?.stop();
  });

  it('retries a create answered 429 with Retry-After: 1, waits about that long, and then creates the real object', async () => {
    const match = { method: 'POST', path: CONFIGMAPS };
    const before = proxy.count(match);
    const remove = proxy.addRule({
      match,
      action: { type: 'status', status: 429, headers: { 'Retry-After': '1' } },
      times: 2,
    });
    const started = performance.now();
    try {
      const created = await client.create(configMap('after-throttling'));
      assert.equal(created.metadata?.name, 'after-throttling');
    } finally {
      remove();
    }
    const elapsed = performance.now() - started;
    assert.equal(proxy.count(match) - before, 3, 'two throttled attempts, then the one the server answered');
    // Two waits of Retry-After: 1 s. The upper bound only catches "waited far too long" on a busy machine.
    assert.ok(elapsed >= 1900, `the client waited for Retry-After twice (took ${Math.round(elapsed)} ms)`);
    assert.ok(elapsed < 20_000, `took ${Math.round(elapsed)} ms`);
    const stored = await direct.get(ConfigMap, { namespace: NAMESPACE, name: 'after-throttling' });
    assert.equal(stored.data?.created, 'through the proxy');
    // The retries were spaced by the wait, not sent back to back.
    const attempts = proxy.requests.filter((r) => r.method === 'POST' && CONFIGMAPS.test(r.path)).slice(-3);
    assert.ok(attempts[1]!.at - attempts[0]!.at >= 950, 'the first retry came after Retry-After');
  });

  it('retries a read answered 503 with Retry-After, and returns the real object', async () => {
    const match = { method: 'GET', path: /\/configmaps\/warm-up$/ };
    const remove = proxy.addRule({
      match,
      action: { type: 'status', status: 503, headers: { 'Retry-After': '1' } },
      times: 1,
    });
    try {
      const read = await client.apiReader().get(ConfigMap, { namespace: NAMESPACE, name: 'warm-up' });
      assert.equal(read.metadata?.name, 'warm-up');
    } finally {
      remove();
    }
    assert.equal(proxy.count(match), 2);
  });

  it('does not retry a create answered 500 without Retry-After (the write may have happened), as client-go does', async () => {
    const match = { method: 'POST', path: CONFIGMAPS };
    const before = proxy.count(match);
    const remove = proxy.addRule({ match, action: { type: 'status', status: 500 }, times: 5 });
    try {
      await assert.rejects(client.create(configMap('after-500')), ServerError);
    } finally {
      remove();
    }
    assert.equal(proxy.count(match) - before, 1, 'exactly one attempt');
  });

  it('does not retry a 429 without Retry-After (client-go waits only when the server says how long)', async () => {
    const match = { method: 'PUT', path: /\/configmaps\/warm-up$/ };
    const current = await direct.get(ConfigMap, { namespace: NAMESPACE, name: 'warm-up' });
    const remove = proxy.addRule({ match, action: { type: 'status', status: 429 }, times: 5 });
    try {
      await assert.rejects(client.update({ ...current, data: { v: '2' } }), TooManyRequestsError);
    } finally {
      remove();
    }
    assert.equal(proxy.count(match), 1);
  });

  it('gives up after 10 retries, as client-go does, and reports the throttling', async () => {
    const match = { method: 'GET', path: /\/configmaps\/always-throttled$/ };
    // Retry-After: 0 asks for no wait, so eleven attempts take no time.
    const remove = proxy.addRule({ match, action: { type: 'status', status: 429, headers: { 'Retry-After': '0' } } });
    try {
      await assert.rejects(
        client.apiReader().get(ConfigMap, { namespace: NAMESPACE, name: 'always-throttled' }),
        TooManyRequestsError,
      );
    } finally {
      remove();
    }
    assert.equal(proxy.count(match), 11, 'the first attempt and 10 retries');
  });

  it('retries a GET whose connection was reset, but not a POST', async () => {
    const get = { method: 'GET', path: /\/configmaps\/warm-up$/ };
    const getsBefore = proxy.count(get);
    let remove = proxy.addRule({ match: get, action: { type: 'reset' }, times: 1 });
    try {
      const read = await client.apiReader().get(ConfigMap, { namespace: NAMESPACE, name: 'warm-up' });
      assert.equal(read.metadata?.name, 'warm-up');
    } finally {
      remove();
    }
    assert.equal(proxy.count(get) - getsBefore, 2);

    const post = { method: 'POST', path: CONFIGMAPS };
    const postsBefore = proxy.count(post);
    remove = proxy.addRule({ match: post, action: { type: 'reset' }, times: 1 });
    try {
      await assert.rejects(client.create(configMap('after-reset')), (err: unknown) => {
        assert.ok(err instanceof ApiConnectionError, `got ${String(err)}`);
        assert.match(err.message, /POST \/api\/v1\/namespaces\/transport\/configmaps: no response from the API server/);
        return true;
      });
    } finally {
      remove();
    }
    assert.equal(proxy.count(post) - postsBefore, 1);
  });

  it('fails a hung request at the client timeout with an error naming the call and the limit', async () => {
    const hurried = new Client({ rest: new RestClient(proxy.kubeConfig, { timeoutMs: 1500 }) });
    const remove = proxy.addRule({ match: { method: 'GET', path: /\/configmaps\/hung$/ }, action: { type: 'hang' } });
    const started = performance.now();
    try {
      await assert.rejects(
        hurried.apiReader().get(ConfigMap, { namespace: NAMESPACE, name: 'hung' }),
        (err: unknown) => {
          assert.ok(err instanceof RequestTimeoutError, `got ${String(err)}`);
          assert.equal(
            err.message,
            "GET /api/v1/namespaces/transport/configmaps/hung: timed out after 1.5s without a complete answer from the API server (the request timeout; raise it with the RestClient's timeoutMs option or the call's timeoutMs)",
          );
          return true;
        },
      );
    } finally {
      remove();
    }
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 1400 && elapsed < 15_000, `failed after ${Math.round(elapsed)} ms, expected about 1500`);
  });

  it('lets one call override the timeout', async () => {
    // The client's default (60 s) would hold the test; the call asks for 700 ms.
    const rest = new RestClient(proxy.kubeConfig);
    const remove = proxy.addRule({
      match: { method: 'GET', path: /\/configmaps\/hung-too$/ },
      action: { type: 'hang' },
    });
    const started = performance.now();
    try {
      await assert.rejects(
        rest.request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps/hung-too`, { timeoutMs: 700 }),
        /timed out after 700ms/,
      );
    } finally {
      remove();
    }
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 600 && elapsed < 15_000, `failed after ${Math.round(elapsed)} ms, expected about 700`);
    // A caller's own abort is not reported as a timeout.
    const abort = new AbortController();
    const removeAgain = proxy.addRule({
      match: { method: 'GET', path: /\/configmaps\/hung-too$/ },
      action: { type: 'hang' },
    });
    try {
      const pending = rest.request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps/hung-too`, {
        signal: abort.signal,
      });
      setTimeout(() => abort.abort(), 200);
      await assert.rejects(pending, (err: unknown) => !(err instanceof RequestTimeoutError));
    } finally {
      removeAgain();
    }
  });

  it('does not cut a watch at the request timeout', async () => {
    const rest = new RestClient(proxy.kubeConfig, { timeoutMs: 1000 });
    const watchesBefore = proxy.count({ path: CONFIGMAPS, watch: true });
    const abort = new AbortController();
    const events: WatchEvent[] = [];
    const writer = setTimeout(() => void direct.create(configMap('seen-by-a-long-watch')), 3000);
    try {
      const { resourceVersion } = (
        await rest.request<{ metadata: { resourceVersion: string } }>(
          'GET',
          `/api/v1/namespaces/${NAMESPACE}/configmaps`,
        )
      ).metadata;
      const opened = performance.now();
      for await (const event of rest.watch(
        `/api/v1/namespaces/${NAMESPACE}/configmaps`,
        { resourceVersion, allowWatchBookmarks: false },
        abort.signal,
        60_000,
      )) {
        events.push(event);
        if ((event.object as V1ConfigMap).metadata?.name === 'seen-by-a-long-watch') {
          assert.ok(performance.now() - opened > 2500, 'the event came after the request timeout had long passed');
          break;
        }
      }
    } finally {
      clearTimeout(writer);
      abort.abort();
    }
    assert.equal(events.at(-1)?.type, 'ADDED');
    assert.equal(
      proxy.count({ path: CONFIGMAPS, watch: true }) - watchesBefore,
      1,
      'one watch, never cut and reopened',
    );
  });

  it("bounds the wait for a watch's response headers by the request timeout", async () => {
    const rest = new RestClient(proxy.kubeConfig, { timeoutMs: 1000 });
    const remove = proxy.addRule({ match: { path: CONFIGMAPS, watch: true }, action: { type: 'hang' } });
    const started = performance.now();
    try {
      await assert.rejects(
        (async () => {
          for await (const _event of rest.watch(
            `/api/v1/namespaces/${NAMESPACE}/configmaps`,
            {},
            new AbortController().signal,
            60_000,
          ))
            break;
        })(),
        (err: unknown) =>
          err instanceof RequestTimeoutError &&
          /^watch \/api\/v1\/namespaces\/transport\/configmaps: timed out after 1s/.test(err.message),
      );
    } finally {
      remove();
    }
    assert.ok(performance.now() - started < 15_000);
  });

  describe('write fence', () => {
    /** A fence that lets the first `passes` checks through and refuses every later one. */
    function fenceAfter(passes: number): { fence: () => void; refusal: Error; checks: () => number } {
      const refusal = new Error('refused by the test fence');
      let checks = 0;
      const fence = (): void => {
        if (++checks > passes) throw refusal;
      };
      return { fence, refusal, checks: () => checks };
    }
    const writesSeen = (): number => proxy.requests.filter((request) => request.method !== 'GET').length;

    it('a write the fence refuses never reaches the server; reads are not fenced', async () => {
      const rest = new RestClient(proxy.kubeConfig);
      const { fence, refusal } = fenceAfter(0);
      rest.fenceWrites(fence);
      const before = writesSeen();
      const path = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
      try {
        for (const [method, target, body] of [
          ['POST', path, configMap('fenced')],
          ['PUT', `${path}/warm-up`, configMap('warm-up')],
          ['PATCH', `${path}/warm-up`, {}],
          ['DELETE', `${path}/warm-up`, undefined],
        ] as const) {
          await assert.rejects(
            rest.request(method, target, {
              body,
              contentType: method === 'PATCH' ? 'application/merge-patch+json' : undefined,
            }),
            (err: unknown) => err === refusal,
            `${method} is refused with the fence's own error`,
          );
        }
        await assert.rejects(
          new Client({ rest }).exec({ namespace: NAMESPACE, name: 'no-such-pod' }, undefined, ['true']),
          (err: unknown) => err === refusal,
          'an exec upgrade is refused too',
        );
        assert.equal(writesSeen() - before, 0, 'no write reached the server');
        assert.equal(proxy.count({ path: /\/exec$/ }), 0, 'no exec reached the server');
        assert.equal(
          (await rest.request<V1ConfigMap>('GET', `${path}/warm-up`)).metadata?.name,
          'warm-up',
          'a read goes through',
        );
      } finally {
        await rest.close();
      }
    });

    // The fence runs again when the request has its socket: a process frozen between the first
    // check and the socket must not send on the strength of the first. Direct to the API server
    // (TLS, so a new connection waits for its handshake) and through the proxy (plain HTTP).
    for (const [route, connection] of [
      ['TLS', 'new'],
      ['TLS', 'pooled'],
      ['plain HTTP', 'new'],
      ['plain HTTP', 'pooled'],
    ] as const) {
      it(`a write refused once its socket is ready is never sent (${route}, ${connection} connection)`, async () => {
        const rest = new RestClient(route === 'TLS' ? env.kubeConfig : proxy.kubeConfig);
        const name = `socket-fenced-${route === 'TLS' ? 'tls' : 'plain'}-${connection}`;
        try {
          if (connection === 'pooled') await rest.request('GET', `/api/v1/namespaces/${NAMESPACE}/configmaps/warm-up`);
          const { fence, refusal, checks } = fenceAfter(1);
          rest.fenceWrites(fence);
          await assert.rejects(
            rest.request('POST', `/api/v1/namespaces/${NAMESPACE}/configmaps`, { body: configMap(name) }),
            (err: unknown) => err === refusal,
          );
          assert.equal(checks(), 2, 'checked before the request and again at its socket');
          await assert.rejects(
            direct.get(ConfigMap, { namespace: NAMESPACE, name }),
            NotFoundError,
            'the ConfigMap was never created',
          );
        } finally {
          await rest.close();
        }
      });
    }
  });

  describe('connection pool', () => {
    const path = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
    type List = { metadata: { resourceVersion: string } };
    /** The proxy's numbers of the connections each step's requests arrived on. */
    interface Connections {
      lists: number[];
      watch: number;
      get: number;
    }

    /**
     * On a new client through the proxy: `lists` GETs at once (leaving that many
     * free connections in the pool), then a watch, then one more GET while the
     * watch is open. Returns where each arrived.
     */
    async function listWatchGet(lists: number): Promise<Connections> {
      const rest = new RestClient(proxy.kubeConfig);
      const abort = new AbortController();
      let watching: Promise<unknown> | undefined;
      try {
        const from = proxy.requests.length;
        const answers = await Promise.all(Array.from({ length: lists }, () => rest.request<List>('GET', path)));
        const { resourceVersion } = answers[0]!.metadata;
        const listed = proxy.requests.slice(from).map((request) => request.connection);
        const watchFrom = proxy.requests.length;
        watching = (async () => {
          for await (const _event of rest.watch(
            path,
            { resourceVersion, allowWatchBookmarks: false },
            abort.signal,
            60_000,
          )) {
            /* no events are written */
          }
        })().catch(() => undefined);
        const watch = await eventually('the proxy sees the watch request', () =>
          proxy.requests.slice(watchFrom).find((request) => request.watch),
        );
        const getFrom = proxy.requests.length;
        await rest.request('GET', path);
        return { lists: listed, watch: watch.connection, get: proxy.requests[getFrom]!.connection };
      } finally {
        abort.abort();
        await watching;
        await rest.close();
      }
    }

    it('a watch does not take the last free connection, so the next short call reuses it', async () => {
      const seen = await listWatchGet(1);
      assert.notEqual(
        seen.watch,
        seen.lists[0],
        'the watch opened its own connection instead of taking the only free one',
      );
      assert.equal(
        seen.get,
        seen.lists[0],
        'the GET after the watch reused the pooled connection rather than opening one',
      );
    });

    it('a watch takes a pooled connection while another one stays free', async () => {
      const seen = await listWatchGet(2);
      assert.equal(new Set(seen.lists).size, 2, 'two lists at once took two connections');
      assert.ok(
        seen.lists.includes(seen.watch),
        `the watch took a pooled connection, not a new one (it came on ${seen.watch}, the lists on ${seen.lists.join(' and ')})`,
      );
      assert.ok(seen.lists.includes(seen.get) && seen.get !== seen.watch, 'the GET used the other pooled connection');
    });
  });
  describe('every Client call takes { signal, timeoutMs }', () => {
    const HUNG_POST = { method: 'POST', path: CONFIGMAPS } as const;

    it('abandons a hung write at once when its signal aborts, and bounds it by its timeoutMs', async () => {
      const remove = proxy.addRule({ match: HUNG_POST, action: { type: 'hang' } });
      try {
        const abort = new AbortController();
        const postsBefore = proxy.count(HUNG_POST);
        const pending = client.create(configMap('abandoned'), { signal: abort.signal });
        await eventually('the create to reach the proxy', () => proxy.count(HUNG_POST) > postsBefore, 10_000);
        const aborted = performance.now();
        abort.abort(new Error('the caller gave up'));
        await assert.rejects(pending, /the caller gave up/);
        const late = performance.now() - aborted;
        assert.ok(late < 500, `the write was abandoned ${Math.round(late)} ms after the abort`);

        const started = performance.now();
        await assert.rejects(client.create(configMap('bounded'), { timeoutMs: 500 }), RequestTimeoutError);
        const elapsed = performance.now() - started;
        assert.ok(elapsed >= 400 && elapsed < 10_000, `failed after ${Math.round(elapsed)} ms, expected about 500`);
      } finally {
        remove();
      }
      await assert.rejects(direct.get(ConfigMap, { namespace: NAMESPACE, name: 'abandoned' }), NotFoundError);
    });

    it("a reconcile's client carries the reconcile's signal: a write hung when it aborts is abandoned at once", async () => {
      const mgr = new Manager({
        kubeConfig: proxy.kubeConfig,
        cache: { namespaces: [NAMESPACE] },
        metrics: { bindAddress: '0' },
        healthProbeBindAddress: '0',
        handleSignals: false,
        // The reconcile signal aborts when the grace period runs out: short, so the hung write is cut by it.
        gracefulShutdownTimeoutMs: 300,
        logger: silentLogger,
      });
      const seen: { abortedAt?: number; reason?: unknown; rejectedAt?: number; error?: unknown } = {};
      newControllerManagedBy(mgr)
        .for(ConfigMap)
        .withEventFilter({ create: (object) => object.metadata?.name === 'reconcile-trigger', update: () => false })
        .named('hung-writer')
        .complete({
          reconcile: async (ctx) => {
            ctx.signal.addEventListener(
              'abort',
              () => {
                seen.abortedAt = performance.now();
                seen.reason = ctx.signal.reason;
              },
              { once: true },
            );
            // No signal passed: the call carries the reconcile's.
            await mgr
              .getClient()
              .create(configMap('written-by-reconcile'))
              .catch((err: unknown) => {
                seen.rejectedAt = performance.now();
                seen.error = err;
              });
          },
        });
      const remove = proxy.addRule({ match: HUNG_POST, action: { type: 'hang' } });
      const running = mgr.start();
      try {
        const postsBefore = proxy.count(HUNG_POST);
        await direct.create(configMap('reconcile-trigger'));
        await eventually(
          "the reconcile's create to hang at the proxy",
          () => proxy.count(HUNG_POST) > postsBefore,
          30_000,
        );
        mgr.stop();
        await running.catch(() => undefined);
        // The rule still holds the request: only the signal can have ended the write by now.
        await sleep(1000);
        assert.ok(seen.abortedAt !== undefined, 'the reconcile signal aborted');
        assert.ok(seen.rejectedAt !== undefined, 'the write still hung a second after the reconcile signal aborted');
      } finally {
        remove();
      }
      const late = seen.rejectedAt - seen.abortedAt;
      assert.ok(
        late >= 0 && late < 500,
        `the write was abandoned ${Math.round(late)} ms after the reconcile signal aborted`,
      );
      // Ended by the reconcile's signal, not by its timeout or by the manager closing its connections.
      assert.equal(seen.error, seen.reason, `the write ended with ${String(seen.error)}, not the signal's reason`);
    });
  });
});
