import assert from 'node:assert/strict';
import { readlinkSync } from 'node:fs';
import { test } from 'node:test';
import { KUBERNETES_SERVICE_IP, useCluster } from './cluster.js';
import { kubectl, podProcess, runningPod, sh } from './kubectl.js';
import { pushBusyboxImage } from './tiny-images.js';

/**
 * Issue 15's isolation guarantee, read from the routing tables only: no
 * packet is ever sent to an outside address. `ip route get` asks the kernel
 * which route it would take; "Network is unreachable" means none.
 * 1.1.1.1 and 8.8.8.8 stand for any address off the machine.
 */
const OUTSIDE = ['1.1.1.1', '8.8.8.8'];
const cluster = useCluster();

/** Asserts that a namespace (entered by `prefix`) has no default route and no route to outside addresses. */
function assertNoRouteOut(prefix: readonly string[], where: string): void {
  const table = sh([...prefix, 'ip', '-4', 'route', 'show', 'table', 'all']);
  assert.equal(table.status, 0, table.stderr);
  assert.doesNotMatch(table.stdout, /^default /m, `${where} has a default route:\n${table.stdout}`);
  const table6 = sh([...prefix, 'ip', '-6', 'route', 'show', 'table', 'all']);
  assert.doesNotMatch(table6.stdout, /^default /m, `${where} has an IPv6 default route:\n${table6.stdout}`);
  for (const address of OUTSIDE) {
    const lookup = sh([...prefix, 'ip', 'route', 'get', address]);
    assert.notEqual(lookup.status, 0, `${where} routes ${address}: ${lookup.stdout}`);
    assert.match(
      lookup.stderr,
      /unreachable/i,
      `${where}: ip route get ${address} failed for another reason: ${lookup.stderr}`,
    );
  }
}

test('the cluster namespace holds only lo and the pod bridge (plus pod veths) and has no route off the machine', () => {
  const { inNetns, netns } = cluster();
  const links = sh([...inNetns, 'ip', '-o', 'link', 'show']);
  assert.equal(links.status, 0, links.stderr);
  const names = links.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => (line.split(': ')[1] ?? '').split('@')[0]);
  assert.ok(names.includes('lo') && names.includes('cni0'), `links: ${names.join(', ')}`);
  for (const name of names)
    assert.match(name ?? '', /^(lo|cni0|veth[0-9a-f]+)$/, `unexpected link ${name} in ${netns}`);
  assertNoRouteOut(inNetns, `namespace ${netns}`);
  // The same question through iproute2's own netns handling, as the issue states it.
  const viaIp = sh(['ip', 'netns', 'exec', netns, 'ip', 'route', 'get', '1.1.1.1']);
  assert.notEqual(viaIp.status, 0);
  assert.match(viaIp.stderr, /unreachable/i);
});

test('a running pod has no route off the machine, only to the pod network and the Service range', async () => {
  const current = cluster();
  const image = `${current.registry}/isolation-busybox:1`;
  await pushBusyboxImage(current.registryUrl, 'isolation-busybox', '1');
  kubectl(current, [
    'run',
    'isolation',
    `--image=${image}`,
    '--restart=Never',
    '--labels=test=isolation',
    '--command',
    '--',
    'sleep',
    '3600',
  ]);
  const pod = await runningPod(current, 'test=isolation');
  const pid = podProcess(current, pod.metadata.uid);
  const podNet = readlinkSync(`/proc/${pid}/ns/net`);
  const clusterNet = sh([...current.inNetns, 'readlink', '/proc/self/ns/net']).stdout.trim();
  assert.notEqual(podNet, clusterNet, 'the pod must have its own network namespace');
  const inPod = ['nsenter', `--net=/proc/${pid}/ns/net`];
  assertNoRouteOut(inPod, `pod ${pod.metadata.name}`);
  // It is not a dead namespace: the Service range goes through the bridge (to kube-proxy's rules).
  const service = sh([...inPod, 'ip', 'route', 'get', KUBERNETES_SERVICE_IP]);
  assert.equal(service.status, 0, service.stderr);
  assert.match(service.stdout, /via 10\.88\.0\.1 dev eth0/);
});
