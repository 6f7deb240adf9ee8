import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROBLEM_CONTENT_TYPE, type Problem, type RenderedProblem, renderProblem } from '@switchyard/shared';
import { type Encoding, endCompressed } from './compression.ts';
import { markFailed } from './logger.ts';
import { originForm } from './request-target.ts';

/** Adds one link-value to the response's Link header, keeping the ones already set. */
export function appendLink(res: ServerResponse, value: string): void {
  const existing = res.getHeader('Link');
  res.setHeader('Link', existing ? `${String(existing)}, ${value}` : value);
}

/** Writes a JSON body, compressed when large enough and the client accepts it. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  contentType = 'application/json; charset=utf-8',
): void {
  sendJsonText(res, status, JSON.stringify(body), contentType);
}

/**
 * Writes JSON that is already serialised (cached answers); `forms` keeps its compressed forms
 * across requests (see endCompressed).
 */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  text: string | Buffer,
  contentType = 'application/json; charset=utf-8',
  forms?: Map<Encoding, Buffer>,
): void {
  res.statusCode = status;
  // Every response of a node:http server knows its request; the coding is chosen from its headers.
  endCompressed(res.req, res, typeof text === 'string' ? Buffer.from(text) : text, contentType, forms);
}

/**
 * Renders any error as a problem document through the shared renderer and sends it: a
 * ProblemError keeps its code and headers (Allow, Retry-After), a library error with a client
 * status maps to its code, anything else is a 500 that reveals nothing. `extend` adds members to
 * the document. An unexpected error is marked for the request's log line, which carries its stack.
 */
export function sendProblem(
  req: IncomingMessage,
  res: ServerResponse,
  error: unknown,
  docsBase: string,
  extend?: (problem: Problem) => Record<string, unknown>,
): RenderedProblem {
  const rendered = renderProblem(error, instanceOf(req), docsBase);
  if (rendered.unexpected) markFailed(res, error);
  for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
  res.setHeader('Cache-Control', 'no-store');
  const body = extend ? { ...rendered.body, ...extend(rendered.body) } : rendered.body;
  // Content negotiation of the page is over once an error is chosen; the document stays the same.
  sendJson(res, rendered.status, body, `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  return rendered;
}

/** The request path (without the query) that failed, as RFC 9457's `instance` member. */
export function instanceOf(req: IncomingMessage): string {
  const raw = originForm(req.url ?? '/') ?? '/';
  const path = raw.split('?')[0] ?? '/';
  // Cap what is echoed back: an instance is a pointer, not a place to reflect a 64 KB path.
  return path.length > 2048 ? `${path.slice(0, 2048)}…` : path;
}
