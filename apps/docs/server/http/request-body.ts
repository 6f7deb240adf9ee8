import type { IncomingMessage } from 'node:http';
import { ProblemError } from '@switchyard/shared';
import getRawBody from 'raw-body';

/**
 * The client went away before its request body was complete. Nobody is left to answer, and it
 * is not a server failure: the error handler ends the response quietly (one `info` log line).
 */
export class ClientAbortError extends Error {
  constructor() {
    super('the client closed the connection before the request body was complete');
    this.name = 'ClientAbortError';
  }
}

function tooLarge(limit: number): ProblemError {
  return new ProblemError('payload_too_large', `The request body exceeds the limit of ${limit} bytes.`, {
    // The rest of an oversized body is not read; closing tells the client not to reuse the connection.
    headers: { Connection: 'close' },
  });
}

/**
 * Reads a request body of at most `limit` bytes with raw-body. A declared Content-Length over the
 * limit is refused before reading anything; a chunked (or lying) body is counted as it arrives
 * and refused as soon as it passes the limit, so an endless stream cannot fill memory. Either
 * way the rest is drained and discarded so the 413 can be written before the connection closes.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  // raw-body waits for 'aborted' or 'end'; a request that only closes would leave it waiting.
  let onClose: (() => void) | undefined;
  const closed = new Promise<never>((_, reject) => {
    onClose = () => {
      if (!req.complete) reject(new ClientAbortError());
    };
    req.once('close', onClose);
  });
  try {
    return await Promise.race([
      getRawBody(req, { limit, length: req.headers['content-length'] ?? null }),
      closed,
    ]);
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') {
      req.resume();
      throw tooLarge(limit);
    }
    if (
      error instanceof ClientAbortError ||
      type === 'request.aborted' ||
      (error as { code?: string }).code === 'ECONNRESET'
    ) {
      throw new ClientAbortError();
    }
    throw error;
  } finally {
    if (onClose) req.off('close', onClose);
    // The race's loser must not surface as an unhandled rejection.
    closed.catch(() => {});
  }
}
