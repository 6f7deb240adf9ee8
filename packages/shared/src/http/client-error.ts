import {
  type IncomingMessage,
  type ServerResponse,
  STATUS_CODES,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { PROBLEM_CONTENT_TYPE, ProblemError, type RenderedProblem, renderProblem } from '../problem.ts';

/**
 * What Node's HTTP server hands to a `clientError` listener: an llhttp parser error (`HPE_*`, with
 * the bytes it choked on in `rawPacket`), a timeout (`ERR_HTTP_REQUEST_TIMEOUT`), or a socket error
 * (`ECONNRESET`).
 */
export interface ClientError extends Error {
  code?: string;
  /** llhttp's one-line explanation, e.g. "Invalid header value char". */
  reason?: string;
  rawPacket?: Buffer;
}

export interface ClientErrorOptions {
  /** Base URL of the documentation, for `type` and `documentation_url`. */
  docsBase?: string;
  /** Headers every answer of the server carries (rate-limit state, request id, API version). */
  headers?: Record<string, string>;
}

/** A client error answered as a complete HTTP/1.1 response, ready to write to the socket. */
export interface ClientErrorResponse {
  status: number;
  problem: RenderedProblem['body'];
  /** Status line, headers and the problem document. */
  bytes: Buffer;
}

/** How long a socket that was answered may linger before it is destroyed (a peer that never reads). */
const LINGER_MS = 5_000;

// The statuses Node's own bare answers use for these errors (lib/_http_server.js socketOnError).
const STATUS_BY_CODE: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

function describe(error: ClientError, status: number): { detail: string; resolution?: string } {
  switch (status) {
    case 431:
      return {
        detail: 'The request line and headers are larger than this server accepts.',
        resolution: 'Send a shorter URL and fewer or smaller headers (cookies, tokens) and retry.',
      };
    case 413:
      return { detail: 'The chunk extensions of the request body are larger than this server accepts.' };
    case 408:
      return {
        detail: 'The request headers did not arrive in time.',
        resolution: 'Send the complete request head promptly after opening the connection, then retry.',
      };
    default: {
      // llhttp's reasons are fixed phrases about the request's own bytes ("Invalid method"), safe
      // to echo and far more useful to the sender than "bad request".
      const reason =
        typeof error.reason === 'string' && error.reason ? `: ${error.reason.slice(0, 200)}` : '';
      return {
        detail: `The request could not be parsed as HTTP/1.1${reason}.`,
        resolution:
          'Send a well-formed HTTP/1.1 request (RFC 9112): one request line, valid headers, one body framing.',
      };
    }
  }
}

/** The path of the request line in the bytes the parser rejected, when there is one. */
function instanceOf(error: ClientError): string {
  const head = error.rawPacket?.subarray(0, 2100).toString('latin1') ?? '';
  const target = /^[A-Z]{1,20} (\/[^\s?#]*)/.exec(head)?.[1];
  return target ? target.slice(0, 2048) : '/';
}

/**
 * The problem document and raw response for a request Node's HTTP parser rejected or that timed
 * out: 431 for headers over the size limit, 408 for a header timeout, 413 for oversized chunk
 * extensions, 400 for anything else (bad framing, garbage). The connection is always closed after
 * it: the parser cannot tell where the next request would start.
 */
export function clientErrorResponse(
  error: ClientError,
  options: ClientErrorOptions = {},
): ClientErrorResponse {
  const status = STATUS_BY_CODE[error.code ?? ''] ?? 400;
  const { detail, resolution } = describe(error, status);
  const rendered = renderProblem(
    { status, message: detail, expose: true },
    instanceOf(error),
    options.docsBase,
  );
  const problem = resolution ? { ...rendered.body, resolution } : rendered.body;
  return { status, problem, bytes: rawProblemBytes(status, problem, options.headers) };
}

/** A complete HTTP/1.1 response carrying a problem document, after which the connection closes. */
function rawProblemBytes(
  status: number,
  problem: RenderedProblem['body'],
  extraHeaders: Record<string, string> = {},
): Buffer {
  const body = Buffer.from(JSON.stringify(problem));
  const headers: Record<string, string> = {
    ...extraHeaders,
    'Content-Type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    'Content-Length': String(body.length),
    'Cache-Control': 'no-store',
    Connection: 'close',
  };
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    // There is no ServerResponse to check these on the way out, so check them here: a bad value
    // must not put a stray line into the raw response.
    validateHeaderName(name);
    validateHeaderValue(name, value);
    head += `${name}: ${value}\r\n`;
  }
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), body]);
}

/**
 * The answer to a CONNECT request (RFC 9110 §9.3.6): it asks for a tunnel, which only a proxy
 * opens, so an origin server answers 400 invalid_request. The connection is closed after it: the
 * parser has let go of the socket.
 */
export function connectResponse(req: IncomingMessage, options: ClientErrorOptions = {}): ClientErrorResponse {
  const target = req.url ?? '';
  const instance = target.startsWith('/') ? target.split('?')[0]!.slice(0, 2048) : '/';
  const rendered = new ProblemError(
    'invalid_request',
    'CONNECT asks for a tunnel; this server is not a proxy and opens none.',
    {
      resolution:
        'Send GET, HEAD or POST requests for the paths this server answers, without a proxy tunnel.',
    },
  ).toProblem(instance, options.docsBase);
  return { status: 400, problem: rendered, bytes: rawProblemBytes(400, rendered, options.headers) };
}

/**
 * A `connect` listener for `server.on('connect', ...)`. Without one Node destroys the socket of a
 * CONNECT request without answering; with it the client gets a problem document like every other
 * refused request. `headers` and `onAnswer` as for createClientErrorHandler.
 */
export function createConnectHandler(options: {
  docsBase?: string;
  headers?: (socket: Socket) => Record<string, string>;
  onAnswer?: (event: {
    req: IncomingMessage;
    response: ClientErrorResponse;
    headers: Record<string, string>;
  }) => void;
}): (req: IncomingMessage, socket: Duplex) => void {
  return (req, duplex) => {
    const socket = duplex as Socket;
    const headers = options.headers?.(socket) ?? {};
    const response = connectResponse(req, { docsBase: options.docsBase, headers });
    // Whatever the client sends after the head is not read; a reset peer is no error of ours.
    socket.on('error', () => socket.destroy());
    if (socket.writable) {
      socket.end(response.bytes);
      socket.setTimeout(LINGER_MS, () => socket.destroy());
    } else {
      socket.destroy();
    }
    options.onAnswer?.({ req, response, headers });
  };
}

/**
 * Answers a `clientError` with a problem document where the socket allows it, as Node's default
 * listener does with its bare bodies: only when the socket is still writable and no response of
 * an earlier request on it has started (a second response in the middle of one would corrupt
 * what the client reads). A reset socket is only destroyed. Returns the answer it wrote, if any.
 */
export function answerClientError(
  error: ClientError,
  socket: Socket,
  options: ClientErrorOptions = {},
): ClientErrorResponse | undefined {
  // `_httpMessage` is the response Node has attached to the socket; Node's own listener checks it.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return undefined;
  }
  const response = clientErrorResponse(error, options);
  socket.end(response.bytes);
  socket.setTimeout(LINGER_MS, () => socket.destroy());
  return response;
}

/**
 * A `clientError` listener for `server.on('clientError', ...)`. `headers` gives the headers of
 * every response for this socket (there is no request to read them from); `onAnswer` sees each
 * error and what was sent, for the log.
 */
export function createClientErrorHandler(options: {
  docsBase?: string;
  headers?: (socket: Socket) => Record<string, string>;
  onAnswer?: (event: {
    error: ClientError;
    response: ClientErrorResponse | undefined;
    headers: Record<string, string>;
  }) => void;
}): (error: ClientError, socket: Socket) => void {
  return (error, socket) => {
    const headers = options.headers?.(socket) ?? {};
    const response = answerClientError(error, socket, { docsBase: options.docsBase, headers });
    options.onAnswer?.({ error, response, headers });
  };
}

/**
 * RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without a Host header, and to any
 * request with more than one Host line. Node answers the first with a bare 400 of its own unless the
 * server is created with `requireHostHeader: false`, and lets the second through; create the server
 * so and call this first in the request handler, so both get a problem document.
 */
export function hostHeaderProblem(req: IncomingMessage): ProblemError | undefined {
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
  }
  if (hosts > 1) {
    return new ProblemError('invalid_request', 'The request carries more than one Host header.', {
      resolution: 'Send exactly one Host header (RFC 9112 §3.2).',
      headers: { Connection: 'close' },
    });
  }
  if (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    return new ProblemError('invalid_request', 'The request has no Host header, which HTTP/1.1 requires.', {
      resolution: 'Send a Host header naming the server (RFC 9112 §3.2).',
      headers: { Connection: 'close' },
    });
  }
  return undefined;
}
