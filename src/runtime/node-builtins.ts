/**
 * The Node built-ins whose ES import costs memory at start, taken from
 * process.getBuiltinModule instead. An ES import of a built-in reads every
 * export, lazy getters included: node:http's WebSocket, CloseEvent and
 * MessageEvent getters load Node's bundled undici (+9 MiB RSS), and
 * node:util's load worker_threads, parseArgs and the stream stack (+0.7 MiB),
 * none of which the runtime uses. test/unit/runtime-footprint.test.ts fails
 * if an ES import of either slips back in.
 */
export const { format, isDeepStrictEqual } = process.getBuiltinModule('node:util');
export const {
  Agent: HttpAgent,
  request: httpRequest,
  createServer: createHttpServer,
} = process.getBuiltinModule('node:http');
