/**
 * `ts-operator-sdk/healthz`: health and readiness checkers for the manager's
 * probe endpoints.
 * This file is only the package's public surface.
 */
export { ping, type Checker } from './healthz.js';
