/**
 * ts-operator-sdk runtime: what generated operators import. One module per
 * concept (manager, controller, cache, workqueue, client, leader election,
 * metrics, health, log); this file is only the public surface.
 */
export * from './kinds.js';
export * from './errors.js';
export { RestClient, WatchStalledError, type WatchEvent, type RequestOptions, type Query } from './rest.js';
export { loadKubeConfig } from './kubeconfig.js';
export * from './apitypes.js';
export type { Reader, ListOptions, Selector } from './reader.js';
export { createLogger, silentLogger, type Logger, type LoggerOptions } from './log.js';
// -- client, controllerutil, conditions, events (client modules) --
// -- end client modules --
