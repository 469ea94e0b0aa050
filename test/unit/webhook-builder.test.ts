/**
 * The webhook builder's registration rules, checked without starting
 * anything: paths as controller-runtime names them, one webhook per path,
 * one hub per kind, spokes of the same group and kind, and a builder with
 * nothing to serve refused in words that name the fix.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defineKind, newWebhookManagedBy } from '../../src/runtime/index.js';
import { bearerToken } from '../../src/runtime/metrics/auth.js';
import { unstartedManager } from './unstarted-manager.js';

const Hub = defineKind({
  group: 'builder.example.com',
  version: 'v1',
  kind: 'Thing',
  plural: 'things',
  namespaced: true,
});
const Spoke = defineKind({
  group: 'builder.example.com',
  version: 'v1alpha1',
  kind: 'Thing',
  plural: 'things',
  namespaced: true,
});
const Stranger = defineKind({
  group: 'other.example.com',
  version: 'v1alpha1',
  kind: 'Thing',
  plural: 'things',
  namespaced: true,
});
const identity = { convertTo: (o: object) => o, convertFrom: (o: object) => o };

describe('newWebhookManagedBy', () => {
  it("registers /mutate-, /validate- and /convert paths on the manager's one webhook server", () => {
    const mgr = unstartedManager();
    newWebhookManagedBy(mgr, Hub)
      .withDefaulter({ default: () => undefined })
      .withValidator({
        validateCreate: () => undefined,
        validateUpdate: () => undefined,
        validateDelete: () => undefined,
      })
      .withConversion({ spokes: [{ kind: Spoke, ...identity }] })
      .complete();
    const server = mgr.getWebhookServer();
    assert.equal(mgr.getWebhookServer(), server, 'one server per manager');
    assert.equal(server.needLeaderElection(), false, 'every replica serves webhooks, leader or not');
    for (const path of ['/mutate-builder-example-com-v1-thing', '/validate-builder-example-com-v1-thing', '/convert'])
      assert.ok(server.has(path), path);
  });

  it('refuses a builder with nothing to serve, a path taken twice, and a second hub for a kind', () => {
    const mgr = unstartedManager();
    assert.throws(
      () => newWebhookManagedBy(mgr, Hub).complete(),
      /has nothing to serve: call withDefaulter, withValidator or withConversion/,
    );
    newWebhookManagedBy(mgr, Hub)
      .withDefaulter({ default: () => undefined })
      .complete();
    assert.throws(
      () =>
        newWebhookManagedBy(mgr, Hub)
          .withDefaulter({ default: () => undefined })
          .complete(),
      /already registered at \/mutate-builder-example-com-v1-thing/,
    );
    newWebhookManagedBy(mgr, Hub)
      .withConversion({ spokes: [{ kind: Spoke, ...identity }] })
      .complete();
    assert.throws(
      () =>
        newWebhookManagedBy(mgr, Hub)
          .withConversion({ spokes: [{ kind: Spoke, ...identity }] })
          .complete(),
      /already registered: call withConversion once, on the hub/,
    );
  });

  it("refuses spokes of another group, or the hub's own version", () => {
    assert.throws(
      () =>
        newWebhookManagedBy(unstartedManager(), Hub)
          .withConversion({ spokes: [{ kind: Stranger, ...identity }] })
          .complete(),
      /spokes must share the hub's group and kind/,
    );
    assert.throws(
      () =>
        newWebhookManagedBy(unstartedManager(), Hub)
          .withConversion({ spokes: [{ kind: Hub, ...identity }] })
          .complete(),
      /listed twice/,
    );
  });
});

describe('metrics bearer token', () => {
  it('reads `Bearer <token>` with any case of the scheme, and nothing else', () => {
    assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
    assert.equal(bearerToken('bearer abc'), 'abc');
    for (const header of [undefined, '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer a b'])
      assert.equal(bearerToken(header), undefined, String(header));
  });
});
