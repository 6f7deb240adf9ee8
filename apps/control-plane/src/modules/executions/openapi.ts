import { z } from 'zod';
import type {
  ZodOpenApiOperationObject,
  ZodOpenApiPathsObject,
  ZodOpenApiResponseObject,
  ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { TIME_RANGE } from '../../platform/http/timestamps.ts';
import { jsonBodyProblems, type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import { LOG_PAGE, MAX_ENTRIES_PER_REQUEST, MAX_LOG_ENTRIES } from './logs.ts';
import { MAX_DAG_NODES } from './queries.ts';
import {
  AcknowledgementSchema,
  BatchStatusRecordsSchema,
  CancelAnswerSchema,
  DagSchema,
  ExecutionInputSchema,
  ExecutionListSchema,
  LogEntry,
  LogsAcceptedSchema,
  LogsPageSchema,
  NoteAnswerSchema,
  StatusRecordSchema,
  SyncResultSchema,
} from './responses.ts';
import { EXECUTE_BODY_LIMIT, NOTE_LIMIT, REPORT_LIMIT } from './routes.ts';
import {
  BatchStatusSchema,
  ExecuteBodySchema,
  ExecutionIdSchema,
  ListQuerySchema,
  LocalCallEventSchema,
  LogsQuerySchema,
  NoteSchema,
  StatusReportSchema,
  WorkflowIdSchema,
} from './schemas.ts';

/*
 * The execution API as routes.ts serves it: operations, examples and problem cases. Requests are
 * the schemas the routes parse with; the answers' schemas are in responses.ts. The SSE stream
 * (event-openapi.ts) and the webhook routes (../webhooks/openapi.ts) are described by their own
 * modules.
 */

/** The path parameter of every /api/v1/executions/{execution_id}/... route. */
const ExecutionPath = z.object({
  execution_id: ExecutionIdSchema.meta({
    description: 'The execution id. An id that could never exist (over 200 characters) answers 404.',
    example: 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x',
  }),
});

const TargetPath = z.object({
  target: z.string().meta({
    description:
      'The function to run: `<node_id>.<reasoner_id>` for a reasoner, `<node_id>.skill:<skill_id>` for a skill (`<node_id>.reasoner:<id>` also names a reasoner).',
    example: 'hello-agent.summarize',
  }),
});

const WorkflowPath = z.object({
  workflow_id: WorkflowIdSchema.meta({
    description: 'The workflow id: X-Workflow-ID of the first call, else the run id of its root execution.',
    example: 'wf_report_42',
  }),
});

/** The context headers of an execute request (context.ts): each optional, each stored and passed on. */
const contextHeader = (description: string) =>
  z
    .string()
    .optional()
    .meta({ description: `${description} 1 to 256 printable ASCII characters; an empty value is ignored.` });
const ContextHeaders = z.object({
  'X-Workflow-ID': contextHeader(
    'Groups executions into a workflow (the DAG). Default: the workflow of X-Parent-Execution-ID, else the run id.',
  ),
  'X-Run-ID': contextHeader(
    'Groups related executions. Default: the run of the parent, else a new `run_` id.',
  ),
  'X-Parent-Execution-ID': contextHeader(
    'The execution this call is made from: an edge of the workflow DAG; the child sits one level deeper.',
  ),
  'X-Session-ID': contextHeader('A session id, stored and sent to the agent.'),
  'X-Actor-ID': contextHeader('Who the call is made for, stored and sent to the agent.'),
  'X-Agent-Node-ID': contextHeader('The node making the call, when an agent calls another (stored).'),
});

// ---- request bodies ----

/** What an async submission may register (webhooks/webhook-check.ts checks it). */
const WebhookSchema = z
  .strictObject({
    url: z.string().max(2048).meta({
      description:
        'An absolute `https://` URL without credentials (`http://` only with `execution_queue.webhook_allow_http`), whose host resolves to public addresses only (unless `execution_queue.webhook_allow_private_networks`).',
    }),
    secret: z.string().min(1).max(512).optional().meta({
      description:
        'Signs every delivery with HMAC-SHA256 (`X-Service-Signature`); omit it for unsigned deliveries. Never shown again.',
    }),
    headers: z.record(z.string().max(512), z.string().max(512)).optional().meta({
      description:
        'Sent with every delivery: at most 20 headers, names and values at most 512 characters each. Content-Type, User-Agent, Host, the `X-Service-*` headers of the delivery and hop-by-hop headers may not be set.',
      maxProperties: 20,
    }),
  })
  .meta({
    id: 'ExecutionWebhook',
    description:
      'Where the outcome is POSTed when the execution ends. An invalid webhook does not fail the submission: the execution is queued anyway and the answer says `webhook_registered: false` with `webhook_error`.',
  });

const AsyncBodySchema = ExecuteBodySchema.extend({ webhook: WebhookSchema.optional() });

const LogsBodySchema = z
  .union([
    LogEntry,
    z.array(LogEntry).max(MAX_ENTRIES_PER_REQUEST),
    z.looseObject({ logs: z.array(LogEntry).max(MAX_ENTRIES_PER_REQUEST) }),
    z.looseObject({ entries: z.array(LogEntry).max(MAX_ENTRIES_PER_REQUEST) }),
  ])
  .meta({
    description: `One entry (an object), an array of entries, or \`{ "logs": [...] }\` / \`{ "entries": [...] }\`; at most ${MAX_ENTRIES_PER_REQUEST} entries.`,
  });

const ListQuery = ListQuerySchema.extend({
  status: ListQuerySchema.shape.status.meta({ description: 'Only executions in this status.' }),
  target: ListQuerySchema.shape.target.meta({
    description:
      'Only executions of this target, in its canonical spelling (`hello-agent.summarize`, `hello-agent.skill:word_count`).',
  }),
  workflow_id: ListQuerySchema.shape.workflow_id.meta({ description: 'Only executions of this workflow.' }),
  node_id: ListQuerySchema.shape.node_id.meta({ description: 'Only executions of this node.' }),
  since: ListQuerySchema.shape.since.meta({
    description: `Only executions created at or after this time (ISO 8601 with an offset, ${TIME_RANGE}).`,
  }),
  limit: ListQuerySchema.shape.limit.meta({
    description: 'Most executions in the page (1 to 500, default 50).',
  }),
  cursor: ListQuerySchema.shape.cursor.meta({
    description: '`next_cursor` of the previous page; the filters must stay the same.',
  }),
});

const LogsQuery = LogsQuerySchema.extend({
  after: LogsQuerySchema.shape.after.meta({
    description: 'Only entries with an id above this: `next_after` of the previous page.',
  }),
  limit: LogsQuerySchema.shape.limit.meta({
    description: `Most entries in the page (1 to ${LOG_PAGE}, default ${LOG_PAGE}).`,
  }),
});

// ---- examples: hello-agent.summarize, as the server answers ----

const EXEC = 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x';
const RUN = 'run_6b1n4r7t0c3d6f9k2m5q8w1x4v';
const SYNC_EXEC = 'exec_01jd7k3m9q2w8x4v6b0n5r7t3c';
const SYNC_RUN = 'run_4f8k2m9q1w7x3v5b8n0r6t2c1d';
const CHILD = 'exec_9t3c6d1f8k4m2q7w5x0v3b9n6r';
const WORKFLOW = 'wf_report_42';
const TARGET = 'hello-agent.summarize';

const succeeded = {
  execution_id: EXEC,
  run_id: RUN,
  workflow_id: RUN,
  parent_execution_id: null,
  target: TARGET,
  node_id: 'hello-agent',
  type: 'reasoner',
  status: 'succeeded',
  created_at: '2026-11-22T06:20:00.101Z',
  started_at: '2026-11-22T06:20:00.140Z',
  completed_at: '2026-11-22T06:20:00.162Z',
  duration_ms: 22,
  result: { summary: 'A long report.', sentences: 1 },
  error: null,
  error_details: null,
  progress: null,
  routed_version: '1.0.0',
  webhook_registered: true,
  webhook_error: null,
};
const running = {
  ...succeeded,
  status: 'running',
  completed_at: null,
  duration_ms: null,
  result: null,
  progress: 40,
};
const waiting = {
  ...running,
  status: 'waiting',
  waiting_for: {
    type: 'approval',
    approval_request_id: 'apr_2024_0042',
    approval_request_url: 'https://review.example.com/requests/apr_2024_0042',
    expires_at: '2026-11-23T06:20:00.000Z',
  },
};
const cancelled = {
  ...running,
  status: 'cancelled',
  completed_at: '2026-11-22T06:20:03.512Z',
  duration_ms: 3372,
  error: 'cancelled by request',
};
const accepted = {
  execution_id: EXEC,
  workflow_id: RUN,
  run_id: RUN,
  status: 'queued',
  target: TARGET,
  type: 'reasoner',
  created_at: '2026-11-22T06:20:00.101Z',
  webhook_registered: true,
  webhook_error: null,
};

// ---- problems ----

const LOGS_LIMIT = 1024 * 1024;
const BATCH_LIMIT = 256 * 1024;

interface Answer extends ProblemCase {
  /** The resolution the server sends instead of the catalogue's. */
  resolution?: string;
}

const unknownExecution: ProblemCase = {
  code: 'not_found',
  when: 'No execution has this id.',
  detail: `No execution "${EXEC}" exists.`,
};

function invalidField(field: string, message: string, what = 'body'): ProblemCase {
  return {
    code: 'invalid_request',
    when: `A member of the ${what} is invalid; \`errors\` names each one.`,
    detail: `The ${what} is invalid: ${field}: ${message}`,
    extensions: { errors: [{ field, message }] },
  };
}

/** What resolving a target can answer (targets.ts, resolver.ts, context.ts, service.ts). */
const targetProblems: Answer[] = [
  {
    code: 'invalid_request',
    when: 'The target is not `<node_id>.<reasoner_id>` or `<node_id>.skill:<skill_id>`.',
    detail: '"hello-agent" is not a target: use <node_id>.<reasoner_id> or <node_id>.skill:<skill_id>',
    extensions: {
      errors: [{ field: 'target', message: 'use <node_id>.<reasoner_id> or <node_id>.skill:<skill_id>' }],
    },
  },
  {
    code: 'invalid_request',
    when: "The input does not match the function's registered `input_schema`; `errors` names each field under `input`.",
    detail: `The input does not match the input_schema of ${TARGET}: input.text: must have required property 'text'`,
    extensions: { errors: [{ field: 'input.text', message: "must have required property 'text'" }] },
  },
  {
    code: 'invalid_request',
    when: 'A string of the input contains U+0000 or a lone UTF-16 surrogate, which cannot be stored.',
    detail: 'The input cannot be stored: input.text contains U+0000 or a lone surrogate.',
    extensions: { errors: [{ field: 'input.text', message: 'contains U+0000 or a lone UTF-16 surrogate' }] },
  },
  {
    code: 'invalid_request',
    when: 'A context header is not 1 to 256 printable ASCII characters.',
    detail: 'Invalid context header: header x-workflow-id.',
    extensions: {
      errors: [{ field: 'header x-workflow-id', message: 'use 1 to 256 printable ASCII characters' }],
    },
  },
  {
    code: 'not_found',
    when: 'No node with this id is registered.',
    detail: 'No node "hello-agent" is registered. List nodes with GET /api/v1/discovery/capabilities.',
  },
  {
    code: 'not_found',
    when: 'The node has no reasoner (or skill) with this id.',
    detail: 'Node "hello-agent" has no reasoner "summarise" (its reasoners: summarize).',
  },
  {
    code: 'conflict',
    when: "The function's stored `input_schema` cannot be used: it was registered before a rule that now refuses it, such as a `pattern` with a lookahead (schema patterns run on a linear-time engine). Calls are refused until the agent registers again.",
    detail: `The input_schema that version 1.0.0 of node "hello-agent" registered for ${TARGET} cannot be used: pattern "^(?!\\s*$).+" at /properties/text/pattern uses a lookahead assertion "(?!…", which schema patterns cannot use: they run on a linear-time engine (RE2 syntax), without lookarounds or back-references`,
    resolution:
      'The agent must register again with an input_schema this control plane accepts (registration names what to change); until then calls to this function are refused.',
  },
];

/** A 503 carries Retry-After and a resolution of its own (resolver.ts). */
const noRoutableInstance: Answer = {
  code: 'service_unavailable',
  when: 'No instance of the node can take executions now: none is ready with a traffic weight above 0 (starting, degraded, offline or stopped). Retry after Retry-After seconds.',
  detail: 'No instance of node "hello-agent" can take executions now (1.0.0: starting).',
  resolution:
    'Retry after 5 seconds; an instance takes executions once it is ready with a traffic weight above 0.',
};

const retryAfter = (description: string) => z.object({ 'Retry-After': z.int().min(0).meta({ description }) });
const executionIdHeader = z.object({
  'X-Execution-ID': z.string().meta({ description: 'The execution the failure is recorded on.' }),
});

/**
 * {@link problemResponses}, plus what some answers add: a resolution of their own (in the
 * example), and headers by status.
 */
function problems(
  instance: string,
  cases: Answer[],
  headers: Record<string, z.ZodObject> = {},
): ZodOpenApiResponsesObject {
  const responses = problemResponses(instance, cases);
  for (const [status, response] of Object.entries(responses) as Array<[string, ZodOpenApiResponseObject]>) {
    for (const media of Object.values(response.content ?? {})) {
      for (const example of Object.values(media?.examples ?? {}) as Array<{
        value: Record<string, unknown>;
      }>) {
        const answer = cases.find((c) => c.detail === example.value.detail);
        if (answer?.resolution) example.value.resolution = answer.resolution;
      }
    }
    if (headers[status]) response.headers = headers[status];
  }
  return responses;
}

function json(schema: z.ZodType, example: unknown) {
  return { content: { 'application/json': { schema, example } } };
}

function jsonExamples(schema: z.ZodType, examples: Record<string, { summary: string; value: unknown }>) {
  return { content: { 'application/json': { schema, examples } } };
}

/** An operation on one execution: its path parameter and its 404. */
function onExecution(
  path: string,
  operation: ZodOpenApiOperationObject,
  cases: Answer[] = [],
): ZodOpenApiOperationObject {
  return {
    tags: ['Executions'],
    ...operation,
    requestParams: { ...operation.requestParams, path: ExecutionPath },
    responses: {
      ...operation.responses,
      ...problems(path.replace('{execution_id}', EXEC), [...cases, unknownExecution]),
    },
  };
}

const executeBodyProblems = jsonBodyProblems(
  EXECUTE_BODY_LIMIT,
  invalidField('input', 'Invalid input: expected object'),
);

export const executionsOpenApi: ZodOpenApiPathsObject = {
  '/api/v1/execute/{target}': {
    post: {
      operationId: 'executeTarget',
      tags: ['Executions'],
      summary: 'Run a function and wait for its result',
      description: [
        "Runs the target on a ready instance of its node (chosen by traffic weight) and answers when it has finished, up to the synchronous timeout (`execution_queue.sync_timeout`, 60 s by default). The input is validated against the function's `input_schema` first.",
        '',
        "Only a `succeeded` execution answers `200`. One that fails answers a problem document with code `execution_failed`: `502` when the agent answered 5xx or reported `failed` through its status callback (or the execution was cancelled meanwhile), and the agent's own status when it answered 4xx. The document carries `execution_id`, `run_id`, `workflow_id`, `execution_status`, `error_message` (also as `error`, which SDKs print), `error_details`, `duration_ms` and `finished_at`, and the execution is kept. An agent that cannot be reached or drops the connection is `502 upstream_unavailable`, and one that takes too long `504`. A `webhook` in the body is refused here (it belongs to the async lane).",
      ].join('\n'),
      requestParams: { path: TargetPath, header: ContextHeaders },
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: ExecuteBodySchema,
            example: { input: { text: 'Switchyard routes calls to agents. It records every execution.' } },
          },
        },
      },
      responses: {
        '200': {
          description: 'The execution has succeeded: its result.',
          headers: z.object({
            'X-Routed-Version': z.string().meta({ description: 'The version of the node that ran it.' }),
            'X-Execution-ID': z.string().meta({ description: 'The execution id.' }),
          }),
          ...jsonExamples(SyncResultSchema, {
            succeeded: {
              summary: 'The agent answered a result.',
              value: {
                execution_id: SYNC_EXEC,
                run_id: SYNC_RUN,
                workflow_id: SYNC_RUN,
                status: 'succeeded',
                result: { summary: 'Switchyard routes calls to agents.', sentences: 2 },
                duration_ms: 14,
                finished_at: '2026-11-22T05:34:02.518Z',
              },
            },
          }),
        },
        ...problems(
          `/api/v1/execute/${TARGET}`,
          [
            ...executeBodyProblems,
            ...targetProblems,
            {
              code: 'upstream_unavailable',
              when: 'The agent could not be reached, or closed the connection without answering. The execution is recorded as `failed`; `execution_id` (and X-Execution-ID) names it.',
              detail: `Execution ${SYNC_EXEC} failed: cannot reach the agent at http://127.0.0.1:9001/reasoners/summarize: ECONNREFUSED.`,
              extensions: { execution_id: SYNC_EXEC },
            },
            {
              code: 'execution_failed',
              when: "The agent answered 5xx or reported `failed` through its status callback, or the execution was cancelled meanwhile; an agent's own 4xx answer passes through with its status and this code. The execution is recorded as `failed` (or `cancelled`) and kept.",
              detail: `Execution ${SYNC_EXEC} failed: model quota exhausted`,
              extensions: {
                execution_id: SYNC_EXEC,
                run_id: SYNC_RUN,
                workflow_id: SYNC_RUN,
                result: null,
                duration_ms: 41,
                finished_at: '2026-11-22T05:35:10.001Z',
                execution_status: 'failed',
                error_message: 'model quota exhausted',
                error: 'model quota exhausted',
                error_details: { retry_in: 30 },
              },
            },
            noRoutableInstance,
            {
              code: 'upstream_timeout',
              when: 'No result within the synchronous timeout. The execution is recorded as `timeout` and the agent is asked to cancel it; `execution_id` (and X-Execution-ID) names it.',
              detail: `Execution ${SYNC_EXEC} did not finish within 60000 ms; it is recorded as timeout and the agent was asked to cancel it.`,
              extensions: { execution_id: SYNC_EXEC },
            },
          ],
          {
            '502': executionIdHeader,
            '503': retryAfter('Seconds to wait before retrying (5).'),
            '504': executionIdHeader,
          },
        ),
      },
    },
  },
  '/api/v1/execute/async/{target}': {
    post: {
      operationId: 'executeTargetAsync',
      tags: ['Executions'],
      summary: 'Queue a function call and answer at once',
      description:
        "Validates the input against the function's `input_schema`, chooses the version (kept while that instance stays routable), queues the execution and answers `202`. There is no time limit on the execution: poll its status, watch the event stream, or register a `webhook` for the outcome. An invalid webhook does not fail the call: the answer says `webhook_registered: false` with `webhook_error`.",
      requestParams: { path: TargetPath, header: ContextHeaders },
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: AsyncBodySchema,
            example: {
              input: { text: 'A long report.' },
              webhook: {
                url: 'https://hooks.example.com/switchyard',
                secret: 's3cret',
                headers: { 'X-Team': 'docs' },
              },
            },
          },
        },
      },
      responses: {
        '202': {
          description: 'The execution is queued.',
          headers: z.object({
            Location: z
              .string()
              .meta({ description: 'The status record: `/api/v1/executions/{execution_id}`.' }),
            'X-Routed-Version': z.string().meta({ description: 'The version of the node chosen to run it.' }),
          }),
          ...jsonExamples(AcknowledgementSchema, {
            registered: { summary: 'Queued, with its webhook.', value: accepted },
            webhook_refused: {
              summary: 'Queued; the webhook was refused and will not be called.',
              value: {
                ...accepted,
                webhook_registered: false,
                webhook_error:
                  'webhook.url must use https:// (plain http:// is refused unless execution_queue.webhook_allow_http is on)',
              },
            },
          }),
        },
        ...problems(
          `/api/v1/execute/async/${TARGET}`,
          [
            ...executeBodyProblems,
            ...targetProblems,
            {
              code: 'rate_limited',
              when: 'The queue is full (`execution_queue.queue_size` queued executions, 10,000 by default). Retry after Retry-After seconds, with backoff.',
              detail: 'The execution queue is full (10000 queued executions, limit 10000).',
            },
            noRoutableInstance,
          ],
          {
            '429': retryAfter('Seconds to wait before retrying (1).'),
            '503': retryAfter('Seconds to wait before retrying (5).'),
          },
        ),
      },
    },
  },
  '/api/v1/executions': {
    get: {
      operationId: 'listExecutions',
      tags: ['Executions'],
      summary: 'List executions',
      description: 'Newest first, filtered; continue with `next_cursor`.',
      requestParams: { query: ListQuery },
      responses: {
        '200': {
          description: 'One page of matching executions.',
          ...json(ExecutionListSchema, {
            executions: [succeeded],
            next_cursor: 'MjAyNi0xMS0yMlQwNjoyMDowMC4xMDFafGV4ZWNfM3Y4YjFuNnI0dDljMmQ3ZjVrMG0zcTh3MXg',
          }),
        },
        ...problems('/api/v1/executions', [
          invalidField(
            'status',
            'Invalid option: expected one of "queued"|"pending"|"running"|"waiting"|"succeeded"|"failed"|"cancelled"|"timeout"',
            'query',
          ),
          {
            code: 'invalid_request',
            when: 'The cursor is not one this server handed out.',
            detail: 'The cursor is not one this server handed out; start again without it.',
            extensions: { errors: [{ field: 'cursor', message: 'not a cursor from a previous page' }] },
          },
        ]),
      },
    },
  },
  '/api/v1/executions/batch-status': {
    post: {
      operationId: 'batchExecutionStatus',
      tags: ['Executions'],
      summary: 'Status records of several executions',
      description:
        'An object keyed by execution id. Ids that name no execution are left out: compare the keys with what you asked for.',
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: BatchStatusSchema,
            example: { execution_ids: [EXEC, 'exec_unknown'] },
          },
        },
      },
      responses: {
        '200': {
          description: 'By execution id.',
          ...json(BatchStatusRecordsSchema, { [EXEC]: running }),
        },
        ...problems(
          '/api/v1/executions/batch-status',
          jsonBodyProblems(
            BATCH_LIMIT,
            invalidField('execution_ids', 'Too small: expected array to have >=1 items'),
          ),
        ),
      },
    },
  },
  '/api/v1/executions/{execution_id}': {
    get: onExecution('/api/v1/executions/{execution_id}', {
      operationId: 'getExecution',
      summary: 'Status record of one execution',
      responses: {
        '200': {
          description: 'The status record; `waiting_for` only while `waiting`.',
          ...jsonExamples(StatusRecordSchema, {
            succeeded: { summary: 'Ended with a result.', value: succeeded },
            running: { summary: 'With the agent, which reported progress.', value: running },
            waiting: { summary: 'Paused for an approval.', value: waiting },
          }),
        },
      },
    }),
  },
  '/api/ui/v1/executions/{execution_id}/input': {
    get: onExecution('/api/ui/v1/executions/{execution_id}/input', {
      operationId: 'getExecutionInput',
      summary: 'The input an execution was called with',
      description:
        "The `input` of the call as it was accepted (after validation against the function's `input_schema`), with the target, so the call can be read or made again. The status record leaves the input out.",
      responses: {
        '200': {
          description: 'The execution id, its target and its input.',
          ...json(ExecutionInputSchema, {
            execution_id: 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x',
            target: 'hello-agent.summarize',
            input: { text: 'Switchyard routes calls to agents.' },
          }),
        },
      },
    }),
  },
  '/api/v1/executions/{execution_id}/status': {
    post: onExecution(
      '/api/v1/executions/{execution_id}/status',
      {
        operationId: 'reportExecutionStatus',
        summary: 'The agent reports progress or the outcome',
        description:
          'Called by an agent that answered the call with `202`: `running` with `progress`, then `succeeded`, `failed` or `cancelled`. A report on an execution that has already ended changes nothing and answers its record, so agents can retry callbacks safely. Unknown members are ignored.',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: StatusReportSchema,
              example: {
                status: 'succeeded',
                result: { summary: 'A long report.', sentences: 1 },
                duration_ms: 22,
              },
            },
          },
        },
        responses: {
          '200': {
            description: 'The status record after the report.',
            ...json(StatusRecordSchema, succeeded),
          },
        },
      },
      jsonBodyProblems(
        REPORT_LIMIT,
        invalidField('status', 'Invalid option: expected one of "succeeded"|"failed"|"cancelled"|"running"'),
      ),
    ),
  },
  '/api/v1/executions/{execution_id}/cancel': {
    post: onExecution(
      '/api/v1/executions/{execution_id}/cancel',
      {
        operationId: 'cancelExecution',
        summary: 'Cancel an execution',
        description:
          'The execution is `cancelled` at once (whatever the agent reports later changes nothing); then the agent running it is told with `POST {base_url}/_internal/executions/{execution_id}/cancel`. No body is read.',
        responses: {
          '200': {
            description: 'The cancelled execution, and whether the agent took the notice.',
            ...json(CancelAnswerSchema, { ...cancelled, agent_notified: true, agent_error: null }),
          },
        },
      },
      [
        {
          code: 'conflict',
          when: 'The execution has already ended.',
          detail: `Execution ${EXEC} has already ended (succeeded); there is nothing to cancel.`,
        },
      ],
    ),
  },
  '/api/v1/executions/{execution_id}/logs': {
    post: onExecution(
      '/api/v1/executions/{execution_id}/logs',
      {
        operationId: 'appendExecutionLogs',
        summary: 'The agent posts log entries',
        description: `Stores structured log lines of the execution, in order. At most ${MAX_ENTRIES_PER_REQUEST} entries per request and ${MAX_LOG_ENTRIES} per execution: more is refused with 413, never dropped silently.`,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: LogsBodySchema,
              example: [
                { level: 'info', message: 'summarising 1 document', timestamp: '2026-11-22T06:20:00.150Z' },
                { level: 'info', message: 'done', timestamp: '2026-11-22T06:20:00.160Z' },
              ],
            },
          },
        },
        responses: {
          '202': {
            description: 'The entries are stored.',
            ...json(LogsAcceptedSchema, { execution_id: EXEC, accepted: 2 }),
          },
        },
      },
      [
        ...jsonBodyProblems(LOGS_LIMIT, {
          code: 'invalid_request',
          when: 'An entry is not a JSON object, or there is no body; `errors` names each one.',
          detail: 'Send a log entry (a JSON object) or an array of them.',
          extensions: { errors: [{ field: '[1]', message: 'each log entry must be a JSON object' }] },
        }),
        {
          code: 'invalid_request',
          when: 'A string of an entry contains U+0000 or a lone UTF-16 surrogate.',
          detail: 'Log entry [0].message contains U+0000 or a lone surrogate.',
          extensions: {
            errors: [{ field: '[0].message', message: 'contains U+0000 or a lone UTF-16 surrogate' }],
          },
        },
        {
          code: 'payload_too_large',
          when: `More than ${MAX_ENTRIES_PER_REQUEST} entries in one request.`,
          detail: `Send at most ${MAX_ENTRIES_PER_REQUEST} entries per request (got 1200).`,
        },
        {
          code: 'payload_too_large',
          when: `The execution would hold more than ${MAX_LOG_ENTRIES} entries.`,
          detail: `Execution ${EXEC} already holds ${MAX_LOG_ENTRIES} log entries; at most ${MAX_LOG_ENTRIES} are kept.`,
        },
      ],
    ),
    get: onExecution(
      '/api/v1/executions/{execution_id}/logs',
      {
        operationId: 'getExecutionLogs',
        summary: "An execution's log entries",
        description: 'Oldest first; continue with `after=next_after`.',
        requestParams: { query: LogsQuery },
        responses: {
          '200': {
            description: 'One page of entries.',
            ...json(LogsPageSchema, {
              execution_id: EXEC,
              entries: [
                {
                  id: 1041,
                  received_at: '2026-11-22T06:20:00.171Z',
                  entry: {
                    level: 'info',
                    message: 'summarising 1 document',
                    timestamp: '2026-11-22T06:20:00.150Z',
                  },
                },
                {
                  id: 1042,
                  received_at: '2026-11-22T06:20:00.171Z',
                  entry: { level: 'info', message: 'done', timestamp: '2026-11-22T06:20:00.160Z' },
                },
              ],
              next_after: null,
            }),
          },
        },
      },
      [invalidField('after', 'Too small: expected number to be >=0', 'query')],
    ),
  },
  '/api/v1/workflow/executions/events': {
    post: {
      operationId: 'reportLocalCall',
      tags: ['Executions'],
      summary: 'An agent reports a function it ran in process (a local call)',
      description:
        'SDKs run a function of their own agent in process when another of its functions calls it, and report it here: once `running` (with `input_data`), once ended (`succeeded` with `result`, or `failed` with `error`), and `waiting` while it awaits a paused child. The first report creates an execution of lane `local` (`201`, with `Location`) in the workflow, under `parent_execution_id`, so the DAG shows the step; later ones move it (`200`). Reports after its end change nothing, like repeated status callbacks. The agent runs it, so the control plane never calls the agent for it; the reaper ends it like any execution an agent took when that agent goes offline or restarts. `type`, `root_workflow_id` and `parent_workflow_id` are accepted and ignored.',
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: LocalCallEventSchema,
            example: {
              execution_id: 'eca9607e-cf71-4f93-95a6-408386ba270e',
              workflow_id: RUN,
              run_id: RUN,
              root_workflow_id: RUN,
              reasoner_id: 'math_add',
              type: 'math_add',
              agent_node_id: 'hello-agent',
              status: 'running',
              parent_execution_id: EXEC,
              parent_workflow_id: RUN,
              input_data: { a: 2, b: 3 },
            },
          },
        },
      },
      responses: {
        '200': {
          description: 'A later report: the execution as it now stands.',
          ...json(StatusRecordSchema, { ...succeeded, target: 'hello-agent.math_add', result: { sum: 5 } }),
        },
        '201': {
          description: 'The first report of this local call: the execution it created.',
          headers: z.object({
            Location: z.string().meta({ description: '`/api/v1/executions/{execution_id}`' }),
          }),
          ...json(StatusRecordSchema, { ...running, target: 'hello-agent.math_add', progress: null }),
        },
        ...problems('/api/v1/workflow/executions/events', [
          ...jsonBodyProblems(
            REPORT_LIMIT,
            invalidField(
              'status',
              'Invalid option: expected one of "running"|"waiting"|"succeeded"|"failed"',
            ),
          ),
          {
            code: 'not_found',
            when: 'No node `agent_node_id` is registered.',
            detail: 'No node "hello-agent" is registered.',
            extensions: {
              errors: [{ field: 'agent_node_id', message: 'no node with this id is registered' }],
            },
          },
          {
            code: 'conflict',
            when: 'The id names an execution the control plane routed (report it with the status callback), or a local call of another function.',
            detail: `Execution ${EXEC} was routed by the control plane, not run in process; report its outcome with POST /api/v1/executions/${EXEC}/status.`,
          },
        ]),
      },
    },
  },
  '/api/ui/v1/executions/note': {
    post: {
      operationId: 'addExecutionNote',
      tags: ['Executions'],
      summary: 'An agent attaches a note to an execution',
      description:
        'The execution is named by the `X-Execution-ID` header (SDKs send the execution\'s context headers). The note is kept among the execution\'s log entries, in order, as `{ "type": "note", message, tags, timestamp, agent_node_id }` (`timestamp`, sent as seconds since the epoch, is kept as ISO time; absent, the time it arrived), and read back with `GET /api/v1/executions/{execution_id}/logs`. It counts towards the log\'s 10,000 entries.',
      requestParams: {
        header: z.object({
          'X-Execution-ID': ExecutionIdSchema.meta({ description: 'The execution the note belongs to.' }),
        }),
      },
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: NoteSchema,
            example: {
              message: 'waiting for a reviewer',
              tags: ['approval'],
              timestamp: 1795704222.202,
              agent_node_id: 'hello-agent',
            },
          },
        },
      },
      responses: {
        '201': {
          description: 'The note as kept.',
          ...json(NoteAnswerSchema, {
            execution_id: EXEC,
            note: {
              type: 'note',
              message: 'waiting for a reviewer',
              tags: ['approval'],
              timestamp: '2026-11-26T14:43:42.202Z',
              agent_node_id: 'hello-agent',
            },
          }),
        },
        ...problems('/api/ui/v1/executions/note', [
          ...jsonBodyProblems(
            NOTE_LIMIT,
            invalidField('message', 'Too small: expected string to have >=1 characters'),
          ),
          {
            code: 'invalid_request',
            when: 'No `X-Execution-ID` header, or one that is not an execution id.',
            detail: 'Name the execution the note belongs to in the X-Execution-ID header.',
            extensions: { errors: [{ field: 'header x-execution-id', message: 'required' }] },
          },
          unknownExecution,
          {
            code: 'payload_too_large',
            when: 'The execution already holds 10,000 log entries.',
            detail: `Execution ${EXEC} already holds 10000 log entries; at most 10000 are kept.`,
          },
        ]),
      },
    },
  },
  '/api/v1/workflows/{workflow_id}/dag': {
    get: {
      operationId: 'getWorkflowDag',
      tags: ['Executions'],
      summary: "A workflow's executions as a graph",
      description: `Every execution of the workflow as a node, oldest first, and an edge from each parent to its child (X-Parent-Execution-ID). At most ${MAX_DAG_NODES} nodes; a larger workflow says \`truncated: true\`.`,
      requestParams: { path: WorkflowPath },
      responses: {
        '200': {
          description: 'The graph.',
          ...json(DagSchema, {
            workflow_id: WORKFLOW,
            run_id: SYNC_RUN,
            depth: 2,
            total_nodes: 2,
            truncated: false,
            nodes: [
              {
                execution_id: SYNC_EXEC,
                parent_execution_id: null,
                node_id: 'planner',
                target: 'planner.plan_report',
                status: 'succeeded',
                duration_ms: 412,
                depth: 1,
                started_at: '2026-11-22T05:34:02.104Z',
                completed_at: '2026-11-22T05:34:02.516Z',
              },
              {
                execution_id: CHILD,
                parent_execution_id: SYNC_EXEC,
                node_id: 'hello-agent',
                target: TARGET,
                status: 'succeeded',
                duration_ms: 14,
                depth: 2,
                started_at: '2026-11-22T05:34:02.210Z',
                completed_at: '2026-11-22T05:34:02.224Z',
              },
            ],
            edges: [{ from: SYNC_EXEC, to: CHILD }],
          }),
        },
        ...problems(`/api/v1/workflows/${WORKFLOW}/dag`, [
          {
            code: 'invalid_request',
            when: 'The workflow id is over 256 characters.',
            detail: 'The workflow id is invalid: (body): Too big: expected string to have <=256 characters',
            extensions: {
              errors: [{ field: '(body)', message: 'Too big: expected string to have <=256 characters' }],
            },
          },
          {
            code: 'not_found',
            when: 'No execution belongs to the workflow.',
            detail: `No execution belongs to workflow "${WORKFLOW}".`,
          },
        ]),
      },
    },
  },
};
