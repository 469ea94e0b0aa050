import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Logger } from '../log/log.js';

/**
 * How often the files are re-read even when no file event arrived:
 * controller-runtime's certwatcher interval. File events (fs.watch) make
 * a rotation visible at once; the poll covers file systems and Secret
 * volume symlink swaps that fs.watch reports late or not at all.
 */
export const DEFAULT_CERT_POLL_INTERVAL_MS = 10_000;
/** The certificate file name cert-manager writes into a TLS Secret (the webhook and metrics servers' default). */
export const DEFAULT_CERT_NAME = 'tls.crt';
/** The private key file name cert-manager writes into a TLS Secret. */
export const DEFAULT_KEY_NAME = 'tls.key';
/** Several events arrive for one rotation (cert, key, symlink): read once they settle. */
const EVENT_SETTLE_MS = 100;

/** A PEM certificate chain and its private key. */
export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
}

/**
 * Watches a certificate and key file and reports each new, valid pair, so a
 * TLS server picks up rotated certificates (cert-manager renewals, Secret
 * updates) without a restart. A half-written or mismatched pair is ignored
 * and the previous one kept; the next change (or poll) tries again.
 */
export class CertWatcher {
  private current?: CertificatePair;
  private watcher?: FSWatcher;
  private poll?: NodeJS.Timeout;
  private settle?: NodeJS.Timeout;
  private reading = Promise.resolve();

  constructor(
    readonly certFile: string,
    readonly keyFile: string,
    private readonly onRotate: (pair: CertificatePair) => void,
    private readonly log: Logger,
    private readonly pollIntervalMs = DEFAULT_CERT_POLL_INTERVAL_MS,
  ) {}

  /** Reads the pair for the first time; throws one line naming the file and the fix when it is missing or unusable. */
  async load(): Promise<CertificatePair> {
    let pair: CertificatePair;
    try {
      pair = { cert: await readFile(this.certFile), key: await readFile(this.keyFile) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const file = (err as NodeJS.ErrnoException).path ?? this.certFile;
      throw new Error(
        `cannot read ${file} (${code ?? String(err)}): mount the serving certificate there (cert-manager Secret), or point certDir at the directory holding ${this.certFile.split('/').pop()} and ${this.keyFile.split('/').pop()}`,
        { cause: err },
      );
    }
    const problem = pairProblem(pair);
    if (problem)
      throw new Error(
        `${this.certFile} and ${this.keyFile} are not a usable TLS pair: ${problem}: write a PEM certificate and its matching private key`,
      );
    this.current = pair;
    return pair;
  }

  /** Starts watching; call after {@link load}. Stops when `signal` aborts. */
  start(signal: AbortSignal): void {
    // reread() logs its own failures and keeps the current pair; no caller waits for it.
    const changed = (): void => {
      clearTimeout(this.settle);
      this.settle = setTimeout(() => void this.reread(), EVENT_SETTLE_MS);
      this.settle.unref();
    };
    try {
      // The directory, not the files: Secret volumes replace files by swapping a symlink.
      this.watcher = watch(dirname(this.certFile), { persistent: false }, changed);
      this.watcher.on('error', (err) => this.log.debug({ err }, 'certificate directory watch failed; polling only'));
    } catch (err) {
      this.log.debug({ err }, 'cannot watch the certificate directory; polling only');
    }
    this.poll = setInterval(() => void this.reread(), this.pollIntervalMs);
    this.poll.unref();
    signal.addEventListener('abort', () => this.stop(), { once: true });
  }

  /** Stops watching and polling. */
  stop(): void {
    this.watcher?.close();
    clearInterval(this.poll);
    clearTimeout(this.settle);
  }

  /** Reads both files again and reports the pair if it changed and is valid; reads never overlap. */
  private reread(): Promise<void> {
    this.reading = this.reading.then(async () => {
      let pair: CertificatePair;
      try {
        pair = { cert: await readFile(this.certFile), key: await readFile(this.keyFile) };
      } catch (err) {
        this.log.debug({ err }, 'certificate files not readable now; keeping the current pair');
        return;
      }
      if (this.current && pair.cert.equals(this.current.cert) && pair.key.equals(this.current.key)) return;
      const problem = pairProblem(pair);
      if (problem) {
        // Usually a rotation caught between writing the cert and the key.
        this.log.debug(
          { certFile: this.certFile, problem },
          'certificate files changed but are not a valid pair yet; keeping the current pair',
        );
        return;
      }
      this.current = pair;
      this.onRotate(pair);
      this.log.info({ certFile: this.certFile }, 'Updated current TLS certificate');
    });
    return this.reading;
  }
}

/** Why `pair` cannot serve TLS, or undefined if it can. */
function pairProblem(pair: CertificatePair): string | undefined {
  try {
    createSecureContext({ cert: pair.cert, key: pair.key });
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
