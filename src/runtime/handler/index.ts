/**
 * `ts-operator-sdk/handler`: how a watched event becomes requests
 * (`enqueueForObject`, `enqueueForOwner`, `enqueueFromMapFunc`).
 * This file is only the package's public surface.
 */
export { enqueueForObject, enqueueForOwner, enqueueFromMapFunc, type RequestMapper } from './handler.js';
