import { ProblemError } from '@switchyard/shared';
import { z } from 'zod';
import { pageCursorQuery, pageLimitQuery } from '../../platform/http/paging.ts';
import { timeInRange } from '../../platform/http/timestamps.ts';
import { findUnstorable } from '../../platform/json-storable.ts';
import { nullable } from '../../platform/nullable.ts';

/** Approval statuses: the decision, `expired` (no decision in time), `cancelled` (the execution ended first). */
export const APPROVAL_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'request_changes',
  'expired',
  'cancelled',
] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** What a reviewer may decide (POST /api/v1/webhooks/approval). */
export const DECISIONS = ['approved', 'rejected', 'request_changes'] as const;
export type Decision = (typeof DECISIONS)[number];

/** Where a decision's delivery to the agent's callback_url stands. */
export const CALLBACK_STATUSES = ['pending', 'delivering', 'delivered', 'abandoned'] as const;
export type CallbackStatus = (typeof CALLBACK_STATUSES)[number];

export const MAX_APPROVAL_ID = 200;
export const MAX_URL = 2048;
export const MAX_FEEDBACK = 10_000;
export const MAX_REASON = 1_000;
export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;

/** C0 and C1 control characters: nothing an id or a URL shown to a person should carry. */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** Text PostgreSQL can keep (no NUL, no lone surrogate). */
const storable = (schema: z.ZodString) =>
  schema.refine((value) => !findUnstorable(value), 'contains U+0000 or a lone UTF-16 surrogate');

/** The review tool's id of a request: 1 to 200 characters, no control characters. */
export const ApprovalIdSchema = storable(
  z
    .string()
    .min(1)
    .max(MAX_APPROVAL_ID)
    .refine((value) => !hasControl(value), 'must not contain control characters'),
).meta({
  description: 'Your review tool’s id for the request: 1 to 200 characters, unique.',
  example: 'post-42',
});

/** An absolute http(s) URL without credentials, at most 2048 characters. */
function httpUrl(what: string) {
  return z
    .string()
    .min(1)
    .max(MAX_URL)
    .superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be an absolute http or https URL (${what})` });
        return;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        ctx.addIssue({
          code: 'custom',
          message: `must use http or https (got ${url.protocol.slice(0, 20)})`,
        });
      } else if (url.username || url.password) {
        ctx.addIssue({ code: 'custom', message: 'must not carry credentials (user:password@)' });
      } else if (hasControl(value) || findUnstorable(value)) {
        ctx.addIssue({ code: 'custom', message: 'must not contain control characters' });
      }
    });
}

/**
 * `POST /api/v1/executions/{id}/request-approval` (and the agent-scoped alias): null members are
 * absent, as SDKs send unset ones. `expires_in_hours` is checked against approvals.max_expiry by
 * the service (the bound is a setting).
 */
export const RequestApprovalSchema = z.object({
  approval_request_id: ApprovalIdSchema,
  // Optional: both SDKs send it only when their caller gave one (`pause()` without a URL).
  approval_request_url: nullable(httpUrl('where a person reviews the request')).meta({
    description:
      'Where a person reviews the request (your review tool); http or https. Optional: the SDKs leave it out when their caller gives none, and `waiting_for.approval_request_url` is then null.',
    example: 'https://review.example.com/requests/post-42',
  }),
  expires_in_hours: nullable(
    z
      .number()
      .positive()
      .refine((value) => Number.isFinite(value), 'must be a finite number'),
  ).meta({
    description:
      'Hours until the request expires: greater than 0, at most approvals.max_expiry (720 h); approvals.default_expiry (24 h) when absent.',
    example: 24,
  }),
  callback_url: nullable(httpUrl('where the decision is POSTed to the agent')).meta({
    description:
      'Where the control plane POSTs the decision to the agent (the TypeScript SDK sends `<agent url>/webhooks/approval`); http or https, no credentials. Without it the agent polls approval-status.',
    example: 'http://127.0.0.1:8001/webhooks/approval',
  }),
});
export type RequestApproval = z.infer<typeof RequestApprovalSchema>;

/** `POST /api/v1/webhooks/approval`: the reviewer's decision. */
export const DecisionSchema = z.object({
  approval_request_id: ApprovalIdSchema,
  decision: z.enum(DECISIONS).meta({ description: '`approved`, `rejected` or `request_changes`.' }),
  feedback: nullable(storable(z.string().max(MAX_FEEDBACK))).meta({
    description: `The reviewer's words to the agent, up to ${MAX_FEEDBACK} characters; passed on as given.`,
    example: 'Ship it.',
  }),
});
export type DecisionInput = z.infer<typeof DecisionSchema>;

/** `GET /api/v1/executions/{id}/approval-status`: without the id, the execution's latest request. */
export const ApprovalStatusQuerySchema = z.object({
  approval_request_id: ApprovalIdSchema.optional().meta({
    description: 'Which request of the execution; its latest one when absent.',
    example: 'post-42',
  }),
});

/** `POST /api/v1/agents/{node_id}/executions/{id}/awaiter-status`. */
export const AwaiterStatusSchema = z.object({
  status: z.enum(['waiting', 'running']).meta({
    description: '`waiting`: the execution now awaits a paused child; `running`: it goes on.',
  }),
  reason: nullable(storable(z.string().max(MAX_REASON))).meta({
    description: `Why, in a few words (up to ${MAX_REASON} characters).`,
    example: 'awaiting approval of child exec_…',
  }),
});

/** Where a page of the approval list ends: the last request's time and id. */
export interface ListCursor {
  requestedAt: string;
  id: string;
}

/** A cursor is the base64url of `<requested_at ISO>|<approval_request_id>`: opaque to clients. */
export function encodeCursor(cursor: ListCursor): string {
  return Buffer.from(`${cursor.requestedAt}|${cursor.id}`, 'utf8').toString('base64url');
}

function decodeCursor(value: string): ListCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,600}$/.test(value)) return undefined;
  const text = Buffer.from(value, 'base64url').toString('utf8');
  const bar = text.indexOf('|');
  if (bar < 0) return undefined;
  const requestedAt = text.slice(0, bar);
  const id = text.slice(bar + 1);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(requestedAt) || !timeInRange(requestedAt)) {
    return undefined;
  }
  return ApprovalIdSchema.safeParse(id).success ? { requestedAt, id } : undefined;
}

/** `GET /api/v1/approvals`. */
export const ListQuerySchema = z.object({
  status: z
    .enum(APPROVAL_STATUSES)
    .optional()
    .meta({ description: 'Only requests in this status (`pending` for the reviewers’ queue).' }),
  node_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'Only requests of executions of this node.' }),
  limit: pageLimitQuery({ max: LIST_MAX_LIMIT, fallback: LIST_DEFAULT_LIMIT, items: 'requests' }),
  cursor: pageCursorQuery(decodeCursor),
});

/** A path's node id (alias routes): one that could never exist names no node. */
export const NodeIdSchema = z.string().min(1).max(200);

/** 404 for an execution that does not exist (or whose id could never be one). */
export function executionNotFound(id: string): ProblemError {
  return new ProblemError('not_found', `No execution "${id.slice(0, 200)}" exists.`);
}
