/**
 * The Client, controllerutil and EventRecorder against a real kube-apiserver.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { CoreV1Event, KubernetesObject, V1ConfigMap, V1Deployment, V1ObjectMeta } from '@kubernetes/client-node';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { Client, Deployment, createLogger, defineKind } from '../../src/runtime/index.js';
import {
  AlreadyExistsError,
  ApiError,
  ConfigMap,
  ConflictError,
  Event,
  InvalidError,
  Namespace,
  NotFoundError,
  type Kind,
  type ObjectKey,
} from '../../src/runtime/api/index.js';
import {
  jsonPatch,
  mergePatch,
  strategicMergePatch,
  type ListOptions,
  type Stored,
  type Reader,
} from '../../src/runtime/client/index.js';
import { createOrUpdate } from '../../src/runtime/controllerutil/index.js';
import { newEventRecorder } from '../../src/runtime/recorder/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import { NoKindMatchError } from '../../src/runtime/api/index.js';
import { startControlPlane } from './control-plane.js';

interface Widget extends KubernetesObject {
  metadata?: V1ObjectMeta;
  spec?: { size?: number; color?: string };
  status?: { ready?: boolean; phase?: string };
}
const Widget = defineKind<Widget>({
  group: 'test.example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

function crd(plural: string, kind: string): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.test.example.com` },
    spec: {
      group: 'test.example.com',
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } },
                status: { type: 'object', properties: { ready: { type: 'boolean' }, phase: { type: 'string' } } },
              },
            },
          },
        },
      ],
    },
  };
}

const NS = 'client-e2e';

function configMap(name: string, data: Record<string, string> = {}, labels?: Record<string, string>): V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, labels }, data };
}

function deployment(name: string, replicas = 1): V1Deployment {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'example.com/app:1' }] } },
    },
  };
}

async function rejectsWith(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => Error,
  message?: RegExp,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('Client on a real API server', () => {
  let env: Environment;
  let rest: RestClient;
  let client: Client;

  before(async () => {
    env = await startControlPlane({ crds: [crd('widgets', 'Widget')] });
    rest = new RestClient(env.kubeConfig);
    client = new Client({ rest, fieldOwner: 'client-e2e' });
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  after(async () => {
    await env?.stop();
  });

  describe('CRUD and typed errors', () => {
    it('creates, reads, updates and deletes a ConfigMap', async () => {
      // Writes return Stored<T>, as reads do: the server-set fields are typed as present (no `?.` or `!`).
      const created = await client.create(configMap('crud', { a: '1' }));
      assert.ok(created.metadata.uid, 'the server object comes back with a uid');
      assert.equal(created.apiVersion, 'v1');
      assert.equal(created.kind, 'ConfigMap');

      const read = await client.get(ConfigMap, { namespace: NS, name: 'crud' });
      assert.deepEqual(read.data, { a: '1' });
      assert.equal(read.kind, 'ConfigMap');

      read.data = { a: '2', b: '3' };
      const updated = await client.update(read);
      assert.deepEqual(updated.data, { a: '2', b: '3' });
      assert.notEqual(updated.metadata.resourceVersion, created.metadata.resourceVersion);

      await client.delete(updated);
      await rejectsWith(client.get(ConfigMap, { namespace: NS, name: 'crud' }), NotFoundError);
    });

    it('creates, scales and deletes a Deployment', async () => {
      const created = await client.create(deployment('web', 1));
      assert.equal(created.spec?.replicas, 1);
      const read = await client.get(Deployment, { namespace: NS, name: 'web' });
      read.spec!.replicas = 3;
      assert.equal((await client.update(read)).spec?.replicas, 3);
      assert.equal((await client.get(Deployment, { namespace: NS, name: 'web' })).spec?.replicas, 3);
      await client.delete(read, { propagationPolicy: 'Foreground' });
    });

    it('returns AlreadyExistsError, ConflictError and NotFoundError', async () => {
      const first = await client.create(configMap('errors', { v: '1' }));
      await rejectsWith(client.create(configMap('errors')), AlreadyExistsError);

      await client.update({ ...first, data: { v: '2' } });
      // `first` still carries the old resourceVersion: an optimistic-lock failure.
      await rejectsWith(client.update({ ...first, data: { v: '3' } }), ConflictError);

      await rejectsWith(client.get(ConfigMap, { namespace: NS, name: 'missing' }), NotFoundError);
      await rejectsWith(client.delete(configMap('missing')), NotFoundError);
      await rejectsWith(
        client.update({ ...configMap('missing'), metadata: { name: 'missing', namespace: NS, resourceVersion: '1' } }),
        NotFoundError,
      );
      await rejectsWith(client.delete(first, { preconditions: { uid: 'not-the-uid' } }), ConflictError);
    });

    it('does not persist dry-run writes', async () => {
      const dry = await client.create(configMap('dry-run', { x: 'y' }), { dryRun: 'All' });
      assert.deepEqual(dry.data, { x: 'y' });
      await rejectsWith(client.get(ConfigMap, { namespace: NS, name: 'dry-run' }), NotFoundError);
    });

    it('rejects objects it cannot place, with a message saying how to fix them', async () => {
      await rejectsWith(
        client.create({ metadata: { name: 'x', namespace: NS } }),
        Error,
        /has no apiVersion: set apiVersion and kind/,
      );
      await rejectsWith(
        client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no-ns' } }),
        Error,
        /metadata\.namespace is empty/,
      );
      await rejectsWith(
        client.update({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: NS } }),
        Error,
        /metadata\.name is empty/,
      );
      await rejectsWith(
        client.create({ apiVersion: 'v1', kind: 'NoSuchKind', metadata: { name: 'x', namespace: NS } }),
        NoKindMatchError,
      );
      await rejectsWith(
        client.create({ apiVersion: 'nosuch.example.com/v1', kind: 'Thing', metadata: { name: 'x', namespace: NS } }),
        NoKindMatchError,
      );
    });
  });

  describe('list', () => {
    before(async () => {
      await client.create(configMap('list-a', {}, { tier: 'front', team: 'x' }));
      await client.create(configMap('list-b', {}, { tier: 'front', team: 'y' }));
      await client.create(configMap('list-c', {}, { tier: 'back', team: 'x' }));
    });

    const names = (items: KubernetesObject[]): string[] =>
      items
        .map((item) => item.metadata!.name!)
        .filter((name) => name.startsWith('list-'))
        .sort();

    it('filters by label selector, in map and string form', async () => {
      assert.deepEqual(names(await client.list(ConfigMap, { namespace: NS, labelSelector: { tier: 'front' } })), [
        'list-a',
        'list-b',
      ]);
      assert.deepEqual(
        names(await client.list(ConfigMap, { namespace: NS, labelSelector: 'tier in (front,back),team!=y' })),
        ['list-a', 'list-c'],
      );
    });

    it('filters by field selector', async () => {
      assert.deepEqual(
        names(await client.list(ConfigMap, { namespace: NS, fieldSelector: { 'metadata.name': 'list-b' } })),
        ['list-b'],
      );
    });

    it('sets apiVersion and kind on every item', async () => {
      const items = await client.list(ConfigMap, { namespace: NS, labelSelector: { tier: 'front' } });
      assert.equal(items.length, 2);
      for (const item of items) {
        assert.equal(item.apiVersion, 'v1');
        assert.equal(item.kind, 'ConfigMap');
      }
    });

    it('follows continue tokens across pages', async () => {
      const paging = new Client({ rest, listPageSize: 1 });
      const requestsBefore = rest.requestCount;
      const items = await paging.list(ConfigMap, { namespace: NS, labelSelector: { team: 'x' } });
      assert.deepEqual(names(items), ['list-a', 'list-c']);
      // Two pages of one item each; the second page carries no continue token.
      assert.equal(rest.requestCount - requestsBefore, 2);
    });

    it('lists cluster-scoped kinds and across namespaces', async () => {
      const namespaces = await client.list(Namespace);
      assert.ok(namespaces.some((ns) => ns.metadata?.name === NS));
      const everywhere = await client.list(ConfigMap, { labelSelector: { tier: 'back' } });
      assert.deepEqual(names(everywhere), ['list-c']);
    });
  });

  describe('patch', () => {
    it('applies a merge patch, where null deletes a key', async () => {
      await client.create(configMap('merge', { keep: '1', drop: '2' }));
      const patched = await client.patch(
        configMap('merge'),
        mergePatch({ data: { drop: null, added: '3' }, metadata: { labels: { patched: 'yes' } } }),
      );
      assert.deepEqual(patched.data, { keep: '1', added: '3' });
      assert.equal(patched.metadata.labels?.patched, 'yes');
      assert.ok(patched.metadata.creationTimestamp);
    });

    it('applies a JSON patch, and a failing test op rejects the whole patch', async () => {
      await client.create(configMap('json', { a: '1' }));
      const patched = await client.patch(
        configMap('json'),
        jsonPatch([
          { op: 'test', path: '/data/a', value: '1' },
          { op: 'replace', path: '/data/a', value: 'one' },
          { op: 'add', path: '/data/b', value: 'two' },
        ]),
      );
      assert.deepEqual(patched.data, { a: 'one', b: 'two' });
      await assert.rejects(
        client.patch(
          configMap('json'),
          jsonPatch([
            { op: 'test', path: '/data/a', value: 'nope' },
            { op: 'remove', path: '/data/b' },
          ]),
        ),
        ApiError,
      );
      assert.deepEqual((await client.get(ConfigMap, { namespace: NS, name: 'json' })).data, { a: 'one', b: 'two' });
    });

    it('applies a strategic merge patch that merges containers by name', async () => {
      await client.create(deployment('strategic'));
      const patched = await client.patch(
        deployment('strategic'),
        strategicMergePatch({
          spec: { template: { spec: { containers: [{ name: 'app', env: [{ name: 'MODE', value: 'fast' }] }] } } },
        }),
      );
      const containers = patched.spec?.template.spec?.containers ?? [];
      assert.equal(containers.length, 1);
      assert.equal(
        containers[0]?.image,
        'example.com/app:1',
        'a merge patch would have replaced the list and lost the image',
      );
      assert.deepEqual(containers[0]?.env, [{ name: 'MODE', value: 'fast' }]);
    });

    it('surfaces the 415 a custom resource answers to a strategic merge patch', async () => {
      await client.create<Widget>({
        apiVersion: 'test.example.com/v1',
        kind: 'Widget',
        metadata: { name: 'no-smp', namespace: NS },
        spec: { size: 1 },
      });
      await assert.rejects(
        client.patch<Widget>(
          { apiVersion: 'test.example.com/v1', kind: 'Widget', metadata: { name: 'no-smp', namespace: NS } },
          strategicMergePatch({ spec: { size: 2 } }),
        ),
        (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.equal(err.statusCode, 415);
          return true;
        },
      );
    });

    it('server-side applies, reports a field-manager conflict as ConflictError, and takes over with force', async () => {
      const applied = await client.apply(configMap('ssa', { shared: 'from-a', onlyA: 'x' }), {
        fieldManager: 'manager-a',
      });
      assert.deepEqual(applied.data, { shared: 'from-a', onlyA: 'x' });

      await rejectsWith(
        client.apply(configMap('ssa', { shared: 'from-b' }), { fieldManager: 'manager-b' }),
        ConflictError,
        /conflict/i,
      );
      assert.equal((await client.get(ConfigMap, { namespace: NS, name: 'ssa' })).data?.shared, 'from-a');

      const forced = await client.patch(
        configMap('ssa', { shared: 'from-b' }),
        { type: 'apply' },
        { fieldManager: 'manager-b', force: true },
      );
      assert.deepEqual(forced.data, { shared: 'from-b', onlyA: 'x' });
      const managers = (forced.metadata?.managedFields ?? []).map((entry) => entry.manager);
      assert.ok(managers.includes('manager-b'));

      // manager-a now owns only onlyA; applying without it removes it.
      const shrunk = await client.apply(configMap('ssa', {}), { fieldManager: 'manager-a' });
      assert.deepEqual(shrunk.data, { shared: 'from-b' });
    });

    it('server-side applies an object read back from the server (managedFields and all)', async () => {
      const read = await client.get(ConfigMap, { namespace: NS, name: 'ssa' });
      assert.ok(read.metadata?.managedFields?.length);
      read.data = { ...read.data, extra: 'e' };
      const applied = await client.apply(read, { fieldManager: 'manager-b' });
      assert.equal(applied.data?.extra, 'e');
    });

    it('uses the client fieldOwner for apply, and needs one', async () => {
      const applied = await client.apply(configMap('ssa-owner', { k: 'v' }));
      assert.ok(
        applied.metadata?.managedFields?.some((entry) => entry.manager === 'client-e2e' && entry.operation === 'Apply'),
      );
      const anonymous = new Client({ rest });
      await rejectsWith(anonymous.apply(configMap('ssa-owner', { k: 'v' })), Error, /needs a field manager/);
      await rejectsWith(
        client.patch(configMap('ssa-owner'), mergePatch({}), { force: true }),
        Error,
        /force applies only to server-side apply/,
      );
    });
  });

  describe('status subresource', () => {
    const widget = (name: string): Widget => ({
      apiVersion: 'test.example.com/v1',
      kind: 'Widget',
      metadata: { name, namespace: NS },
      spec: { size: 1 },
    });

    it('status().update writes status, and update() leaves it alone', async () => {
      const created = await client.create({ ...widget('status-update'), status: { ready: true } });
      assert.equal(created.status, undefined, 'create ignores status when the subresource is enabled');

      const withStatus = await client
        .status()
        .update({ ...created, status: { ready: true, phase: 'Running' }, spec: { size: 99 } });
      assert.deepEqual(withStatus.status, { ready: true, phase: 'Running' });
      assert.equal(withStatus.spec?.size, 1, 'a status update does not change spec');
      assert.notEqual(withStatus.metadata.resourceVersion, created.metadata.resourceVersion);

      const specChange = await client.update({ ...withStatus, spec: { size: 2 }, status: { ready: false } });
      assert.equal(specChange.spec?.size, 2);
      assert.deepEqual(specChange.status, { ready: true, phase: 'Running' }, 'an update does not change status');
    });

    it('status().patch with merge and apply patches', async () => {
      await client.create(widget('status-patch'));
      const merged = await client.status().patch(widget('status-patch'), mergePatch({ status: { phase: 'Pending' } }));
      assert.deepEqual(merged.status, { phase: 'Pending' });
      const applied = await client.status().patch(
        {
          apiVersion: 'test.example.com/v1',
          kind: 'Widget',
          metadata: { name: 'status-patch', namespace: NS },
          status: { ready: true },
        },
        { type: 'apply' },
        { fieldManager: 'status-manager' },
      );
      assert.deepEqual(applied.status, { phase: 'Pending', ready: true });
      const read = await client.get(Widget, { namespace: NS, name: 'status-patch' });
      assert.deepEqual(read.status, { phase: 'Pending', ready: true });
    });
  });

  describe('deleteAllOf', () => {
    it('deletes only the objects matching the selector, in that namespace', async () => {
      await client.create(configMap('bulk-1', {}, { bulk: 'yes' }));
      await client.create(configMap('bulk-2', {}, { bulk: 'yes' }));
      await client.create(configMap('bulk-keep', {}, { bulk: 'no' }));
      await client.deleteAllOf(ConfigMap, { namespace: NS, labelSelector: { bulk: 'yes' } });
      const left = await client.list(ConfigMap, { namespace: NS, labelSelector: 'bulk' });
      assert.deepEqual(
        left.map((cm) => cm.metadata?.name),
        ['bulk-keep'],
      );
    });

    it('deletes by field selector', async () => {
      await client.create(configMap('bulk-field', {}, { bulk: 'field' }));
      await client.deleteAllOf(ConfigMap, { namespace: NS, fieldSelector: { 'metadata.name': 'bulk-field' } });
      await rejectsWith(client.get(ConfigMap, { namespace: NS, name: 'bulk-field' }), NotFoundError);
    });

    it('refuses a namespaced kind without a namespace', async () => {
      await rejectsWith(client.deleteAllOf(ConfigMap, { labelSelector: { bulk: 'yes' } }), Error, /needs a namespace/);
    });
  });

  describe('kind lookup', () => {
    it('finds kinds not declared with defineKind through discovery', async () => {
      const limitRange = await client.create({
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'discovered', namespace: NS },
        spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] },
      } as KubernetesObject);
      assert.equal(limitRange.kind, 'LimitRange');
      const kind = await client.restMapper.kindFor('scheduling.k8s.io/v1', 'PriorityClass');
      assert.deepEqual(
        { plural: kind.plural, namespaced: kind.namespaced },
        { plural: 'priorityclasses', namespaced: false },
      );
    });

    it('sees a CRD installed after its group-version was first discovered', async () => {
      await rejectsWith(client.restMapper.kindFor('test.example.com/v1', 'Gadget'), NoKindMatchError);
      await env.installCRDs({ crds: [crd('gadgets', 'Gadget')] });
      const gadget = await client.create({
        apiVersion: 'test.example.com/v1',
        kind: 'Gadget',
        metadata: { name: 'g', namespace: NS },
        spec: { size: 3 },
      } as KubernetesObject);
      assert.equal(gadget.metadata?.name, 'g');
      const kind = await client.restMapper.kindFor('test.example.com/v1', 'Gadget');
      assert.equal(kind.plural, 'gadgets');
    });
  });

  describe('cached reads', () => {
    /** Stands in for the informer cache, which another module provides: records what the client asks it. */
    class RecordingReader implements Reader {
      readonly calls: string[] = [];
      async get<T extends KubernetesObject>(kind: Kind<T>, key: ObjectKey): Promise<Stored<T>> {
        this.calls.push(`get ${kind.kind} ${key.name}`);
        throw new NotFoundError(404, 'NotFound', `${kind.kind} "${key.name}" not found in cache`);
      }
      async list<T extends KubernetesObject>(kind: Kind<T>, _options?: ListOptions): Promise<Stored<T>[]> {
        this.calls.push(`list ${kind.kind}`);
        return [];
      }
    }

    it('reads from the cache when given one, and apiReader() bypasses it', async () => {
      await client.create(configMap('cached', { c: '1' }));
      const cache = new RecordingReader();
      const cached = new Client({ rest, cache });
      await rejectsWith(cached.get(ConfigMap, { namespace: NS, name: 'cached' }), NotFoundError, /not found in cache/);
      assert.deepEqual(await cached.list(ConfigMap, { namespace: NS }), []);
      assert.deepEqual(cache.calls, ['get ConfigMap cached', 'list ConfigMap']);

      const direct = await cached.apiReader().get(ConfigMap, { namespace: NS, name: 'cached' });
      assert.deepEqual(direct.data, { c: '1' });
      assert.equal(cache.calls.length, 2);
    });
  });

  describe('createOrUpdate', () => {
    it('creates, then leaves unchanged, then updates', async () => {
      const desired = (value: string) => (cm: V1ConfigMap) => {
        cm.data = { ...cm.data, setting: value };
        cm.metadata!.labels = { ...cm.metadata!.labels, owner: 'me' };
      };
      const obj = configMap('cou');
      assert.equal(await createOrUpdate(client, obj, desired('a')), 'created');
      assert.ok(obj.metadata?.uid, 'obj holds the created object');
      const createdVersion = obj.metadata?.resourceVersion;

      const again = configMap('cou');
      assert.equal(await createOrUpdate(client, again, desired('a')), 'unchanged');
      assert.equal(again.metadata?.resourceVersion, createdVersion);

      const changed = configMap('cou');
      assert.equal(await createOrUpdate(client, changed, desired('b')), 'updated');
      assert.notEqual(changed.metadata?.resourceVersion, createdVersion);
      const onServer = await client.get(ConfigMap, { namespace: NS, name: 'cou' });
      assert.deepEqual(onServer.data, { setting: 'b' });
      assert.equal(onServer.metadata?.labels?.owner, 'me');
    });

    it('refuses a mutate function that renames the object', async () => {
      await rejectsWith(
        createOrUpdate(client, configMap('cou-rename'), (cm) => {
          cm.metadata!.name = 'other';
        }),
        Error,
        /changed the object's name or namespace/,
      );
      await rejectsWith(client.get(ConfigMap, { namespace: NS, name: 'other' }), NotFoundError);
    });
  });

  describe('EventRecorder', () => {
    async function eventsFor(namespace: string, name: string): Promise<CoreV1Event[]> {
      return client.list(Event, { namespace, fieldSelector: { 'involvedObject.name': name } });
    }

    it('writes a core/v1 Event about a namespaced object', async () => {
      const subject = await client.create(configMap('evented'));
      const recorder = newEventRecorder(client, 'test-controller');
      await recorder.event(subject, 'Normal', 'Created', 'made the thing');
      await recorder.eventf(subject, 'Warning', 'Scaled', 'scaled %s to %d (%v)', 'evented', 3, true);

      const events = await eventsFor(NS, 'evented');
      assert.equal(events.length, 2);
      const normal = events.find((event) => event.reason === 'Created');
      assert.ok(normal);
      assert.equal(normal.type, 'Normal');
      assert.equal(normal.message, 'made the thing');
      assert.equal(normal.count, 1);
      assert.equal(normal.source?.component, 'test-controller');
      assert.equal(normal.reportingComponent, 'test-controller');
      assert.ok(normal.firstTimestamp && normal.lastTimestamp);
      assert.match(normal.metadata.name ?? '', /^evented\.[0-9a-f]+$/);
      assert.deepEqual(
        { ...normal.involvedObject, fieldPath: undefined },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'evented',
          namespace: NS,
          uid: subject.metadata?.uid,
          resourceVersion: subject.metadata?.resourceVersion,
          fieldPath: undefined,
        },
      );
      const warning = events.find((event) => event.reason === 'Scaled');
      assert.equal(warning?.type, 'Warning');
      assert.equal(warning?.message, 'scaled evented to 3 (true)');
    });

    it('counts repeats of the same event on one Event, and starts a new one when it is gone', async () => {
      const subject = await client.create(configMap('repeated'));
      const recorder = newEventRecorder(client, 'test-controller');
      // Not awaited one by one: concurrent repeats must still land on one Event.
      await Promise.all([1, 2, 3].map(() => recorder.event(subject, 'Warning', 'Failing', 'still failing')));
      await recorder.event(subject, 'Warning', 'Failing', 'a different message');

      let events = await eventsFor(NS, 'repeated');
      assert.equal(events.length, 2);
      const repeated = events.find((event) => event.message === 'still failing');
      assert.equal(repeated?.count, 3);
      assert.equal(events.find((event) => event.message === 'a different message')?.count, 1);

      await client.delete(repeated);
      await recorder.event(subject, 'Warning', 'Failing', 'still failing');
      events = (await eventsFor(NS, 'repeated')).filter((event) => event.message === 'still failing');
      assert.equal(events.length, 1);
      assert.equal(events[0]?.count, 1);
      assert.notEqual(events[0]?.metadata.name, repeated?.metadata.name);
    });

    it('puts Events about cluster-scoped objects in default', async () => {
      const namespace = await client.get(Namespace, { name: NS });
      await newEventRecorder(rest, 'test-controller').event(namespace, 'Normal', 'Seen', 'namespace seen');
      const events = await eventsFor('default', NS);
      assert.equal(events.length, 1);
      assert.equal(events[0]?.involvedObject.kind, 'Namespace');
    });

    it('logs instead of throwing when the Event cannot be written', async () => {
      const lines: string[] = [];
      const logger = createLogger({
        destination: new Writable({
          write(chunk: Buffer, _encoding, done) {
            lines.push(chunk.toString());
            done();
          },
        }),
      });
      const recorder = newEventRecorder(client, 'test-controller', logger);
      // The namespace does not exist, so the server refuses the Event.
      await recorder.event(
        { ...configMap('ghost'), metadata: { name: 'ghost', namespace: 'no-such-namespace' } },
        'Normal',
        'R',
        'm',
      );
      await recorder.event({ metadata: { name: 'no-kind' } }, 'Normal', 'R', 'm');
      await recorder.event(configMap('bad-type'), 'Info' as 'Normal', 'R', 'm');
      assert.equal(lines.length, 3, lines.join(''));
      assert.ok(lines.every((line) => line.includes('unable to record event')));
      assert.match(lines[0] ?? '', /NotFound|not found/);
      assert.match(lines[2] ?? '', /use 'Normal' or 'Warning'/);
    });
  });

  it('InvalidError carries the server validation failure', async () => {
    await rejectsWith(client.create(configMap('Not_A_Valid_Name')), InvalidError, /Not_A_Valid_Name/);
  });
});
