/**
 * A leader frozen past its lease (SIGSTOP, as a long GC pause, a frozen VM or
 * a throttled container would) must write nothing once it wakes (SIGCONT),
 * although watch events and timers piled up while it slept start reconciles
 * at once: the write fence refuses them, and the process exits 1.
 *
 * Two replicas of fixtures/stamping-manager.ts run against the real API
 * server. Every write stamps its object with the writer's name; the test
 * watches the stamps straight from the API server, so the sequence it checks
 * is the order in which the server accepted the writes, whatever the replicas
 * believe. The rule: once another replica's write has been accepted, no write
 * of an earlier leader may follow. Each round freezes the current leader at a
 * random moment (its reconcilers write at once or after a crawl, some
 * in flight, some waiting), keeps it frozen until the other replica has
 * written as leader, then wakes it. A fresh standby joins every round.
 *
 * What the fence can promise, and so what this test holds it to: a write
 * leaves only if the lease was held by the monotonic clock in the same
 * synchronous run that hands its bytes to the kernel. A process stopped
 * inside that run (microseconds of work, but a SIGSTOP or a preemption can
 * land there) sends the write when it resumes, whatever the lease says by
 * then: a check in the process cannot be atomic with the send after it, and
 * only the API server could refuse such a write (a resourceVersion
 * precondition does, for a write whose object the new leader changed). The
 * test tells that case apart with the fixture's fence log and the API
 * server's audit log, reports it, and fails on every other late write: one
 * that passed no fence, one that passed after the freeze (a fence bug), and
 * one sent before the freeze that the server still committed after the
 * successor's first write.
 *
 * Cost: about 3 minutes for 20 freezes on short lease timings (8 s / 2 s /
 * 0.5 s), each round about 9 s (the lease duration plus the takeover), after
 * about 10 s to start the control plane. The audit log records only patches
 * of ConfigMaps in the test's namespace (the stamp writes and the ticks).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { Client } from '../../src/runtime/index.js';
import { mergePatch } from '../../src/runtime/client/index.js';
import { RestClient } from '../../src/runtime/transport/index.js';
import type { Environment } from '../../src/runtime/envtest/index.js';
import { startControlPlane } from './control-plane.js';
import { eventually } from './eventually.js';
import { exitWithin, killAll, linesOf, startReplica, type Replica } from './replicas.js';

const FREEZES = 20;
const NAMESPACE = 'freeze';
const KEYS = 8;
/**
 * Short timings so that 20 takeovers fit in a test. The margin for a write
 * already handed to the kernel is their difference: 6 s (5 s by default).
 * Breaches seen at margins of 1, 2, 4 and 6 s were taken for an API server
 * starved of CPU committing such writes late, and the margin was raised each
 * time. The fence and audit logs showed otherwise (see judge()): at load
 * 9-19, the breaching writes had passed the fence 0 and 46 ms before the
 * freeze, the synchronous run that passed them ended only after the wake,
 * and the server received them 1 ms after the wake. Those processes were
 * stopped between the check and the send, which no margin covers. The
 * renew deadline stays 2 s, so a leader that is not frozen still renews in
 * time under load.
 */
const TIMINGS = { LEASE_DURATION_MS: '8000', RENEW_DEADLINE_MS: '2000', RETRY_PERIOD_MS: '500' };
/** The fixture's stamp: `<replica>:<n>`. */
const WRITER_ANNOTATION = 'fence.test/writer';
/** How far apart two Date.now() readings of one moment may be, in two processes. */
const CLOCK_STEP_MS = 2;
/** How often the test changes a watched object, so events pile up on the frozen leader's watch. */
const TICK_MS = 50;
const stampingManager = fileURLToPath(new URL('./fixtures/stamping-manager.js', import.meta.url));

/** One write the API server accepted, in the order it accepted them. */
interface Stamp {
  writer: string;
  /** The whole stamp, `<replica>:<n>`: the fixture's fence log and the audit log name the write by it. */
  stamp: string;
  resourceVersion: string;
  /** When this test saw it, on its monotonic clock. */
  seenAt: number;
}

/** A write of an earlier leader accepted after its successor's first write. */
interface Breach {
  writer: string;
  stamp: string;
  resourceVersion: string;
  successor: string;
  successorResourceVersion: string;
}

/** One freeze, on the wall clock (the fixture logs Date.now() too, and the audit log is in wall-clock time). */
interface Freeze {
  round: number;
  leader: string;
  /** Read just after the SIGSTOP. */
  frozenWallMs: number;
  /** Read just before the SIGCONT (after it, this process may wait for a CPU while the leader already runs). */
  wokenWallMs?: number;
}

/**
 * Only the stamp writes, at the last stage: requestReceivedTimestamp says
 * when the API server had the request, stageTimestamp when it answered.
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: Request
  verbs: [patch]
  namespaces: [${NAMESPACE}]
  resources: [{ group: "", resources: [configmaps] }]
- level: None
`;

describe('a leader frozen past its lease', () => {
  let env: Environment;
  let auditDir: string;
  let api: Client;
  let rest: RestClient;
  const replicas: Replica[] = [];
  const stamps: Stamp[] = [];
  const stop = new AbortController();
  let watching: Promise<void> | undefined;
  let ticking: Promise<void> | undefined;

  const freezes: Freeze[] = [];

  before(async () => {
    auditDir = mkdtempSync(join(tmpdir(), 'leader-freeze-audit-'));
    writeFileSync(join(auditDir, 'policy.yaml'), AUDIT_POLICY);
    env = await startControlPlane({
      apiServerExtraArgs: {
        'audit-policy-file': join(auditDir, 'policy.yaml'),
        'audit-log-path': join(auditDir, 'audit.log'),
      },
    });
    rest = new RestClient(env.kubeConfig);
    api = new Client({ rest });
    await api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    for (let i = 0; i < KEYS; i++) {
      await api.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `work-${i}`, namespace: NAMESPACE, labels: { role: 'work' } },
      });
      await api.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `stamp-${i}`, namespace: NAMESPACE, labels: { role: 'stamp' } },
      });
    }
    watching = watchStamps(stop.signal);
    ticking = tick(stop.signal);
  });
  after(async () => {
    stop.abort();
    killAll(replicas);
    await Promise.all([watching, ticking]);
    await rest?.close();
    await env?.stop();
    if (auditDir) rmSync(auditDir, { recursive: true, force: true });
  });

  /** Records every accepted stamp, reopening the watch from the last resourceVersion if the server ends it. */
  async function watchStamps(signal: AbortSignal): Promise<void> {
    const path = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
    let { resourceVersion } = (
      await rest.request<{ metadata: { resourceVersion: string } }>('GET', path, {
        query: { labelSelector: 'role=stamp' },
      })
    ).metadata;
    while (!signal.aborted) {
      try {
        for await (const event of rest.watch<V1ConfigMap>(
          path,
          { labelSelector: 'role=stamp', resourceVersion, allowWatchBookmarks: false },
          signal,
          60_000,
        )) {
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          const stamp = event.object.metadata?.annotations?.[WRITER_ANNOTATION];
          if (event.type === 'MODIFIED' && stamp)
            stamps.push({ writer: stamp.split(':')[0]!, stamp, resourceVersion, seenAt: performance.now() });
        }
      } catch (err) {
        if (!signal.aborted) throw err;
      }
    }
  }

  /** Changes the watched objects all along, so a frozen leader wakes to a backlog of events. */
  async function tick(signal: AbortSignal): Promise<void> {
    for (let n = 0; !signal.aborted; n++) {
      await api
        .patch(
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `work-${n % KEYS}`, namespace: NAMESPACE } },
          mergePatch({ data: { tick: String(n) } }),
        )
        .catch(() => undefined);
      await sleep(TICK_MS, undefined, { signal }).catch(() => undefined);
    }
  }

  let spawned = 0;
  function startStampingReplica(): Replica {
    const replica = startReplica(
      `r${++spawned}`,
      env.kubeConfigPath(),
      { STAMP_NAMESPACE: NAMESPACE, ...TIMINGS },
      stampingManager,
    );
    replicas.push(replica);
    return replica;
  }

  const contending = (replica: Replica): boolean => linesOf(replica, 'attempting to acquire leader lease').length > 0;
  const stampsOf = (writer: string, from = 0): Stamp[] => stamps.slice(from).filter((stamp) => stamp.writer === writer);

  /**
   * Every accepted write of a replica made after a replica that started
   * writing later (its successor as leader) had a write accepted: the writes
   * that two leaders at once would produce. Leaders are ordered by their first
   * accepted write, so a breach names the old leader, not the new one.
   */
  function writesAfterTakeover(): Breach[] {
    const firstWrite = new Map<string, number>();
    stamps.forEach((stamp, index) => {
      if (!firstWrite.has(stamp.writer)) firstWrite.set(stamp.writer, index);
    });
    const breaches: Breach[] = [];
    stamps.forEach(({ writer, stamp, resourceVersion }, index) => {
      const ownFirst = firstWrite.get(writer)!;
      const successor = [...firstWrite].find(([other, first]) => other !== writer && first > ownFirst && first < index);
      if (successor)
        breaches.push({
          writer,
          stamp,
          resourceVersion,
          successor: successor[0],
          successorResourceVersion: stamps[successor[1]]!.resourceVersion,
        });
    });
    return breaches;
  }

  /**
   * Why a breaching write was accepted late, from when it passed its
   * writer's fence (the fixture's log), when the synchronous run that passed
   * it ended (the fixture's microtask) and when the API server received and
   * answered it (the audit log), all relative to its writer's freeze and wake.
   *
   * Only one case is the known limit of a fence in the client process rather
   * than a fault (`stoppedBetweenCheckAndSend`): the write passed the fence
   * before the freeze and the synchronous run that passed it, the one that
   * hands its bytes to the kernel, ended only after the wake. No check made
   * in the process can be atomic with the send that follows it: a process
   * stopped between the two sends on waking. Everything else fails the
   * test: a write no fence saw, one that passed it after the freeze (a fence
   * bug), and one whose run ended before the freeze that the API server
   * still committed after the successor (held beyond the margin).
   */
  function judge(breach: Breach): { stoppedBetweenCheckAndSend: boolean; text: string } {
    const freeze = freezes.findLast((f) => f.leader === breach.writer);
    const relative = (wallMs: number | undefined): string => {
      if (wallMs === undefined || !freeze) return 'unknown';
      const fromFreeze = `${Math.round(wallMs - freeze.frozenWallMs)} ms from the freeze`;
      return freeze.wokenWallMs === undefined
        ? fromFreeze
        : `${fromFreeze}, ${Math.round(wallMs - freeze.wokenWallMs)} ms from the wake`;
    };
    const pass = fencePasses(breach.writer).get(breach.stamp);
    const passedWallMs = pass?.passedWallMs as number | undefined;
    const runEndedWallMs = passedWallMs === undefined ? undefined : passedWallMs + (pass!.runEndedAfterMs as number);
    const audit = auditedStamps().get(breach.stamp);
    let verdict: string;
    let stoppedBetweenCheckAndSend = false;
    if (!freeze || freeze.wokenWallMs === undefined) verdict = 'a write of a replica that was never frozen';
    else if (passedWallMs === undefined) verdict = 'a write that passed no fence';
    // Date.now() has millisecond steps, and a running process takes a moment to stop.
    else if (passedWallMs > freeze.frozenWallMs + CLOCK_STEP_MS)
      verdict = 'A FENCE BUG: it passed the fence after the freeze';
    else if (runEndedWallMs! >= freeze.wokenWallMs - CLOCK_STEP_MS) {
      verdict = 'stopped between its fence check and its send, the limit of a fence in the process';
      stoppedBetweenCheckAndSend = true;
    } else
      verdict =
        'its synchronous run ended before the freeze, yet the server committed it after the successor: held beyond the margin (in the client if the server received it after the wake)';
    return {
      stoppedBetweenCheckAndSend,
      text: [
        `${breach.writer} wrote ${breach.stamp} (resourceVersion ${breach.resourceVersion}) after ${breach.successor} had written as leader (resourceVersion ${breach.successorResourceVersion}): ${verdict}`,
        `frozen in round ${freeze?.round ?? '?'}`,
        `passed the fence at ${relative(passedWallMs)} (its synchronous run ended at ${relative(runEndedWallMs)}; renewal judged by started at monotonic ${String(pass?.renewStartedAt)}, passed at monotonic ${String(pass?.passedAt)})`,
        `the API server received it at ${relative(audit?.receivedWallMs)} and answered at ${relative(audit?.answeredWallMs)}`,
      ].join('; '),
    };
  }

  /** Fails on every breach but a write stopped between its fence check and its send; reports those once. */
  const reported = new Set<string>();
  function assertNoBreach(t: TestContext, message: string): void {
    const judged = writesAfterTakeover().map(judge);
    for (const { stoppedBetweenCheckAndSend, text } of judged)
      if (stoppedBetweenCheckAndSend && !reported.has(text)) {
        reported.add(text);
        t.diagnostic(text);
      }
    assert.deepEqual(
      judged.filter((j) => !j.stoppedBetweenCheckAndSend).map((j) => j.text),
      [],
      message,
    );
  }

  /** When the API server received and answered each stamp write (wall-clock ms), by stamp, from the audit log. */
  function auditedStamps(): Map<string, { receivedWallMs: number; answeredWallMs: number }> {
    const byStamp = new Map<string, { receivedWallMs: number; answeredWallMs: number }>();
    const log = join(auditDir, 'audit.log');
    // The API server creates it with the first patch it audits.
    const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
    for (const line of text.split('\n')) {
      if (!line.includes(WRITER_ANNOTATION)) continue;
      const event = JSON.parse(line) as {
        requestReceivedTimestamp: string;
        stageTimestamp: string;
        requestObject?: { metadata?: { annotations?: Record<string, string> } };
      };
      const stamp = event.requestObject?.metadata?.annotations?.[WRITER_ANNOTATION];
      if (stamp)
        byStamp.set(stamp, {
          receivedWallMs: Date.parse(event.requestReceivedTimestamp),
          answeredWallMs: Date.parse(event.stageTimestamp),
        });
    }
    return byStamp;
  }

  /** When each of `replica`'s stamp writes last passed its fence (wall-clock ms), by stamp. */
  function fencePasses(replica: string): Map<string, Record<string, unknown>> {
    const byStamp = new Map<string, Record<string, unknown>>();
    for (const line of replicas.find((r) => r.name === replica)?.lines ?? [])
      if (line.msg === 'test: write passed the fence') byStamp.set(line.stamp as string, line);
    return byStamp;
  }

  /**
   * The frozen leader's writes the API server answered after the freeze:
   * when each passed the fence, was received and was answered, from the freeze.
   */
  function inFlightAcross(freeze: Freeze, audit = auditedStamps()): string {
    const passes = fencePasses(freeze.leader);
    const late: string[] = [];
    for (const [stamp, times] of audit) {
      if (!stamp.startsWith(`${freeze.leader}:`) || times.answeredWallMs < freeze.frozenWallMs) continue;
      const passed = passes.get(stamp)?.passedWallMs as number | undefined;
      const from = (ms: number | undefined): string => (ms === undefined ? '?' : String(ms - freeze.frozenWallMs));
      const runEnded = passes.get(stamp)?.runEndedAfterMs as number | undefined;
      late.push(
        `${stamp} passed ${from(passed)} (run ended +${runEnded?.toFixed(1)}) received ${from(times.receivedWallMs)} answered ${from(times.answeredWallMs)}`,
      );
    }
    return late.join(', ') || 'none';
  }

  it(`${FREEZES} freezes at varied moments: the API server accepts no write from a frozen leader once the other replica has written, and the woken leader exits 1`, async (t) => {
    let leader = startStampingReplica();
    await eventually('the first leader writing', () => stampsOf(leader.name).length > 0, 60_000);
    let standby = startStampingReplica();
    const refusedPerRound: number[] = [];

    for (let round = 1; round <= FREEZES; round++) {
      await eventually(`round ${round}: the standby ${standby.name} contending`, () => contending(standby), 60_000);
      // A varied moment: after one of the leader's writes, 0 to 1 s later (two renewal periods).
      const from = stamps.length;
      // 60 s like the other waits: at load 11 a round-1 leader once went 30 s without a write the test saw.
      await eventually(`round ${round}: ${leader.name} writing`, () => stampsOf(leader.name, from).length > 0, 60_000);
      await sleep(Math.random() * 1000);

      leader.child.kill('SIGSTOP');
      const frozenAt = performance.now();
      // After the signal: anything the leader did later than this, it did after waking.
      const freeze: Freeze = { round, leader: leader.name, frozenWallMs: Date.now() };
      freezes.push(freeze);
      const frozenFrom = stamps.length;
      const next = startStampingReplica();
      const successor = await eventually(
        `round ${round}: another replica writing as leader while ${leader.name} is frozen`,
        () => stamps.slice(frozenFrom).find((stamp) => stamp.writer !== leader.name)?.writer,
        60_000,
        20,
      );
      // Wake it a little later, while the new leader writes: its backlog then holds the new leader's work.
      await sleep(Math.random() * 500);
      // Before the signal: the leader cannot run again earlier, however long this process then waits for a CPU.
      freeze.wokenWallMs = Date.now();
      leader.child.kill('SIGCONT');
      const frozenMs = performance.now() - frozenAt;

      const code = await exitWithin(leader, 30_000);
      assert.equal(code, 1, `round ${round}: the woken leader ${leader.name} exits 1 (got ${code})`);
      // Every reconcile whose write the fence refused, and how the controller took it.
      const refusals = leader.lines.filter(
        (line) =>
          String(line.msg).startsWith('Reconciler error') &&
          (line.err as { type?: string } | undefined)?.type === 'LeaderElectionLostError',
      );
      const retried = refusals.filter((line) => line.msg !== 'Reconciler error (leadership lost, not retried)');
      assert.deepEqual(
        retried.map((line) => line.msg),
        [],
        `round ${round}: a reconcile refused for lost leadership is not retried`,
      );
      const refused = refusals.length;
      refusedPerRound.push(refused);
      t.diagnostic(
        `round ${round}: ${leader.name} frozen ${Math.round(frozenMs)} ms, ${successor} took over, ${refused} writes refused on waking`,
      );
      assertNoBreach(t, `round ${round}`);

      leader = replicas.find((replica) => replica.name === successor)!;
      standby = leader === standby ? next : standby;
    }

    // Let the last takeover's stragglers, if any, reach the watch before the final verdict.
    await sleep(2_000);
    assertNoBreach(t, 'no write of a frozen leader accepted after another replica wrote');
    const audit = auditedStamps();
    for (const freeze of freezes)
      t.diagnostic(
        `round ${freeze.round}: ${freeze.leader}'s writes answered after its freeze (ms from the freeze; woken at ${freeze.wokenWallMs! - freeze.frozenWallMs}): ${inFlightAcross(freeze, audit)}`,
      );
    const roundsWithRefusals = refusedPerRound.filter((count) => count > 0).length;
    t.diagnostic(
      `${stamps.length} writes accepted; ${roundsWithRefusals} of ${FREEZES} woken leaders tried to write and were refused (${refusedPerRound.reduce((a, b) => a + b, 0)} writes)`,
    );
    // The fence must have had work to do, or the test proves nothing.
    assert.ok(
      roundsWithRefusals >= FREEZES / 2,
      `only ${roundsWithRefusals} of ${FREEZES} woken leaders tried to write`,
    );
  });
});
