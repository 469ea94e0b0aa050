import { randomUUID } from 'node:crypto';
import { loadKubeConfig, type RestConfig } from '../transport/kubeconfig.js';
import type { ReconcileContext } from '../controller/controller.js';
import { silentLogger } from '../log/log.js';
import { Environment, type EnvironmentOptions } from './environment.js';

/**
 * The variable through which the global setup hands the shared control
 * plane's kubeconfig file to the test files: node's test runner runs each
 * file in its own child process, and children inherit the environment.
 */
export const SHARED_KUBECONFIG_VARIABLE = 'TS_OPERATOR_SDK_ENVTEST_KUBECONFIG';
/** `SKIP_ENVTEST=true` runs a suite without a control plane; the envtest tests then report themselves skipped. */
export const SKIP_ENVTEST_VARIABLE = 'SKIP_ENVTEST';
/**
 * The suite's per-component start timeout unless KUBEBUILDER_CONTROLPLANE_START_TIMEOUT
 * or the options set one: three times envtest's 20 s, because the plane starts
 * once per run (waiting costs nothing when it is fast) and CI machines are often busy.
 */
export const SUITE_START_TIMEOUT_MS = 60_000;

/** What `node --test --test-global-setup=<module>` calls before and after the whole run. */
export interface EnvtestSuiteHooks {
  // Function properties, not methods: the generated test/envtest-setup.ts
  // destructures them, which typescript-eslint's unbound-method refuses for methods.
  globalSetup: () => Promise<void>;
  globalTeardown: () => Promise<void>;
}

/** How {@link envtestSuite} reports; the defaults write to stderr and end the process. */
export interface EnvtestSuiteIO {
  /** Receives one line per event (the skip notice, the one-line failure). Default: stderr. */
  log?: (line: string) => void;
  /**
   * Called with the one-line failure when the control plane cannot start.
   * Default: write it and exit 1, because a thrown error would make the test
   * runner print a stack trace instead of the fix.
   */
  fail?: (line: string) => never;
}

/**
 * One envtest control plane for a whole `node --test` run, like the
 * `BeforeSuite` in kubebuilder's suite_test.go: starting etcd and
 * kube-apiserver takes seconds, so the test files share one instead of each
 * starting its own. Export the result's hooks from the module given to
 * `--test-global-setup`; test files reach the plane with {@link sharedKubeConfig}.
 *
 * ```ts
 * export const { globalSetup, globalTeardown } = envtestSuite({ crdDirectoryPaths: ['config/crd/bases'] });
 * ```
 */
export function envtestSuite(options: EnvironmentOptions, io: EnvtestSuiteIO = {}): EnvtestSuiteHooks {
  const log = io.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const fail =
    io.fail ??
    ((line: string): never => {
      process.stderr.write(`${line}\n`);
      process.exit(1);
    });
  let env: Environment | undefined;
  return {
    async globalSetup() {
      if (envtestSkipped()) {
        log(`envtest: ${SKIP_ENVTEST_VARIABLE}=true, so no API server is started and the envtest tests are skipped`);
        return;
      }
      const startTimeoutMs =
        options.startTimeoutMs ??
        (process.env.KUBEBUILDER_CONTROLPLANE_START_TIMEOUT ? undefined : SUITE_START_TIMEOUT_MS);
      const started = new Environment({ ...options, startTimeoutMs });
      try {
        await started.start();
      } catch (err) {
        // The first line only: the binary's output tail follows on the next ones.
        const message = (err instanceof Error ? err.message : String(err))
          .split('\n')[0]!
          .replace(/^envtest: /, '')
          .replace(/;? output:$/, '');
        fail(
          `envtest: cannot start the test API server: ${message} (or set ${SKIP_ENVTEST_VARIABLE}=true to skip the envtest tests)`,
        );
      }
      env = started;
      process.env[SHARED_KUBECONFIG_VARIABLE] = started.kubeConfigPath();
      log(`envtest: API server ${started.kubeConfig.getCurrentCluster()?.server ?? ''} started for this test run`);
    },
    async globalTeardown() {
      delete process.env[SHARED_KUBECONFIG_VARIABLE];
      await env?.stop();
      env = undefined;
    },
  };
}

/** True when `SKIP_ENVTEST=true`: the run has no control plane on purpose. */
export function envtestSkipped(): boolean {
  return process.env[SKIP_ENVTEST_VARIABLE] === 'true';
}

/**
 * The reason to skip envtest tests in this run, or `false`: pass it as each
 * test's `skip` option, so a skip is reported as one, with its reason, and
 * never counts as a pass. (On a `describe`, node's runner counts neither the
 * suite nor its tests as skipped.)
 */
export function skipEnvtest(): string | false {
  return envtestSkipped() ? `${SKIP_ENVTEST_VARIABLE}=true: no API server in this run` : false;
}

let sharedConfig: RestConfig | undefined;

/**
 * The admin KubeConfig of the control plane {@link envtestSuite} started for
 * this run. Throws, naming the fix, when the run has none (a test file run
 * without `--test-global-setup`).
 */
export function sharedKubeConfig(): RestConfig {
  if (sharedConfig) return sharedConfig;
  const path = process.env[SHARED_KUBECONFIG_VARIABLE];
  if (!path) {
    throw new Error(
      `envtest: this test run has no shared API server (${SHARED_KUBECONFIG_VARIABLE} is unset): run the tests with \`npm test\`, which passes --test-global-setup, or set ${SKIP_ENVTEST_VARIABLE}=true`,
    );
  }
  sharedConfig = loadKubeConfig(path);
  return sharedConfig;
}

/**
 * A {@link ReconcileContext} for calling a reconciler directly in a test:
 * a signal nothing aborts, a silent logger, a fresh reconcileID. Override
 * any field, e.g. `reconcileContext({ controller: 'memcached' })`.
 */
export function reconcileContext(overrides: Partial<ReconcileContext> = {}): ReconcileContext {
  return {
    signal: new AbortController().signal,
    log: silentLogger,
    reconcileID: randomUUID(),
    controller: 'test',
    ...overrides,
  };
}
