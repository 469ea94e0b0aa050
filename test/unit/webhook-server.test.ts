/**
 * The webhook server's HTTP contract without an API server: a
 * ConversionReview round trip through /convert, and AdmissionReview
 * answers for good and bad input, over a real HTTPS listener with a
 * certificate from envtest's TinyCA. (The same paths run through the real
 * kube-apiserver in test/e2e/webhook-*.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import { request } from 'node:https';
import type { KubernetesObject } from '@kubernetes/client-node';
import { defineKind } from '../../src/runtime/index.js';
import { ConflictError } from '../../src/runtime/api/index.js';
import { silentLogger } from '../../src/runtime/log/index.js';
import { AdmissionDeniedError, WebhookServer, type SpokeConversion } from '../../src/runtime/webhook/index.js';
import {
  admissionHandler,
  defaultingAdmit,
  validatingAdmit,
  MAX_ADMISSION_REQUEST_BYTES,
} from '../../src/runtime/webhook/admission.js';
import { TinyCA } from '../../src/runtime/certs/ca.js';

interface Hub extends KubernetesObject {
  spec?: { size?: number; mode?: string };
}
interface Alpha extends KubernetesObject {
  spec?: { replicas?: number };
}
interface Beta extends KubernetesObject {
  spec?: { count?: string };
}
const HubKind = defineKind<Hub>({
  group: 'unit.example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const AlphaKind = defineKind<Alpha>({
  group: 'unit.example.com',
  version: 'v1alpha1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const BetaKind = defineKind<Beta>({
  group: 'unit.example.com',
  version: 'v1beta1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});

const alpha: SpokeConversion<Hub, Alpha> = {
  kind: AlphaKind,
  convertTo: (spoke) => {
    if (spoke.spec?.replicas === 13) throw new Error('13 is unlucky');
    return { ...spoke, spec: { size: spoke.spec?.replicas } };
  },
  convertFrom: (hub) => ({ ...hub, spec: { replicas: hub.spec?.size } }),
};
const beta: SpokeConversion<Hub, Beta> = {
  kind: BetaKind,
  convertTo: (spoke) => ({ metadata: spoke.metadata, spec: { size: Number(spoke.spec?.count) } }),
  convertFrom: (hub) => ({ metadata: hub.metadata, spec: { count: String(hub.spec?.size) } }),
};

describe('webhook server over HTTPS', () => {
  let dir: string;
  let ca: TinyCA;
  let server: WebhookServer;
  const stop = new AbortController();
  let running: Promise<void>;

  function post(
    path: string,
    body: string | object,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ): Promise<{ status: number; body: string }> {
    const address = server.address()!;
    const port = Number(address.slice(address.lastIndexOf(':') + 1));
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          ca: ca.certPem,
          servername: 'localhost',
          headers,
          agent: false,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.once('error', reject);
      req.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webhook-unit-'));
    ca = await TinyCA.create('unit-webhook-ca');
    const pair = await ca.issue({
      usage: 'server',
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    });
    await writeFile(join(dir, 'tls.crt'), pair.certPem);
    await writeFile(join(dir, 'tls.key'), pair.keyPem);
    server = new WebhookServer({ host: '127.0.0.1', port: 0, certDir: dir }, silentLogger);
    server.conversions.register(HubKind, [alpha, beta]);
    server.ensureConversionHandler();
    server.register(
      '/mutate',
      admissionHandler(
        defaultingAdmit<Hub>({ default: (_ctx, obj) => void ((obj.spec ??= {}).size ??= 1) }),
        silentLogger,
      ),
    );
    server.register(
      '/validate',
      admissionHandler(
        validatingAdmit<Hub>({
          validateCreate: (_ctx, obj) => {
            if (obj.spec?.mode === 'boom') throw new TypeError('cannot read properties of undefined');
            if (obj.spec?.mode === 'conflict') throw new ConflictError(409, 'Conflict', 'try again');
            return obj.spec?.mode === 'warn' ? ['careful'] : undefined;
          },
          validateUpdate: () => {
            throw new AdmissionDeniedError('no updates', { code: 422, warnings: ['w1', 'w2'] });
          },
          validateDelete: () => undefined,
        }),
        silentLogger,
      ),
    );
    running = server.start(stop.signal);
    for (let i = 0; i < 200 && !server.address(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(server.address(), 'the server listens');
  });

  after(async () => {
    stop.abort();
    await running;
    await rm(dir, { recursive: true, force: true });
  });

  const conversionReview = (desiredAPIVersion: string, objects: object[]) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'uid-1', desiredAPIVersion, objects },
  });
  const widget = (version: string, spec: object, name = 'w') => ({
    apiVersion: `unit.example.com/${version}`,
    kind: 'Widget',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec,
  });

  describe('ConversionReview round trip on /convert', () => {
    it('converts spoke → hub → other spoke and back, losslessly, echoing the uid', async () => {
      const original = [
        widget('v1alpha1', { replicas: 3 }, 'a'),
        widget('v1', { size: 4 }, 'h'),
        widget('v1beta1', { count: '5' }, 'b'),
      ];
      const toBeta = await post('/convert', conversionReview('unit.example.com/v1beta1', original));
      assert.equal(toBeta.status, 200);
      const review = JSON.parse(toBeta.body) as {
        apiVersion: string;
        kind: string;
        response: { uid: string; result: { status: string }; convertedObjects: Array<ReturnType<typeof widget>> };
      };
      assert.equal(review.kind, 'ConversionReview');
      assert.equal(review.apiVersion, 'apiextensions.k8s.io/v1');
      assert.equal(review.response.uid, 'uid-1');
      assert.equal(review.response.result.status, 'Success');
      assert.deepEqual(review.response.convertedObjects, [
        widget('v1beta1', { count: '3' }, 'a'),
        widget('v1beta1', { count: '4' }, 'h'),
        widget('v1beta1', { count: '5' }, 'b'),
      ]);
      const back = await post(
        '/convert',
        conversionReview('unit.example.com/v1alpha1', review.response.convertedObjects),
      );
      const backObjects = (JSON.parse(back.body) as typeof review).response.convertedObjects;
      assert.deepEqual(backObjects, [
        widget('v1alpha1', { replicas: 3 }, 'a'),
        widget('v1alpha1', { replicas: 4 }, 'h'),
        widget('v1alpha1', { replicas: 5 }, 'b'),
      ]);
    });

    it('an unknown version is a Failure that names it; nothing is half converted', async () => {
      const response = JSON.parse(
        (await post('/convert', conversionReview('unit.example.com/v2', [widget('v1', { size: 1 })]))).body,
      ) as { response: { uid: string; result: { status: string; message: string }; convertedObjects: unknown[] } };
      assert.equal(response.response.uid, 'uid-1');
      assert.equal(response.response.result.status, 'Failure');
      assert.match(response.response.result.message, /version v2 is neither the hub \(v1\) nor a registered spoke/);
      assert.deepEqual(response.response.convertedObjects, []);
    });

    it('a conversion function that throws is a Failure with its message', async () => {
      const response = JSON.parse(
        (
          await post(
            '/convert',
            conversionReview('unit.example.com/v1', [
              widget('v1alpha1', { replicas: 1 }, 'fine'),
              widget('v1alpha1', { replicas: 13 }),
            ]),
          )
        ).body,
      ) as { response: { result: { status: string; message: string } } };
      assert.deepEqual(response.response.result, { status: 'Failure', message: '13 is unlucky' });
    });

    it('an unregistered kind is a Failure; a body that is not a ConversionReview is a 400', async () => {
      const other = JSON.parse(
        (
          await post(
            '/convert',
            conversionReview('unit.example.com/v1', [
              { apiVersion: 'unit.example.com/v1alpha1', kind: 'Gadget', metadata: {} },
            ]),
          )
        ).body,
      ) as { response: { result: { status: string; message: string } } };
      assert.equal(other.response.result.status, 'Failure');
      assert.match(other.response.result.message, /no conversion is registered for Gadget\.unit\.example\.com/);
      assert.equal((await post('/convert', '{"kind":"AdmissionReview"}')).status, 400);
      assert.equal((await post('/convert', 'not json')).status, 400);
    });
  });

  describe('AdmissionReview answers', () => {
    const admissionReview = (operation: string, object?: object, oldObject?: object, uid = 'adm-1') => ({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: 'unit.example.com', version: 'v1', kind: 'Widget' },
        resource: { group: 'unit.example.com', version: 'v1', resource: 'widgets' },
        operation,
        userInfo: { username: 'u' },
        object,
        oldObject,
      },
    });
    type Answer = {
      apiVersion: string;
      kind: string;
      response: {
        uid: string;
        allowed: boolean;
        status?: { code?: number; message?: string; reason?: string };
        patch?: string;
        patchType?: string;
        warnings?: string[];
      };
    };
    const admit = async (path: string, body: object | string, headers?: Record<string, string>): Promise<Answer> => {
      const response = await post(path, body, headers);
      assert.equal(response.status, 200);
      return JSON.parse(response.body) as Answer;
    };

    it("the defaulter's change comes back as a base64 JSONPatch, with the uid echoed", async () => {
      const answer = await admit('/mutate', admissionReview('CREATE', widget('v1', {}), undefined, 'echo-me'));
      assert.equal(answer.kind, 'AdmissionReview');
      assert.equal(answer.response.uid, 'echo-me');
      assert.equal(answer.response.allowed, true);
      assert.equal(answer.response.patchType, 'JSONPatch');
      assert.deepEqual(JSON.parse(Buffer.from(answer.response.patch!, 'base64').toString('utf8')), [
        { op: 'add', path: '/spec/size', value: 1 },
      ]);
      const unchanged = await admit('/mutate', admissionReview('CREATE', widget('v1', { size: 2 })));
      assert.equal(unchanged.response.patch, undefined);
      const deletion = await admit('/mutate', admissionReview('DELETE', undefined, widget('v1', {})));
      assert.deepEqual([deletion.response.allowed, deletion.response.patch], [true, undefined]);
    });

    it('denials: AdmissionDeniedError keeps code and warnings, an ApiError its status, any other error is 403 with its message', async () => {
      const denied = await admit('/validate', admissionReview('UPDATE', widget('v1', {}), widget('v1', {})));
      assert.deepEqual(denied.response, {
        uid: 'adm-1',
        allowed: false,
        status: { code: 422, reason: 'Invalid', message: 'no updates' },
        warnings: ['w1', 'w2'],
      });
      const conflict = await admit('/validate', admissionReview('CREATE', widget('v1', { mode: 'conflict' })));
      assert.deepEqual(conflict.response.status, { code: 409, reason: 'Conflict', message: 'try again' });
      const bug = await admit('/validate', admissionReview('CREATE', widget('v1', { mode: 'boom' })));
      assert.deepEqual(bug.response.status, {
        code: 403,
        reason: 'Forbidden',
        message: 'cannot read properties of undefined',
      });
      const warned = await admit('/validate', admissionReview('CREATE', widget('v1', { mode: 'warn' })));
      assert.deepEqual([warned.response.allowed, warned.response.warnings], [true, ['careful']]);
      const connect = await admit('/validate', admissionReview('CONNECT'));
      assert.equal(connect.response.allowed, true);
    });

    it('undecodable input is answered allowed=false with code 400, and the server keeps serving', async () => {
      for (const [body, headers, message] of [
        ['{not json', undefined, /not JSON/],
        ['', undefined, /empty/],
        [JSON.stringify({ kind: 'AdmissionReview' }), undefined, /not an AdmissionReview with a request and a uid/],
        [JSON.stringify(admissionReview('CREATE')), undefined, /has no object to decode/],
        [
          JSON.stringify(admissionReview('CREATE', widget('v1', {}))),
          { 'content-type': 'text/plain' },
          /expected application\/json/,
        ],
      ] as Array<[string, Record<string, string> | undefined, RegExp]>) {
        const answer = await admit('/validate', body, headers);
        assert.equal(answer.response.allowed, false);
        assert.equal(answer.response.status?.code, 400, body);
        assert.match(answer.response.status?.message ?? '', message);
      }
      assert.equal((await admit('/validate', admissionReview('CREATE', widget('v1', {})))).response.allowed, true);
    });

    it('a body over the bound is refused with 400 without being read to the end, whether its length is declared or streamed', async () => {
      const huge = JSON.stringify(
        admissionReview('CREATE', widget('v1', { mode: 'x'.repeat(MAX_ADMISSION_REQUEST_BYTES) })),
      );
      const declared = await admit('/validate', huge);
      assert.equal(declared.response.status?.code, 400);
      assert.match(declared.response.status?.message ?? '', /of \d+ bytes exceeds the limit of 7340032/);
      const streamed = await admit('/validate', huge, {
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      });
      assert.equal(streamed.response.status?.code, 400);
      assert.match(streamed.response.status?.message ?? '', /request body exceeds the limit of 7340032 bytes/);
    });

    it('the readiness check fails before start and passes once TLS is served', async () => {
      const notStarted = new WebhookServer({ port: 0, certDir: dir }, silentLogger).startedChecker();
      await assert.rejects(async () => notStarted(), /webhook server has not started yet/);
      await server.startedChecker()();
    });

    it('an unknown path is a 404', async () => {
      assert.equal((await post('/validate-nothing', {})).status, 404);
    });
  });
});

test(
  'an HTTPS server stops within its drain limit even with a client stuck in the TLS handshake',
  { timeout: 30_000 },
  async () => {
    const { serveHttps, DRAIN_LIMIT_MS } = await import('../../src/runtime/httpserver/server.js');
    const { selfSignedCertificate } = await import('../../src/runtime/certs/self-signed.js');
    const { connect } = await import('node:net');
    const server = await serveHttps({ host: '127.0.0.1', port: 0 }, await selfSignedCertificate(), (_req, res) => {
      res.end('ok');
    });
    // A TCP connection that never sends a ClientHello: not yet an HTTP connection, so closeIdleConnections() skips it.
    const port = Number(server.address.split(':').pop());
    const stuck = connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => stuck.once('connect', resolve));
    stuck.on('error', () => undefined);
    const started = Date.now();
    await server.close();
    const took = Date.now() - started;
    assert.ok(
      took >= DRAIN_LIMIT_MS - 100,
      `close() waited ${took} ms: the half-open client was cut before the drain limit`,
    );
    stuck.destroy();
  },
);
