/**
 * Samples of a kind with two versions have their own names, so
 * `kubectl apply -k config/samples` creates one object per version instead
 * of writing the same object twice. The first version keeps kubebuilder's
 * `<kind>-sample`, also after `create api --force` regenerates it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { runCliOk, tempProjectDir } from '../scaffold/harness.js';

test('each version of a kind has its own sample name', () => {
  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], dir);
  runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v1beta1', '--kind', 'Memcached', '--controller=false'],
    dir,
  );
  runCliOk(
    ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', '--controller=false', '--force'],
    dir,
  );

  const built = execFileSync('kubectl', ['kustomize', join(dir, 'config/samples')], { encoding: 'utf8' });
  const objects = parseAllDocuments(built).map(
    (doc) => doc.toJSON() as { apiVersion: string; metadata: { name: string }; spec: unknown },
  );
  assert.deepEqual(objects.map((object) => `${object.apiVersion} ${object.metadata.name}`).sort(), [
    'cache.example.com/v1 memcached-sample',
    'cache.example.com/v1beta1 memcached-v1beta1-sample',
  ]);
  // The scaffolded example field, kubebuilder's foo.
  assert.deepEqual(objects[0]!.spec, { foo: 'example' });
  assert.match(
    readFileSync(join(dir, 'config/samples/cache_v1beta1_memcached.yaml'), 'utf8'),
    /^ {2}name: memcached-v1beta1-sample$/m,
  );
});
