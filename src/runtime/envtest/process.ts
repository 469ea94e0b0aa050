import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How much of a binary's combined output to keep for error messages. */
const OUTPUT_TAIL_BYTES = 4096;
const HEALTH_POLL_INTERVAL_MS = 100;
/**
 * On Linux, util-linux `setpriv --pdeathsig` makes the kernel SIGKILL the
 * binary when this process dies, even by SIGKILL or a crash, when no exit
 * handler can run. It execs in place, so the pid we hold is the binary's.
 * The kernel ties the signal to the spawning thread, so an Environment
 * started in a worker thread also ends with that worker.
 */
const SETPRIV = '/usr/bin/setpriv';

/** Every control-plane process still running, so an exiting test process can kill them. */
const liveChildren = new Set<ChildProcess>();
/** Temp dirs of environments not yet stopped, removed if the process exits without `stop()`. */
const liveTempDirs = new Set<string>();
let exitHooksInstalled = false;

/** Removes `dir` when this process exits, unless {@link releaseTempDirOnExit} is called first. */
export function removeTempDirOnExit(dir: string): void {
  installExitHooks();
  liveTempDirs.add(dir);
}

/** Undoes {@link removeTempDirOnExit} once the dir has been removed normally. */
export function releaseTempDirOnExit(dir: string): void {
  liveTempDirs.delete(dir);
}

/** Only synchronous work runs in an exit handler, so this kills without waiting. */
function cleanUpNow(): void {
  for (const child of liveChildren) child.kill('SIGKILL');
  liveChildren.clear();
  for (const dir of liveTempDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  liveTempDirs.clear();
}

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', cleanUpNow);
  // A signal handler replaces Node's default "exit at once", so after
  // cleaning up we re-raise the signal to keep the process's usual fate.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      cleanUpNow();
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** Checks readiness; resolves true once the process serves. Errors count as "not yet". */
export type HealthProbe = () => Promise<boolean>;

/** What to run and how to tell that it is ready. */
export interface ProcessSpec {
  /** Short name for messages, e.g. `kube-apiserver`. */
  name: string;
  binaryPath: string;
  args: string[];
  healthProbe: HealthProbe;
  /** Pipe the binary's output to this process's stdout/stderr. */
  attachOutput?: boolean;
}

/**
 * One control-plane binary: started, health-checked, and stopped with
 * SIGTERM then SIGKILL. It can be restarted with the same arguments.
 */
export class ManagedProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private exitDescription: string | undefined;
  private outputTail = '';

  constructor(readonly spec: ProcessSpec) {}

  /** The pid of the running binary, if any. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True while the binary runs. */
  get running(): boolean {
    return this.child !== undefined && this.exitDescription === undefined;
  }

  /**
   * How the binary exited, as its exit handler recorded it. A call, not the
   * field: the handler runs during awaits, which TypeScript's narrowing of
   * the field does not see.
   */
  private exitedAs(): string | undefined {
    return this.exitDescription;
  }

  /** The last few KB of the binary's stdout and stderr. */
  get output(): string {
    return this.outputTail;
  }

  /** Starts the binary and waits until its health probe passes or `timeoutMs` runs out. */
  async start(timeoutMs: number): Promise<void> {
    if (this.running) return;
    installExitHooks();
    this.outputTail = '';
    this.exitDescription = undefined;
    const useSetpriv = process.platform === 'linux' && existsSync(SETPRIV);
    const command = useSetpriv ? SETPRIV : this.spec.binaryPath;
    const args = useSetpriv
      ? ['--pdeathsig', 'SIGKILL', '--', this.spec.binaryPath, ...this.spec.args]
      : this.spec.args;
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    liveChildren.add(child);
    const record = (chunk: Buffer, sink: NodeJS.WriteStream): void => {
      this.outputTail = (this.outputTail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
      if (this.spec.attachOutput) sink.write(chunk);
    };
    child.stdout?.on('data', (chunk: Buffer) => record(chunk, process.stdout));
    child.stderr?.on('data', (chunk: Buffer) => record(chunk, process.stderr));
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        this.exitDescription = `failed to start: ${err.message}`;
        liveChildren.delete(child);
        resolve();
      });
      child.once('exit', (code, signal) => {
        this.exitDescription = signal ? `killed by ${signal}` : `exited with code ${code}`;
        liveChildren.delete(child);
        resolve();
      });
    });

    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const exited = this.exitedAs();
      if (exited !== undefined) {
        throw new Error(
          `${this.spec.name} (${this.spec.binaryPath}) ${exited} before becoming healthy; output:\n${this.tail()}`,
        );
      }
      if (await this.spec.healthProbe().catch(() => false)) return;
      await sleep(HEALTH_POLL_INTERVAL_MS);
    }
    await this.stop(0);
    throw new Error(
      `${this.spec.name} (${this.spec.binaryPath}) did not become healthy within ${timeoutMs} ms (raise startTimeoutMs or KUBEBUILDER_CONTROLPLANE_START_TIMEOUT); output:\n${this.tail()}`,
    );
  }

  /** Sends SIGTERM, then SIGKILL if the binary is still running after `timeoutMs`. Safe to call twice. */
  async stop(timeoutMs: number): Promise<void> {
    const child = this.child;
    if (!child || this.exitDescription !== undefined) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private tail(): string {
    const lines = this.outputTail.trimEnd().split('\n');
    return (
      lines
        .slice(-20)
        .map((line) => `  ${line}`)
        .join('\n') || `  (no output from ${basename(this.spec.binaryPath)})`
    );
  }
}
