import { createHmac } from 'node:crypto';
import { ProblemError } from '@switchyard/shared';
import { keysMatch } from '../../platform/http/auth.ts';

/** The headers a signed decision carries. */
export const TIMESTAMP_HEADER = 'X-Service-Timestamp';
export const SIGNATURE_HEADER = 'X-Service-Signature';

/**
 * The signature of a decision: `sha256=` and the hex HMAC-SHA256, keyed with
 * approvals.webhook_secret, of `<timestamp>.<raw body>`. The timestamp is inside what is signed,
 * so a captured request cannot be replayed with a fresher one.
 */
export function decisionSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;
}

function unauthorized(detail: string): ProblemError {
  return new ProblemError('unauthorized', detail, {
    resolution: `Sign the decision: ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>" with the approval webhook secret>, and ${TIMESTAMP_HEADER}: <unix seconds>, within the tolerance of the control plane's clock.`,
  });
}

/**
 * Checks a signed decision (approvals.webhook_secret set): the timestamp is unix seconds within
 * `toleranceMs` of `nowMs`, and the signature matches, compared in constant time. Throws 401.
 */
export function verifyDecision(
  headers: { timestamp: string | undefined; signature: string | undefined },
  body: string,
  options: { secret: string; toleranceMs: number; nowMs: number },
): void {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature) {
    throw unauthorized(
      `Decisions must be signed on this server: send ${TIMESTAMP_HEADER} and ${SIGNATURE_HEADER}.`,
    );
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw unauthorized(`${TIMESTAMP_HEADER} must be a unix time in seconds.`);
  }
  const skewMs = Math.abs(options.nowMs - Number(timestamp) * 1000);
  if (skewMs > options.toleranceMs) {
    throw unauthorized(
      `${TIMESTAMP_HEADER} is ${Math.round(skewMs / 1000)} s away from the server's clock; the tolerance is ${options.toleranceMs / 1000} s.`,
    );
  }
  if (!keysMatch(signature.trim(), decisionSignature(options.secret, timestamp, body))) {
    throw unauthorized(`${SIGNATURE_HEADER} does not match the body and timestamp.`);
  }
}
