/**
 * `ts-operator-sdk/client`: `Client` (reads from the cache, writes to the API
 * server), the `Reader` interface, `Stored<T>` and the patch helpers.
 * This file is only the package's public surface.
 */
export {
  Client,
  ApiReader,
  mergePatch,
  jsonPatch,
  strategicMergePatch,
  DEFAULT_LIST_PAGE_SIZE,
  type ClientOptions,
  type Patch,
  type JsonPatchOperation,
  type WriteOptions,
  type PatchOptions,
  type DeleteOptions,
  type DeleteAllOfOptions,
  type StatusWriter,
} from './client.js';
export { type Reader, type ListOptions, type Selector, type Stored, type StoredMetadata } from './reader.js';
export type { GetOptions } from './reader.js';
export type { CallOptions } from './call.js';
