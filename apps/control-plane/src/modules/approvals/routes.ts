import Router from '@koa/router';
import { ProblemError } from '@switchyard/shared';
import type { Context } from 'koa';
import type { Clock } from '../../platform/clock.ts';
import { parseJsonText, parseWith, readBodyText, readJsonBody } from '../../platform/http/request-body.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { AwaiterAnswerSchema, DecidedSchema, ListSchema } from './responses.ts';
import {
  ApprovalStatusQuerySchema,
  AwaiterStatusSchema,
  DecisionSchema,
  encodeCursor,
  executionNotFound,
  ListQuerySchema,
  RequestApprovalSchema,
} from './schemas.ts';
import type { ApprovalService } from './service.ts';
import type { ApprovalSettings } from './settings.ts';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyDecision } from './signing.ts';
import { approvalView, waitingView } from './views.ts';

/** Bodies here are a few URLs and a feedback text: 64 KiB is generous. */
export const APPROVAL_BODY_LIMIT = 64 * 1024;

/** Execution and node ids are visible ASCII; anything else names none (404 without a query). */
const PATH_ID = /^[\x21-\x7e]{1,200}$/;

function executionIdOf(ctx: Context): string {
  const id = String(ctx.params.id);
  if (!PATH_ID.test(id)) throw executionNotFound(id);
  return id;
}

function nodeIdOf(ctx: Context): string {
  const id = String(ctx.params.node_id);
  if (!PATH_ID.test(id)) throw new ProblemError('not_found', `No node "${id.slice(0, 200)}" exists.`);
  return id;
}

export interface ApprovalsRouterDeps {
  service: ApprovalService;
  clock: Clock;
  /** Read on every decision, so the check always agrees with the API key's skip path (app.ts). */
  settings: () => Pick<ApprovalSettings, 'webhookSecret' | 'webhookToleranceMs'>;
}

/** Human approvals, as the agent SDKs request and decide them (content/api/approvals.md). */
export function approvalsRouter(deps: ApprovalsRouterDeps): Router {
  const { service } = deps;
  const router = new Router();

  async function requestApproval(ctx: Context, nodeId?: string) {
    const id = executionIdOf(ctx);
    const body = parseWith(RequestApprovalSchema, await readJsonBody(ctx, APPROVAL_BODY_LIMIT));
    ctx.body = waitingView(await service.requestApproval(id, body, nodeId));
  }

  router.post('/api/v1/executions/:id/request-approval', (ctx) => requestApproval(ctx));
  // The TypeScript SDK's spelling; the node must be the execution's.
  router.post('/api/v1/agents/:node_id/executions/:id/request-approval', (ctx) =>
    requestApproval(ctx, nodeIdOf(ctx)),
  );

  async function approvalStatus(ctx: Context, nodeId?: string) {
    const id = executionIdOf(ctx);
    const query = parseWith(ApprovalStatusQuerySchema, ctx.query, 'query');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = approvalView(await service.status(id, query.approval_request_id, nodeId));
  }

  router.get('/api/v1/executions/:id/approval-status', (ctx) => approvalStatus(ctx));
  // Where both SDKs poll (their get_approval_status / waitForApproval); the node must be the execution's.
  router.get('/api/v1/agents/:node_id/executions/:id/approval-status', (ctx) =>
    approvalStatus(ctx, nodeIdOf(ctx)),
  );

  router.post('/api/v1/webhooks/approval', async (ctx) => {
    const text = await readBodyText(ctx, APPROVAL_BODY_LIMIT);
    const settings = deps.settings();
    if (settings.webhookSecret) {
      verifyDecision(
        {
          timestamp: ctx.get(TIMESTAMP_HEADER) || undefined,
          signature: ctx.get(SIGNATURE_HEADER) || undefined,
        },
        text,
        { secret: settings.webhookSecret, toleranceMs: settings.webhookToleranceMs, nowMs: deps.clock.now() },
      );
    }
    const body = parseWith(DecisionSchema, parseJsonText(ctx, text));
    const { request, executionStatus } = await service.decide(body);
    ctx.body = {
      ...approvalView(request),
      execution_status: executionStatus,
    } satisfies ResponseBody<typeof DecidedSchema>;
  });

  router.get('/api/v1/approvals', async (ctx) => {
    const query = parseWith(ListQuerySchema, ctx.query, 'query');
    const page = await service.list(query);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      approvals: page.items.map(approvalView),
      next_cursor: page.next ? encodeCursor(page.next) : null,
    } satisfies ResponseBody<typeof ListSchema>;
  });

  router.post('/api/v1/agents/:node_id/executions/:id/awaiter-status', async (ctx) => {
    const nodeId = nodeIdOf(ctx);
    const id = executionIdOf(ctx);
    const body = parseWith(AwaiterStatusSchema, await readJsonBody(ctx, APPROVAL_BODY_LIMIT));
    const { recorded, at, execution } = await service.awaiterStatus(nodeId, id, body);
    ctx.body = {
      execution_id: id,
      status: body.status,
      reason: body.reason ?? null,
      execution_status: execution.status,
      recorded,
      received_at: at.toISOString(),
    } satisfies ResponseBody<typeof AwaiterAnswerSchema>;
  });

  return router;
}
