import Router from '@koa/router';
import { ProblemError } from '@switchyard/shared';
import type { Context } from 'koa';
import { readCallerContext } from '../../platform/http/context-headers.ts';
import { parseWith, readJsonBody } from '../../platform/http/request-body.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { MAX_RESULT_BYTES } from './agent-client.ts';
import type { LocalCalls } from './local-calls.ts';
import type { ExecutionLogs } from './logs.ts';
import { entriesOf } from './logs.ts';
import type { ExecutionQueries } from './queries.ts';
import { acknowledgement, statusRecord, syncResult } from './records.ts';
import type {
  CancelAnswerSchema,
  ExecutionInputSchema,
  LogsAcceptedSchema,
  NoteAnswerSchema,
} from './responses.ts';
import {
  BatchStatusSchema,
  ExecuteBodySchema,
  ExecutionIdSchema,
  ListQuerySchema,
  LocalCallEventSchema,
  LogsQuerySchema,
  NoteSchema,
  StatusReportSchema,
  WorkflowPathSchema,
} from './schemas.ts';
import { type ExecutionService, notFound } from './service.ts';

/** Body limits: inputs may carry documents; a result may be as large as an agent may answer. */
export const EXECUTE_BODY_LIMIT = 4 * 1024 * 1024;
export const REPORT_LIMIT = MAX_RESULT_BYTES + 64 * 1024;
const LOGS_LIMIT = 1024 * 1024;
const BATCH_LIMIT = 256 * 1024;
export const NOTE_LIMIT = 64 * 1024;

/**
 * A version as an X-Routed-Version value. Versions are free text (registration takes any), but a
 * header carries visible ASCII only: anything else is percent-encoded rather than failing the
 * answer after the work has run.
 */
function versionHeader(version: string): string {
  return /^[\x20-\x7e]*$/.test(version) ? version : encodeURIComponent(version);
}

/** The execution id of the path; one that could never exist answers 404 without a query. */
function executionIdOf(ctx: Context): string {
  const id = String(ctx.params.id);
  if (!ExecutionIdSchema.safeParse(id).success) throw notFound(id);
  return id;
}

export interface ExecutionsRouterDeps {
  service: ExecutionService;
  queries: ExecutionQueries;
  logs: ExecutionLogs;
  localCalls: LocalCalls;
}

/** The execution API (content/api/execution.md): sync and async execute, status, list, cancel and logs. */
export function executionsRouter(deps: ExecutionsRouterDeps): Router {
  const { service, queries, logs, localCalls } = deps;
  const router = new Router();

  router.post('/api/v1/execute/async/:target', async (ctx) => {
    const body = parseWith(ExecuteBodySchema, await readJsonBody(ctx, EXECUTE_BODY_LIMIT));
    const context = readCallerContext((name) => ctx.get(name));
    const { row, version } = await service.submitAsync(
      String(ctx.params.target),
      body.input,
      body.webhook,
      context,
    );
    ctx.status = 202;
    ctx.set('Location', `/api/v1/executions/${row.execution_id}`);
    ctx.set('X-Routed-Version', versionHeader(version));
    ctx.body = acknowledgement(row);
  });

  router.post('/api/v1/execute/:target', async (ctx) => {
    const body = parseWith(ExecuteBodySchema, await readJsonBody(ctx, EXECUTE_BODY_LIMIT));
    if (body.webhook !== undefined) {
      // Dropping it silently would leave the caller waiting for a delivery that never comes.
      throw new ProblemError(
        'invalid_request',
        'A webhook is only delivered for async executions: use POST /api/v1/execute/async/{target}.',
        {
          extensions: { errors: [{ field: 'webhook', message: 'only accepted by the async lane' }] },
        },
      );
    }
    const context = readCallerContext((name) => ctx.get(name));
    const { row, version } = await service.executeSync(String(ctx.params.target), body.input, context);
    ctx.set('X-Routed-Version', versionHeader(version));
    ctx.set('X-Execution-ID', row.execution_id);
    ctx.body = syncResult(row);
  });

  router.get('/api/v1/executions', async (ctx) => {
    ctx.body = await queries.list(parseWith(ListQuerySchema, ctx.query, 'query'));
  });

  router.post('/api/v1/executions/batch-status', async (ctx) => {
    const body = parseWith(BatchStatusSchema, await readJsonBody(ctx, BATCH_LIMIT));
    ctx.body = await queries.batch(body.execution_ids);
  });

  router.get('/api/v1/executions/:id', async (ctx) => {
    ctx.body = statusRecord(await service.get(executionIdOf(ctx)));
  });

  // The input the execution was called with, for the dashboard's execution page and its "run
  // again": the status record leaves it out (the spec's shape), and inputs may be large.
  router.get('/api/ui/v1/executions/:id/input', async (ctx) => {
    const row = await service.get(executionIdOf(ctx));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      execution_id: row.execution_id,
      target: row.target,
      input: row.input,
    } satisfies ResponseBody<typeof ExecutionInputSchema>;
  });

  router.post('/api/v1/executions/:id/status', async (ctx) => {
    const id = executionIdOf(ctx);
    const report = parseWith(StatusReportSchema, await readJsonBody(ctx, REPORT_LIMIT));
    ctx.body = statusRecord(await service.report(id, report));
  });

  router.post('/api/v1/executions/:id/cancel', async (ctx) => {
    const { row, agentNotified, agentError } = await service.cancel(executionIdOf(ctx));
    ctx.body = {
      ...statusRecord(row),
      agent_notified: agentNotified,
      agent_error: agentError,
    } satisfies ResponseBody<typeof CancelAnswerSchema>;
  });

  router.post('/api/v1/executions/:id/logs', async (ctx) => {
    const id = executionIdOf(ctx);
    const entries = entriesOf(await readJsonBody(ctx, LOGS_LIMIT));
    const accepted = await logs.append(id, entries);
    ctx.status = 202;
    ctx.body = { execution_id: id, accepted } satisfies ResponseBody<typeof LogsAcceptedSchema>;
  });

  router.get('/api/v1/executions/:id/logs', async (ctx) => {
    const id = executionIdOf(ctx);
    const query = parseWith(LogsQuerySchema, ctx.query, 'query');
    ctx.body = await logs.read(id, query.after, query.limit);
  });

  router.post('/api/v1/workflow/executions/events', async (ctx) => {
    const event = parseWith(LocalCallEventSchema, await readJsonBody(ctx, REPORT_LIMIT));
    const { row, created } = await localCalls.report(event);
    ctx.status = created ? 201 : 200;
    if (created) ctx.set('Location', `/api/v1/executions/${row.execution_id}`);
    ctx.body = statusRecord(row);
  });

  router.post('/api/ui/v1/executions/note', async (ctx) => {
    const note = parseWith(NoteSchema, await readJsonBody(ctx, NOTE_LIMIT));
    const id = ctx.get('x-execution-id').trim();
    if (!ExecutionIdSchema.safeParse(id).success) {
      throw new ProblemError(
        'invalid_request',
        'Name the execution the note belongs to in the X-Execution-ID header.',
        {
          extensions: {
            errors: [{ field: 'header x-execution-id', message: id ? 'not an execution id' : 'required' }],
          },
        },
      );
    }
    ctx.status = 201;
    ctx.body = {
      execution_id: id,
      note: await logs.note(id, note),
    } satisfies ResponseBody<typeof NoteAnswerSchema>;
  });

  router.get('/api/v1/workflows/:workflow_id/dag', async (ctx) => {
    const { workflow_id } = parseWith(
      WorkflowPathSchema,
      { workflow_id: String(ctx.params.workflow_id) },
      'path',
    );
    ctx.body = await queries.dag(workflow_id);
  });

  return router;
}
