import type { IncomingMessage } from 'node:http';
import { ProblemError } from '@switchyard/shared';

function tooLarge(limit: number): ProblemError {
  return new ProblemError('payload_too_large', `The request body exceeds the limit of ${limit} bytes.`, {
    // The rest of an oversized body is not read; closing tells the client not to reuse the connection.
    headers: { Connection: 'close' },
  });
}

/**
 * Reads a request body of at most `limit` bytes. A declared Content-Length over the limit is
 * refused before reading anything; a chunked (or lying) body is counted as it arrives and
 * refused as soon as it passes the limit, so an endless stream cannot fill memory.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw tooLarge(limit);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        settled = true;
        chunks.length = 0;
        req.off('data', onData);
        // Keep draining (and discarding) so the 413 can be written before the connection closes.
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, received));
    });
    req.once('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
    // A client that disconnects mid-body never sends 'end'; without this the handler would wait forever.
    req.once('close', () => {
      if (settled) return;
      settled = true;
      reject(new Error('the client closed the connection before the body was complete'));
    });
  });
}
