import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { jsonBodyProblems, type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import {
  ApprovalSchema,
  AwaiterAnswerSchema,
  DecidedSchema,
  ListSchema,
  WaitingSchema,
} from './responses.ts';
import { APPROVAL_BODY_LIMIT } from './routes.ts';
import {
  ApprovalStatusQuerySchema,
  AwaiterStatusSchema,
  DecisionSchema,
  encodeCursor,
  LIST_MAX_LIMIT,
  ListQuerySchema,
  RequestApprovalSchema,
} from './schemas.ts';

/*
 * The approvals API as routes.ts serves it: operations, examples and problem cases. The answers'
 * schemas are in responses.ts.
 */

const EXEC = 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x';
const NODE = 'publisher';

const ExecutionPath = z.object({
  execution_id: z.string().meta({ description: 'The execution id.', example: EXEC }),
});
const AgentPath = z.object({
  node_id: z.string().meta({ description: "The execution's node id.", example: NODE }),
  execution_id: z.string().meta({ description: 'The execution id.', example: EXEC }),
});

// ---- examples ----

const waitingExample = {
  execution_id: EXEC,
  status: 'waiting',
  approval_request_id: 'post-42',
  approval_request_url: 'https://review.example.com/requests/post-42',
  expires_at: '2026-11-23T06:20:00.000Z',
};
const pending = {
  approval_request_id: 'post-42',
  execution_id: EXEC,
  node_id: NODE,
  target: `${NODE}.publish_post`,
  status: 'pending',
  decision: null,
  feedback: null,
  approval_request_url: 'https://review.example.com/requests/post-42',
  requested_at: '2026-11-22T06:20:00.000Z',
  expires_at: '2026-11-23T06:20:00.000Z',
  decided_at: null,
  callback: {
    url: 'http://10.0.4.17:8001/webhooks/approval',
    status: null,
    attempts: 0,
    last_status_code: null,
    last_error: null,
    next_attempt_at: null,
    delivered_at: null,
  },
};
const approved = {
  ...pending,
  status: 'approved',
  decision: 'approved',
  feedback: 'Ship it.',
  decided_at: '2026-11-22T06:24:31.220Z',
  callback: {
    ...pending.callback,
    status: 'delivered',
    attempts: 1,
    last_status_code: 200,
    delivered_at: '2026-11-22T06:24:31.262Z',
  },
};

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}
function body(schema: z.ZodType, example: unknown) {
  return { required: true, content: { 'application/json': { schema, example } } };
}
function invalidField(field: string, message: string): ProblemCase {
  return {
    code: 'invalid_request',
    when: 'A member is missing or not valid (each failing field is listed).',
    detail: `The body is invalid: ${field}: ${message}`,
    extensions: { errors: [{ field, message }] },
  };
}

const unknownExecution: ProblemCase = {
  code: 'not_found',
  when: 'No execution has this id (on the agent path: none of this node).',
  detail: `No execution "${EXEC}" exists.`,
};

const requestBodyProblems = jsonBodyProblems(
  APPROVAL_BODY_LIMIT,
  invalidField('approval_request_url', 'must use http or https (got ftp:)'),
);

function requestApprovalOperation(
  path: string,
  operationId: string,
  alias: boolean,
): ZodOpenApiOperationObject {
  return {
    operationId,
    tags: ['Approvals'],
    summary: alias ? 'Pause an execution for approval (agent path)' : 'Pause an execution for approval',
    description: alias
      ? 'The TypeScript SDK’s spelling of request-approval: the same operation, answering 404 unless the execution is one of `node_id`.'
      : 'Called by the agent (its SDK’s pause call) while the execution runs: the execution becomes `waiting` with `waiting_for`, and `execution.waiting` is streamed. The same request again while it is pending answers the same (SDKs retry); any other request while the execution waits, an id another execution used, or an execution that is not `running` is a conflict.',
    requestParams: { path: alias ? AgentPath : ExecutionPath },
    requestBody: body(RequestApprovalSchema, {
      approval_request_id: 'post-42',
      approval_request_url: 'https://review.example.com/requests/post-42',
      expires_in_hours: 24,
      callback_url: 'http://10.0.4.17:8001/webhooks/approval',
    }),
    responses: {
      '200': { description: 'The execution waits.', ...json(WaitingSchema, waitingExample) },
      ...problemResponses(path.replace('{node_id}', NODE).replace('{execution_id}', EXEC), [
        ...requestBodyProblems,
        unknownExecution,
        {
          code: 'conflict',
          when: 'The execution is not running (it already waits, or has ended), or the approval_request_id is used by another request.',
          detail: `Execution ${EXEC} already waits for approval request "post-41"; only one request can be open at a time.`,
        },
      ]),
    },
  };
}

function approvalStatusOperation(
  path: string,
  operationId: string,
  alias: boolean,
): ZodOpenApiOperationObject {
  return {
    operationId,
    tags: ['Approvals'],
    summary: alias ? "An execution's approval request (agent path)" : "An execution's approval request",
    description: alias
      ? 'Where the SDKs poll (Python `get_approval_status`, TypeScript `getApprovalStatus`): the same operation, answering 404 unless the execution is one of `node_id`.'
      : 'The request named by `approval_request_id`, or the execution’s latest one. Agents without a callback_url poll this until `status` is no longer `pending`.',
    requestParams: { path: alias ? AgentPath : ExecutionPath, query: ApprovalStatusQuerySchema },
    responses: {
      '200': { description: 'The approval request.', ...json(ApprovalSchema, approved) },
      ...problemResponses(path.replace('{node_id}', NODE).replace('{execution_id}', EXEC), [
        {
          code: 'invalid_request',
          when: 'approval_request_id is empty, too long or repeated.',
          detail:
            'The query is invalid: approval_request_id: Too small: expected string to have >=1 characters',
          extensions: {
            errors: [
              {
                field: 'approval_request_id',
                message: 'Too small: expected string to have >=1 characters',
              },
            ],
          },
        },
        unknownExecution,
        {
          code: 'not_found',
          when: 'The execution has no such approval request (or none at all).',
          detail: `Execution ${EXEC} has no approval request "post-42".`,
        },
      ]),
    },
  };
}

export const approvalsOpenApi: ZodOpenApiPathsObject = {
  '/api/v1/executions/{execution_id}/request-approval': {
    post: requestApprovalOperation(
      '/api/v1/executions/{execution_id}/request-approval',
      'requestApproval',
      false,
    ),
  },
  '/api/v1/agents/{node_id}/executions/{execution_id}/request-approval': {
    post: requestApprovalOperation(
      '/api/v1/agents/{node_id}/executions/{execution_id}/request-approval',
      'requestApprovalForAgent',
      true,
    ),
  },
  '/api/v1/executions/{execution_id}/approval-status': {
    get: approvalStatusOperation(
      '/api/v1/executions/{execution_id}/approval-status',
      'getApprovalStatus',
      false,
    ),
  },
  '/api/v1/agents/{node_id}/executions/{execution_id}/approval-status': {
    get: approvalStatusOperation(
      '/api/v1/agents/{node_id}/executions/{execution_id}/approval-status',
      'getApprovalStatusForAgent',
      true,
    ),
  },
  '/api/v1/webhooks/approval': {
    post: {
      operationId: 'submitApprovalDecision',
      tags: ['Approvals'],
      summary: "Submit a reviewer's decision",
      description:
        'Records the decision and resumes the execution (`running` again, whatever the decision: the agent decides what it means), streams `execution.approval_resolved`, and delivers `{ execution_id, approval_request_id, decision, feedback }` to the agent’s callback_url (retried until it answers 2xx or the execution ends). The same decision again answers the same. When approvals.webhook_secret is set, the decision must be signed (`X-Service-Timestamp`: unix seconds; `X-Service-Signature`: `sha256=` hex HMAC-SHA256 of `<timestamp>.<raw body>`) and needs no API key; otherwise it needs the API key like every route.',
      requestParams: {
        header: z.object({
          'X-Service-Timestamp': z.string().optional().meta({
            description: 'With a webhook secret: unix seconds, within approvals.webhook_tolerance (5 min).',
          }),
          'X-Service-Signature': z.string().optional().meta({
            description:
              'With a webhook secret: `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`.',
          }),
        }),
      },
      requestBody: body(DecisionSchema, {
        approval_request_id: 'post-42',
        decision: 'approved',
        feedback: 'Ship it.',
      }),
      responses: {
        '200': {
          description: 'The decision is recorded (or was already, identically).',
          ...json(DecidedSchema, {
            ...approved,
            callback: { ...pending.callback, status: 'pending', next_attempt_at: approved.decided_at },
            execution_status: 'running',
          }),
        },
        ...problemResponses('/api/v1/webhooks/approval', [
          ...jsonBodyProblems(
            APPROVAL_BODY_LIMIT,
            invalidField(
              'decision',
              'Invalid option: expected one of "approved"|"rejected"|"request_changes"',
            ),
          ),
          {
            code: 'unauthorized',
            when: 'With a webhook secret: the signature or timestamp is missing, wrong or stale. Without one: an API key is set and the request carries none, or a wrong one.',
            detail: 'X-Service-Signature does not match the body and timestamp.',
          },
          {
            code: 'not_found',
            when: 'No approval request has this id.',
            detail: 'No approval request "post-42" exists.',
          },
          {
            code: 'conflict',
            when: 'The request was already decided otherwise, expired, or its execution ended first.',
            detail: 'Approval request "post-42" was already decided: rejected.',
          },
        ]),
      },
    },
  },
  '/api/v1/approvals': {
    get: {
      operationId: 'listApprovals',
      tags: ['Approvals'],
      summary: 'Approval requests (the reviewers’ queue)',
      description:
        'Newest request first, filtered by status (`status=pending` is the queue of open requests) and node; pages follow with `cursor`.',
      requestParams: { query: ListQuerySchema },
      responses: {
        '200': {
          description: 'One page.',
          ...json(ListSchema, {
            approvals: [pending],
            next_cursor: encodeCursor({ requestedAt: pending.requested_at, id: pending.approval_request_id }),
          }),
        },
        ...problemResponses('/api/v1/approvals', [
          {
            code: 'invalid_request',
            when: `status is not an approval status, limit is not a whole number from 1 to ${LIST_MAX_LIMIT}, or cursor is not one this endpoint gave out.`,
            detail: `The query is invalid: limit: must be a whole number from 1 to ${LIST_MAX_LIMIT} (got "0")`,
            extensions: {
              errors: [
                { field: 'limit', message: `must be a whole number from 1 to ${LIST_MAX_LIMIT} (got "0")` },
              ],
            },
          },
        ]),
      },
    },
  },
  '/api/v1/agents/{node_id}/executions/{execution_id}/awaiter-status': {
    post: {
      operationId: 'reportAwaiterStatus',
      tags: ['Approvals'],
      summary: 'An execution awaits a paused child (SDK report)',
      description:
        'SDKs send it while the execution (of `node_id`) awaits a child that is paused for approval, and again when it goes on. `waiting` moves a running execution to `waiting` with `waiting_for: { "type": "child", reason, since }` (event `execution.waiting`); `running` moves it back (event `execution.resumed`); an execution paused for its own approval, or already ended, keeps its state. Each report is also kept as an entry of the execution’s log (`GET /api/v1/executions/{execution_id}/logs`), `{ "type": "awaiter_status", status, reason, node_id, timestamp }`.',
      requestParams: { path: AgentPath },
      requestBody: body(AwaiterStatusSchema, {
        status: 'waiting',
        reason: 'awaiting approval of a child execution',
      }),
      responses: {
        '200': {
          description: 'Received.',
          ...json(AwaiterAnswerSchema, {
            execution_id: EXEC,
            status: 'waiting',
            reason: 'awaiting approval of a child execution',
            execution_status: 'waiting',
            recorded: true,
            received_at: '2026-11-22T06:20:01.000Z',
          }),
        },
        ...problemResponses(`/api/v1/agents/${NODE}/executions/${EXEC}/awaiter-status`, [
          ...jsonBodyProblems(
            APPROVAL_BODY_LIMIT,
            invalidField('status', 'Invalid option: expected one of "waiting"|"running"'),
          ),
          unknownExecution,
        ]),
      },
    },
  },
};
