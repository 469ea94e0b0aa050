/**
 * `ts-operator-sdk/pod`: a Pod's subresources: `exec` (one-shot and streaming)
 * and logs (read and follow).
 * This file is only the package's public surface.
 */
export {
  execInPod,
  execStreamInPod,
  PodExecError,
  CommandNotFoundError,
  ExecOutputTooLargeError,
  ExecTimeoutError,
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_EXEC_MAX_OUTPUT_BYTES,
  type ExecOptions,
  type ExecStreamOptions,
  type ExecCommonOptions,
  type ExecResult,
} from './exec.js';
export { readPodLogs, followPodLogs, type LogOptions } from './logs.js';
export { ContainerNotFoundError, PodNotRunningError, type PodReference } from './subresources.js';
