import { Writable } from 'node:stream';
import { createLogger } from '../../src/runtime/index.js';
import { type Logger } from '../../src/runtime/log/index.js';

/** A JSON logger whose lines the test can search, to prove what the operator reported. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}
