/**
 * `ts-operator-sdk/recorder`: Kubernetes Events (`newEventRecorder`), as
 * controller-runtime's `pkg/recorder`.
 * This file is only the package's public surface.
 */
export { newEventRecorder, type EventRecorder, type EventType } from './recorder.js';
