import { constants } from 'node:os';

/**
 * What SIGINT, SIGTERM and SIGHUP do while project files are being written.
 *
 * Outside a write these signals keep their usual effect: the process dies by
 * the signal. Inside a write (an "uninterruptible section", entered by the
 * journal's commit) the first signal is only noted; the commit then either
 * undoes its staging or finishes applying, and calls
 * {@link exitForInterruption}, so an interrupted command always ends non-zero
 * with a whole tree behind it. A third signal during the same write stops the
 * process at once: the journal is durable by then, and the next command
 * recovers it exactly as after `kill -9`.
 */

const DEFERRED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type DeferredSignal = (typeof DEFERRED_SIGNALS)[number];

/** Signals that stop waiting for the write to finish; the journal covers the rest. */
const SIGNALS_BEFORE_GIVING_UP = 3;

let listenersInstalled = false;
let openSections = 0;
let pendingSignal: DeferredSignal | undefined;
let signalsReceived = 0;

/** One write that must not be cut in half by a signal. */
export interface UninterruptibleSection {
  /** The first signal received since the section began, if any. */
  readonly signal: NodeJS.Signals | undefined;
  /** Ends the section; returns the first signal received during it, if any. */
  end(): NodeJS.Signals | undefined;
}

/**
 * Starts deferring SIGINT/SIGTERM/SIGHUP. The listeners stay installed for
 * the rest of the process (removing them could drop a signal that arrived
 * just before), and outside a section they re-raise the signal with its
 * default action.
 */
export function beginUninterruptible(): UninterruptibleSection {
  installListeners();
  openSections += 1;
  let ended = false;
  return {
    get signal() {
      return pendingSignal;
    },
    end() {
      const signal = pendingSignal;
      if (!ended) {
        ended = true;
        openSections -= 1;
        if (openSections === 0) {
          pendingSignal = undefined;
          signalsReceived = 0;
        }
      }
      return signal;
    },
  };
}

/**
 * Ends the process after a deferred signal: one line on stderr saying what
 * state the files are in, and the shell's exit status for that signal
 * (128 + its number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
 */
export function exitForInterruption(signal: NodeJS.Signals, outcome: string): never {
  process.stderr.write(`Interrupted by ${signal}: ${outcome}.\n`);
  process.exit(128 + constants.signals[signal]);
}

function installListeners(): void {
  if (listenersInstalled) return;
  listenersInstalled = true;
  for (const signal of DEFERRED_SIGNALS) process.on(signal, onSignal);
}

function onSignal(signal: NodeJS.Signals): void {
  const deferred = signal as DeferredSignal;
  if (openSections === 0) {
    reraise(deferred);
    return;
  }
  pendingSignal ??= deferred;
  signalsReceived += 1;
  if (signalsReceived >= SIGNALS_BEFORE_GIVING_UP) {
    exitForInterruption(
      signal,
      'stopped in the middle of writing the project files; the next ts-operator-sdk command run in this directory will complete or undo the write',
    );
  }
}

/** Dies by `signal` as if no listener had been installed. */
function reraise(signal: DeferredSignal): void {
  for (const each of DEFERRED_SIGNALS) process.off(each, onSignal);
  listenersInstalled = false;
  process.kill(process.pid, signal);
}
