import { AddressNotAllowedError } from './address-rule.ts';

/**
 * How far a failed exchange got:
 * - `not_sent`: no connection was made (refused, unresolvable, unreachable, connect timeout, or an
 *   address the client's policy refuses): the other side cannot have seen the request;
 * - `no_answer`: the request may have gone out, but no answer came (reset, closed);
 * - `cut_off`: the answer began (`status` is set) and broke off before its end;
 * - `too_large`: the answer's body is over the request's limit and the request said `fail`;
 * - `timeout`: the request's own `timeoutMs` passed (`status` is set when the answer had begun);
 * - `aborted`: the caller's signal aborted.
 */
export type OutboundFailure = 'not_sent' | 'no_answer' | 'cut_off' | 'too_large' | 'timeout' | 'aborted';

/** Socket and undici errors that mean nothing reached the other side. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
    /** The socket's or undici's error code (ECONNREFUSED, UND_ERR_SOCKET…) when it had one. */
    readonly code: string | undefined,
    /** The answer's status when its head had arrived, else null. */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

/** The string code of an error or of its cause (a DOMException's numeric `code` is no such code). */
function codeOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.cause?.code === 'string') return e.cause.code;
  return undefined;
}

/** An error thrown by undici or a socket, as the OutboundError of the exchange it ended. */
export function outboundErrorOf(
  error: unknown,
  context: { status: number | null; timedOut: boolean; timeoutMs?: number; aborted: boolean },
): OutboundError {
  const { status } = context;
  if (context.timedOut) {
    return new OutboundError('timeout', `timed out after ${context.timeoutMs} ms`, undefined, status);
  }
  const code = codeOf(error);
  if (context.aborted) {
    return new OutboundError('aborted', 'the request was abandoned', code, status);
  }
  const message = (error as Error)?.message || String(error);
  if (status !== null) return new OutboundError('cut_off', message, code, status);
  if (error instanceof AddressNotAllowedError || (code !== undefined && NOT_SENT.has(code))) {
    return new OutboundError('not_sent', message, code);
  }
  return new OutboundError('no_answer', message, code);
}
