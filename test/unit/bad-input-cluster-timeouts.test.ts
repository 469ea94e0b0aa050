/**
 * Commands that talk to a cluster, against an API server that does not
 * answer: one that accepts connections and never sends a byte, one that
 * resets them, one that refuses them. Fakes stand in for the server
 * (./../support/fake-api-servers.ts) because a real kube-apiserver cannot
 * be made to do this. Each case keeps the contract of ./bad-input.ts (exit 1,
 * one line naming the server and the fix, no stack trace, a byte-identical
 * directory) and finishes within --timeout: a run that takes longer than
 * CASE_KILL_MS is killed and fails. olm install's release manifests point at
 * a port nothing serves, so a command that downloaded them before checking
 * the cluster fails too.
 *
 * Cost: 30 to 45 s (14 cases wait out a 1 s --timeout; one project is scaffolded; 45 s at load 11 on 2 cores).
 * Run: node --test dist/test/unit/bad-input-cluster-timeouts.test.js
 */
import { after, before } from 'node:test';
import { badInputSuite } from './bad-input.js';
import { casesFor, literal, userDirectory } from './bad-input-cluster.js';
import { copyProject, SCENARIOS, scaffoldScenario } from '../scaffold/harness.js';
import { startFakeServers } from '../support/fake-api-servers.js';

const fakes = await startFakeServers();
after(() => fakes.stop());

/** init + create api cache/v1 Memcached, where create api --from-cluster runs. */
let project: string;
before(() => {
  project = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
});

const silent = fakes.url('silent');
const reset = fakes.url('reset');
const refused = fakes.url('refused');
const silentHttp = fakes.url('silent', 'http');

badInputSuite(
  'a server that never answers: one line naming it, within --timeout',
  [
    ...casesFor(
      'accepts and never answers (TLS)',
      fakes.kubeconfig(silent),
      new RegExp(
        `^Error: the API server at ${literal(silent)} did not answer within 1s\\. Check that the cluster is running and reachable \\(kubectl cluster-info\\), or raise --timeout\\.$`,
      ),
      () => project,
    ),
    ...casesFor(
      'accepts and never answers (plain HTTP)',
      fakes.kubeconfig(silentHttp),
      new RegExp(`^Error: the API server at ${literal(silentHttp)} did not answer within 1s\\.`),
      () => project,
    ),
  ],
  userDirectory,
);

badInputSuite(
  'a server that resets or refuses connections: one line naming it',
  [
    ...casesFor(
      'resets every connection',
      fakes.kubeconfig(reset),
      new RegExp(
        `^Error: the server at ${literal(reset)} closed the connection without answering \\(ECONNRESET\\)\\. Check that `,
      ),
      () => project,
    ),
    ...casesFor(
      'refuses connections',
      fakes.kubeconfig(refused),
      new RegExp(
        `^Error: cannot connect to the API server at ${literal(refused)}: connection refused \\(ECONNREFUSED\\)\\. Check that the cluster is running and that (--kubeconfig or )?KUBECONFIG points at it\\.$`,
      ),
      () => project,
    ),
  ],
  userDirectory,
);

// A timer cannot hold 100000h: unclamped, it would fire at once and blame the server.
const huge = (args: string[]): string[] =>
  args.map((arg, index) => (args[index - 1] === '--timeout' ? '100000h' : arg));
badInputSuite(
  'a --timeout longer than a timer holds is not a timeout of 1 ms',
  casesFor(
    '--timeout 100000h, connection refused',
    fakes.kubeconfig(refused),
    /^Error: cannot connect to the API server at .+ connection refused \(ECONNREFUSED\)\./,
    () => project,
  ).map((bad) => ({ ...bad, args: huge(bad.args) })),
  userDirectory,
);

/** create api's route kind, as the tables run it, with `extra` flags. */
const route = (...extra: string[]): string[] => [
  'create',
  'api',
  '--group',
  'route',
  '--version',
  'v1',
  '--kind',
  'Route',
  '--external-api-domain',
  'openshift.io',
  '--external-api-path',
  'apis/external/route/v1',
  ...extra,
];

badInputSuite(
  '--timeout itself: refused in one line before any request',
  [
    {
      name: 'create api: --timeout without --from-cluster',
      dir: () => copyProject(project),
      args: route('--from-crd', 'route.crd.yaml', '--timeout', '5s'),
      error:
        /^Error: --timeout is for reading a CRD from the cluster, and needs --from-cluster\. Leave out --timeout, or pass --from-cluster <crd-name>\.$/,
    },
    {
      name: 'create api --from-cluster: --timeout that is not a duration',
      dir: () => copyProject(project),
      args: route('--from-cluster', 'routes.route.openshift.io', '--timeout', 'two'),
      run: () => ({ env: { KUBECONFIG: fakes.kubeconfig(silent) } }),
      error: /^Error: --timeout two is not a duration\. Pass a Go-style duration such as 2m, 90s or 1m30s\.$/,
    },
    {
      name: 'olm status: a zero --timeout',
      args: ['olm', 'status', '--timeout', '0s', '--kubeconfig', fakes.kubeconfig(silent)],
      error: /^Error: --timeout 0s is not a duration\./,
    },
    {
      name: 'cleanup: a negative --timeout',
      args: ['cleanup', 'widget-operator', '--timeout=-1m', '--kubeconfig', fakes.kubeconfig(silent)],
      error: /^Error: --timeout -1m is not a duration\./,
    },
  ],
  userDirectory,
);
