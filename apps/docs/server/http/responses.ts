import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROBLEM_CONTENT_TYPE, type Problem, type ProblemError } from '@switchyard/shared';
import { originForm } from './request-target.ts';

/** Adds one link-value to the response's Link header, keeping the ones already set. */
export function appendLink(res: ServerResponse, value: string): void {
  const existing = res.getHeader('Link');
  res.setHeader('Link', existing ? `${String(existing)}, ${value}` : value);
}

/** Writes a JSON body (Node drops the body itself on HEAD, but keeps the length). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  contentType = 'application/json; charset=utf-8',
): void {
  sendJsonText(res, status, JSON.stringify(body), contentType);
}

/** Writes JSON that is already serialised (cached answers). */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  text: string | Buffer,
  contentType = 'application/json; charset=utf-8',
): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', typeof text === 'string' ? Buffer.byteLength(text) : text.length);
  res.end(text);
}

/** Writes a complete problem document; headers carried by the error (Allow, Retry-After) go along. */
export function sendProblem(
  req: IncomingMessage,
  res: ServerResponse,
  error: ProblemError,
  docsBase: string,
  extra: Record<string, unknown> = {},
): void {
  const problem: Problem = { ...error.toProblem(instanceOf(req), docsBase), ...extra };
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.setHeader('Cache-Control', 'no-store');
  // Content negotiation of the page is over once an error is chosen; the document stays the same.
  sendJson(res, problem.status, problem, `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
}

/** The request path (without the query) that failed, as RFC 9457's `instance` member. */
export function instanceOf(req: IncomingMessage): string {
  const raw = originForm(req.url ?? '/') ?? '/';
  const path = raw.split('?')[0] ?? '/';
  // Cap what is echoed back: an instance is a pointer, not a place to reflect a 64 KB path.
  return path.length > 2048 ? `${path.slice(0, 2048)}…` : path;
}
