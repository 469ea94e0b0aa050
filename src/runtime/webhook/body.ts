import type { IncomingMessage } from 'node:http';

/** A request body the webhook cannot decode: answered as a 400, never thrown past the handler. */
export class RequestBodyError extends Error {
  constructor(
    message: string,
    /** The rest of the body was not read, so the connection cannot be reused. */
    readonly closeConnection = false,
  ) {
    super(message);
    this.name = 'RequestBodyError';
  }
}

/**
 * Reads a JSON body of at most `maxBytes`. Throws RequestBodyError for a
 * wrong content type, an empty or oversized body, or invalid JSON; stops
 * reading at the bound, so an endless body costs no more than `maxBytes`.
 */
export async function readBoundedJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') {
    req.resume();
    throw new RequestBodyError(`contentType=${contentType || '(none)'}, expected application/json`);
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes)
    throw new RequestBodyError(`request body of ${declared} bytes exceeds the limit of ${maxBytes}`, true);
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // Stop reading without destroying the socket, so the 400 answer can still be written.
      req.off('data', onData);
      req.pause();
      reject(new RequestBodyError(`request body exceeds the limit of ${maxBytes} bytes`, true));
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
  const size = body.length;
  if (size === 0) throw new RequestBodyError('request body is empty');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new RequestBodyError(`request body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}
