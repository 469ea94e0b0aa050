import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import {
  cleanupClusterSync,
  cleanupLeftovers,
  listClusterStates,
  processStartTime,
  readHostRecord,
  registerCluster,
  type ClusterState,
} from './host-state.js';

/**
 * The record-and-restore bookkeeping on its own, without starting a cluster,
 * in a private state directory: so it is checked even while other test
 * clusters (other processes) run on this machine and keep the real host
 * settings changed. The "kubelet" here is the test writing a real, harmless
 * global setting (the inotify instance limit, one more than before).
 */
const SETTING = '/proc/sys/fs/inotify/max_user_instances';
let stateRoot: string;
let original: string;

beforeEach(() => {
  stateRoot = mkdtempSync(join(tmpdir(), 'tsc-state-test-'));
  process.env.TS_OPERATOR_SDK_CACHE = stateRoot;
  original = readFileSync(SETTING, 'utf8').trim();
});

afterEach(() => {
  writeFileSync(SETTING, original);
  delete process.env.TS_OPERATOR_SDK_CACHE;
  rmSync(stateRoot, { recursive: true, force: true });
});

/** A cluster state that owns nothing real (no namespace, cgroup or process), owned by `owner`. */
function fakeCluster(id: string, owner: { pid: number; startTime: string }): ClusterState {
  const workDir = join(stateRoot, `work-${id}`);
  mkdirSync(workDir);
  return {
    id,
    ownerPid: owner.pid,
    ownerStartTime: owner.startTime,
    netns: `tsosdk-test-${id}`,
    workDir,
    cgroupRoot: `/tsosdk-test-${id}`,
    cniNetwork: `tsosdk-test-${id}`,
    pids: [],
  };
}

const self = (): { pid: number; startTime: string } => ({
  pid: process.pid,
  startTime: processStartTime(process.pid) ?? '',
});
const bump = (): void => writeFileSync(SETTING, String(Number(original) + 1));
const current = (): string => readFileSync(SETTING, 'utf8').trim();

test('the last cluster to stop puts back a kernel setting changed while it ran, and deletes its work dir and the record', () => {
  const state = fakeCluster('a', self());
  registerCluster(state);
  assert.equal(readHostRecord()?.sysctls['fs.inotify.max_user_instances'], original);
  bump();
  assert.deepEqual(cleanupClusterSync(state), []);
  assert.equal(current(), original);
  assert.equal(readHostRecord(), undefined);
  assert.deepEqual(listClusterStates(), []);
  assert.equal(spawnSync('test', ['-e', state.workDir]).status, 1, 'work dir deleted');
});

test('while another cluster runs, a stopping cluster leaves the settings to it; the last one restores the values from before the first', () => {
  const first = fakeCluster('a', self());
  registerCluster(first);
  bump();
  const second = fakeCluster('b', self());
  // Registered after kubelet changed the setting: it must not record the changed value as the original.
  registerCluster(second);
  assert.deepEqual(cleanupClusterSync(first), []);
  assert.equal(current(), String(Number(original) + 1), 'the other cluster still needs it');
  assert.deepEqual(cleanupClusterSync(second), []);
  assert.equal(current(), original);
});

test('a cluster whose test process died is cleaned by cleanupLeftovers; a live one is left alone', () => {
  const child = spawnSync('sh', ['-c', 'echo $$; cat /proc/$$/stat']);
  const [pid] = child.stdout.toString().split('\n');
  const deadOwner = { pid: Number(pid), startTime: 'long-gone' };
  const leftover = fakeCluster('dead', deadOwner);
  registerCluster(leftover);
  bump();
  const live = fakeCluster('live', self());
  registerCluster(live);
  cleanupLeftovers();
  assert.deepEqual(
    listClusterStates().map((state) => state.id),
    ['live'],
  );
  assert.equal(current(), String(Number(original) + 1), 'not restored while the live cluster runs');
  assert.deepEqual(cleanupClusterSync(live), []);
  assert.equal(current(), original);
});
