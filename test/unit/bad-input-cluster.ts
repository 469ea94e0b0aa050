/**
 * The commands that talk to a cluster, as the bad-input tables of
 * bad-input-cluster-*.test.ts run them against a fake API server: each with a
 * short `--timeout`, the kubeconfig given the way the command takes it, and a
 * directory that must stay byte-identical.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BadInput } from './bad-input.js';
import { copyProject, tempProjectDir } from '../scaffold/harness.js';

/** What every case passes as --timeout: short, so a table of hung servers runs in seconds. */
export const CASE_TIMEOUT = '1s';
/**
 * Past this a run is killed and its case fails: --timeout plus the CLI's
 * start-up on a busy shared machine. The commands used to wait 30 to 60 s
 * whatever --timeout said.
 */
export const CASE_KILL_MS = 12_000;

/** One command that talks to a cluster. */
export interface ClusterCommand {
  name: string;
  args(kubeconfig: string): string[];
  /** Environment for the run (KUBECONFIG for commands without --kubeconfig). */
  env(kubeconfig: string): NodeJS.ProcessEnv;
  /** Whether it runs in a scaffolded project (create api); otherwise in a plain directory. */
  inProject: boolean;
}

/**
 * A loopback port nothing listens on, for olm install's release manifests: a
 * command that downloaded them before it checked the cluster would fail on
 * the download instead of naming the server.
 */
export const NO_MANIFEST_SERVER = 'http://127.0.0.1:9';

/** olm install/status/uninstall, run bundle, run bundle-upgrade, cleanup and create api --from-cluster. */
export const CLUSTER_COMMANDS: readonly ClusterCommand[] = [
  ...(['install', 'status', 'uninstall'] as const).map((verb): ClusterCommand => ({
    name: `olm ${verb}`,
    args: (kubeconfig) => ['olm', verb, '--timeout', CASE_TIMEOUT, '--kubeconfig', kubeconfig],
    env: () => ({ TS_OPERATOR_SDK_OLM_BASE_URL: NO_MANIFEST_SERVER }),
    inProject: false,
  })),
  ...(['bundle', 'bundle-upgrade'] as const).map((verb): ClusterCommand => ({
    name: `run ${verb}`,
    // A loopback registry nothing serves: the command must fail on the cluster before it pulls.
    args: (kubeconfig) => [
      'run',
      verb,
      '127.0.0.1:9/widget-operator-bundle:v0.0.1',
      '--timeout',
      CASE_TIMEOUT,
      '--kubeconfig',
      kubeconfig,
    ],
    env: () => ({}),
    inProject: false,
  })),
  {
    name: 'cleanup',
    args: (kubeconfig) => ['cleanup', 'widget-operator', '--timeout', CASE_TIMEOUT, '--kubeconfig', kubeconfig],
    env: () => ({}),
    inProject: false,
  },
  {
    name: 'create api --from-cluster',
    args: () => [
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
      '--from-cluster',
      'routes.route.openshift.io',
      '--timeout',
      CASE_TIMEOUT,
    ],
    env: (kubeconfig) => ({ KUBECONFIG: kubeconfig }),
    inProject: true,
  },
];

/** A plain directory with one file of the user's in it, for the commands that need no project. */
export function userDirectory(): string {
  const dir = tempProjectDir('cluster-user');
  writeFileSync(join(dir, 'notes.txt'), "the user's file\n");
  return dir;
}

/** Escapes text for use inside a RegExp. */
export function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * One case per command against `server` (a kubeconfig for it), expecting
 * `error`; `project()` gives the scaffolded project create api runs in.
 */
export function casesFor(title: string, kubeconfig: string, error: RegExp, project: () => string): BadInput[] {
  return CLUSTER_COMMANDS.map((command) => ({
    name: `${command.name}: ${title}`,
    args: command.args(kubeconfig),
    dir: command.inProject ? () => copyProject(project()) : userDirectory,
    run: () => ({ env: command.env(kubeconfig), timeoutMs: CASE_KILL_MS }),
    error,
  }));
}
