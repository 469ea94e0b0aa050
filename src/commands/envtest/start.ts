import { existsSync, rmdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandIO } from '../../cli/io.js';
import { shellQuote } from '../../cli/shell.js';
import { UsageError } from '../../errors.js';
import { displayPath } from '../../paths.js';
import { locateBinary } from '../../runtime/envtest/assets.js';
import type { Environment } from '../../runtime/envtest/environment.js';
import {
  planKubeconfig,
  restoreKubeconfig,
  writeKubeconfig,
  type EnvtestAccess,
  type WrittenKubeconfig,
} from './kubeconfig-file.js';

/** The CRDs `make manifests` writes, installed when present. */
const DEFAULT_CRD_DIR = join('config', 'crd', 'bases');
/** Where the generated Makefile's setup-envtest keeps its binaries (kubebuilder's LOCALBIN). */
const PROJECT_BIN_DIR = 'bin';
/** How often the foreground loop checks that etcd and kube-apiserver still run. */
const LIVENESS_POLL_MS = 500;
/** The signals that ask for a clean stop. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** The envtest version the generated Makefile pins, named in the fix when no binaries are found. */
const SUGGESTED_VERSION = '1.36.3';

/** What `envtest start` was asked for, with paths already absolute. */
export interface EnvtestStartOptions {
  cwd: string;
  binDir?: string;
  kubeconfigPath: string;
  /** Whether the user gave --kubeconfig (it may then be outside the project); the default must stay inside. */
  kubeconfigNamed?: boolean;
  /** Explicit CRD paths (must exist); empty means config/crd/bases if it exists. */
  crdDirs: string[];
  port?: number;
  io: CommandIO;
}

/**
 * Runs the envtest control plane until a stop signal (then resolves, exit 0)
 * or until etcd or kube-apiserver dies (then throws, exit 1). Either way the
 * processes, the temp dir and the kubeconfig it wrote are gone afterwards.
 */
export async function startEnvtest(options: EnvtestStartOptions): Promise<void> {
  const { io, cwd } = options;
  const { dir: assets, source } = await findAssets(options);
  for (const binary of ['etcd', 'kube-apiserver'] as const) {
    try {
      locateBinary(binary, assets);
    } catch (err) {
      // locateBinary's own text names its option, not the flag or variable the user set.
      const problem = /not executable/.test((err as Error).message)
        ? `${binary} in ${displayPath(cwd, assets)} is not executable`
        : `${source} ${displayPath(cwd, assets)} has no ${binary}`;
      throw new UsageError(
        problem,
        `pass --bin-dir with etcd and kube-apiserver, or run \`npx ts-operator-sdk setup-envtest use ${SUGGESTED_VERSION} --bin-dir bin\``,
        { cause: err },
      );
    }
  }
  // Refused before anything starts; nothing is written yet (writeKubeconfig looks again once the plane runs).
  planKubeconfig(cwd, options.kubeconfigPath, options.kubeconfigNamed ?? true);
  const crdDirs =
    options.crdDirs.length > 0
      ? options.crdDirs
      : existsSync(join(cwd, DEFAULT_CRD_DIR))
        ? [join(cwd, DEFAULT_CRD_DIR)]
        : [];
  for (const dir of options.crdDirs) {
    if (!existsSync(dir))
      throw new UsageError(
        `--crd-dir ${displayPath(cwd, dir)} does not exist`,
        'pass a file or directory of CRD YAML (run `make manifests` first for config/crd/bases)',
      );
  }

  // Loaded once the input is checked: a refusal should not wait for the control plane's modules.
  const { Environment } = await import('../../runtime/envtest/environment.js');

  // Signals that arrive while starting also stop; they are handled from here on.
  let stopRequested: NodeJS.Signals | undefined;
  let wake: () => void = () => undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    stopRequested ??= signal;
    wake();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  // Read through a call: onSignal sets it during the awaits below, which TypeScript's narrowing does not see.
  const stopSignal = (): NodeJS.Signals | undefined => stopRequested;

  const env = new Environment({
    binaryAssetsDirectory: assets,
    crdDirectoryPaths: crdDirs,
    errorIfCRDPathMissing: true,
    apiServerPort: options.port,
  });
  let written: WrittenKubeconfig | undefined;
  try {
    io.progress(
      `starting etcd and kube-apiserver from ${displayPath(cwd, assets)}${crdDirs.length > 0 ? `, with the CRDs in ${crdDirs.map((dir) => displayPath(cwd, dir)).join(', ')}` : ''}`,
    );
    try {
      await env.start();
    } catch (err) {
      if (stopSignal()) return;
      const message = (err instanceof Error ? err.message : String(err))
        .split('\n')[0]!
        .replace(/^envtest: /, '')
        .replace(/[.;:]$/, '');
      const fix = /already in use/.test(message)
        ? 'pass another --port, or leave --port out for a free one'
        : 'run again with KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT=true to see etcd and kube-apiserver output';
      throw new UsageError(`the control plane did not start: ${message}`, fix, { cause: err });
    }
    if (stopSignal()) return;
    written = writeKubeconfig(cwd, options.kubeconfigPath, adminAccess(env), io, options.kubeconfigNamed ?? true);
    io.progress(
      `envtest: API server ${env.kubeConfig.getCurrentCluster()?.server ?? ''} is ready (user with system:masters); Ctrl-C stops it`,
    );
    io.out(`export KUBECONFIG=${shellQuote(options.kubeconfigPath)}`);

    // Foreground until a signal, or until a process dies under us.
    for (;;) {
      if (stopSignal()) break;
      const { etcd, apiServer } = env.pids;
      if (etcd === undefined || apiServer === undefined) {
        const dead = [etcd === undefined ? 'etcd' : '', apiServer === undefined ? 'kube-apiserver' : '']
          .filter(Boolean)
          .join(' and ');
        throw new UsageError(
          `${dead} exited unexpectedly; the control plane is stopped`,
          'run `envtest start` again (KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT=true shows their output)',
        );
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        void sleep(LIVENESS_POLL_MS).then(resolve);
      });
    }
    io.progress(`envtest: ${stopSignal()} received, stopping`);
  } finally {
    await env.stop();
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
    if (written) {
      try {
        restoreKubeconfig(written, io, cwd);
      } catch (err) {
        // Thrown from finally on purpose: a kubeconfig left with our entries must not pass silently.
        // eslint-disable-next-line no-unsafe-finally -- it replaces the command's outcome on purpose (see above)
        throw new UsageError(
          `could not put --kubeconfig ${displayPath(cwd, options.kubeconfigPath)} back as it was (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
          `remove the context ${written.name} from it yourself (kubectl config delete-context ${written.name})`,
          { cause: err },
        );
      }
      // Only directories this run created, and only if nothing else went into them since.
      if (written.createdDir !== undefined) removeEmptyDirs(written.createdDir, dirname(written.plan.target));
    }
  }
}

/** The admin credentials of the running plane, for the kubeconfig. */
function adminAccess(env: Environment): EnvtestAccess {
  const cluster = env.kubeConfig.getCurrentCluster();
  const user = env.kubeConfig.getCurrentUser();
  if (!cluster?.caData || !user?.certData || !user.keyData)
    throw new Error('envtest: the admin kubeconfig has no CA or client certificate');
  return { server: cluster.server, caData: cluster.caData, certData: user.certData, keyData: user.keyData };
}

/** --bin-dir, then KUBEBUILDER_ASSETS, then the newest setup-envtest download in the project's bin/ or the user cache. */
async function findAssets(options: EnvtestStartOptions): Promise<{ dir: string; source: string }> {
  if (options.binDir !== undefined) return { dir: options.binDir, source: '--bin-dir' };
  if (process.env.KUBEBUILDER_ASSETS) return { dir: process.env.KUBEBUILDER_ASSETS, source: 'KUBEBUILDER_ASSETS' };
  const { cachedEnvtestAssets } = await import('../../runtime/envtest/setup-envtest.js');
  const found = (await cachedEnvtestAssets(join(options.cwd, PROJECT_BIN_DIR))) ?? (await cachedEnvtestAssets());
  if (found) return { dir: found, source: 'the setup-envtest download' };
  throw new UsageError(
    'no envtest binaries: --bin-dir and KUBEBUILDER_ASSETS are unset and setup-envtest has downloaded none',
    `run \`make envtest-start\` (it downloads them), or \`npx ts-operator-sdk setup-envtest use ${SUGGESTED_VERSION} --bin-dir bin\` first`,
  );
}

/** Removes `deepest` and its parents up to and including `top`, stopping at the first that is not empty. */
function removeEmptyDirs(top: string, deepest: string): void {
  for (let dir = deepest; dir.startsWith(top); dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
    if (dir === top) return;
  }
}
