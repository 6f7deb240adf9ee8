import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/logger.ts';
import { isUniqueViolation } from '../../platform/unique-violation.ts';
import {
  type ExecutionLogs,
  type ExecutionRow,
  type ExecutionWaiting,
  isTerminal,
} from '../executions/index.ts';
import {
  type ApprovalRequest,
  cancelPendingOf,
  dueForExpiry,
  findRequest,
  insertRequest,
  latestOfExecution,
  listRequests,
  resolveRequest,
} from './repository.ts';
import {
  type ApprovalStatus,
  type DecisionInput,
  executionNotFound,
  type ListCursor,
  type RequestApproval,
} from './schemas.ts';
import type { ApprovalSettings } from './settings.ts';

export interface ApprovalServiceDeps {
  db: Knex;
  clock: Clock;
  log: Logger;
  /** The executions feature's `waiting` transitions. */
  waiting: ExecutionWaiting;
  /** Execution logs, where awaiter-status reports are kept. */
  logs: ExecutionLogs;
  settings: Pick<ApprovalSettings, 'defaultExpiryMs' | 'maxExpiryMs'>;
  /** Wakes the callback deliverers (here and on other replicas) after a decision was recorded. */
  wakeCallbacks: () => void;
}

/** Expired requests handled per sweep pass; the next pass takes the rest. */
const SWEEP_BATCH = 100;

const HOUR_MS = 3_600_000;

function conflict(detail: string): ProblemError {
  return new ProblemError('conflict', detail);
}

function fieldError(field: string, message: string, detail: string): ProblemError {
  return new ProblemError('invalid_request', detail, { extensions: { errors: [{ field, message }] } });
}

/**
 * Human approvals. Every change to a request and its execution happens in one transaction that
 * locks the execution first and the request second (the finisher's end-while-waiting hook does
 * the same), so a decision, an expiry and a cancel racing each other apply in some order and
 * never deadlock; the event of each change is appended in that transaction too.
 */
export function createApprovalService(deps: ApprovalServiceDeps) {
  const { db, clock, waiting } = deps;

  /** The execution of a path, checked against the agent-scoped alias's node id. */
  function checkNode(row: ExecutionRow | undefined, id: string, nodeId: string | undefined): ExecutionRow {
    if (!row || (nodeId !== undefined && row.node_id !== nodeId)) throw executionNotFound(id);
    return row;
  }

  function expiryMs(hours: number | undefined): number {
    if (hours === undefined) return deps.settings.defaultExpiryMs;
    const ms = Math.max(1, Math.round(hours * HOUR_MS));
    if (ms > deps.settings.maxExpiryMs) {
      const max = deps.settings.maxExpiryMs / HOUR_MS;
      throw fieldError(
        'expires_in_hours',
        `must be at most ${max} (approvals.max_expiry)`,
        `The body is invalid: expires_in_hours: must be at most ${max} (approvals.max_expiry), got ${hours}`,
      );
    }
    return ms;
  }

  /** A repeat of the request that made `existing` (SDKs retry): same id, URLs and expiry. */
  function sameRequest(existing: ApprovalRequest, input: RequestApproval, ms: number): boolean {
    return (
      existing.approvalRequestUrl === (input.approval_request_url ?? null) &&
      existing.callbackUrl === (input.callback_url ?? null) &&
      Date.parse(existing.expiresAt) - Date.parse(existing.requestedAt) === ms
    );
  }

  /** Expires one pending request past its expiry; false when there was nothing (left) to do. */
  async function expireOne(id: string): Promise<boolean> {
    const now = new Date(clock.now());
    let ended: ExecutionRow | undefined;
    let deliver = false;
    const done = await db.transaction(async (trx: Knex.Transaction) => {
      const peek = await findRequest(trx, id);
      if (peek?.status !== 'pending') return false;
      // Another replica expiring it (or a decision in flight) holds these: theirs to finish.
      if (!(await waiting.lock(trx, peek.executionId, { skipLocked: true }))) return false;
      const request = await findRequest(trx, id, 'skip');
      if (request?.status !== 'pending' || Date.parse(request.expiresAt) > now.getTime()) return false;
      deliver = request.callbackUrl !== null;
      await resolveRequest(trx, id, { status: 'expired', feedback: null, deliver, now });
      ended = await waiting.expire(trx, request.executionId, id, now);
      return true;
    });
    if (ended) waiting.finished(ended);
    if (deliver) deps.wakeCallbacks();
    return done;
  }

  return {
    /**
     * `POST /api/v1/executions/{id}/request-approval`: the running execution waits for a person.
     * A repeat of the pending request answers as the first did; anything else while it waits is
     * a conflict.
     */
    async requestApproval(executionId: string, input: RequestApproval, nodeId?: string) {
      const ms = expiryMs(input.expires_in_hours);
      const now = new Date(clock.now());
      const id = input.approval_request_id;
      let paused = false;
      let request: ApprovalRequest;
      try {
        request = await db.transaction(async (trx: Knex.Transaction) => {
          const execution = checkNode(await waiting.lock(trx, executionId), executionId, nodeId);
          const existing = await findRequest(trx, id, 'update');
          if (existing) {
            if (existing.executionId !== executionId) {
              throw conflict(`Approval request "${id}" belongs to another execution; use an id of its own.`);
            }
            if (existing.status === 'pending' && sameRequest(existing, input, ms)) return existing;
            throw conflict(
              existing.status === 'pending'
                ? `Execution ${executionId} already waits for approval request "${id}" with other values; send the same values to repeat it.`
                : `Approval request "${id}" was already ${existing.status}; ask again with a new approval_request_id.`,
            );
          }
          // A parent awaiting a paused child is still at work, and may ask for an approval too.
          const awaitingChild = execution.status === 'waiting' && execution.waiting_for?.type === 'child';
          if (execution.status !== 'running' && !awaitingChild) {
            throw conflict(
              execution.status === 'waiting' && execution.waiting_for?.type === 'approval'
                ? `Execution ${executionId} already waits for approval request "${execution.waiting_for.approval_request_id}"; only one request can be open at a time.`
                : `Execution ${executionId} is ${execution.status}; only a running execution can wait for an approval.`,
            );
          }
          const expiresAt = new Date(now.getTime() + ms);
          await waiting.pause(
            trx,
            executionId,
            {
              type: 'approval',
              approval_request_id: id,
              approval_request_url: input.approval_request_url ?? null,
              expires_at: expiresAt.toISOString(),
            },
            now,
          );
          paused = true;
          return insertRequest(trx, {
            approvalRequestId: id,
            executionId,
            nodeId: execution.node_id,
            target: execution.target,
            approvalRequestUrl: input.approval_request_url ?? null,
            callbackUrl: input.callback_url ?? null,
            expiresAt,
            now,
          });
        });
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw conflict(`Approval request "${id}" is already used; use an id of its own.`);
        }
        throw error;
      }
      if (paused) waiting.committed();
      return request;
    },

    /**
     * The execution's request with that id, or its latest one. With `nodeId` (the SDKs' agent
     * path), the execution must be one of that node.
     */
    async status(executionId: string, approvalRequestId?: string, nodeId?: string): Promise<ApprovalRequest> {
      if (nodeId !== undefined) checkNode(await waiting.find(db, executionId), executionId, nodeId);
      const request = approvalRequestId
        ? await findRequest(db, approvalRequestId)
        : await latestOfExecution(db, executionId);
      if (request && request.executionId === executionId) return request;
      if (!(await waiting.find(db, executionId))) throw executionNotFound(executionId);
      throw new ProblemError(
        'not_found',
        approvalRequestId
          ? `Execution ${executionId} has no approval request "${approvalRequestId}".`
          : `Execution ${executionId} has never asked for an approval.`,
      );
    },

    /**
     * `POST /api/v1/webhooks/approval`: records the decision, resumes the execution (whatever
     * the decision: the agent decides what it means) and queues the decision's delivery to the
     * agent. The same decision again answers as the first did; another one is a conflict.
     */
    async decide(input: DecisionInput): Promise<{ request: ApprovalRequest; executionStatus: string }> {
      const id = input.approval_request_id;
      const feedback = input.feedback ?? null;
      const first = await findRequest(db, id);
      if (!first) throw new ProblemError('not_found', `No approval request "${id}" exists.`);
      // Due to expire and not yet swept: expire it now, so the answer below says so.
      if (first.status === 'pending' && Date.parse(first.expiresAt) <= clock.now()) await expireOne(id);
      const now = new Date(clock.now());
      const outcome = await db.transaction(async (trx: Knex.Transaction) => {
        const execution = await waiting.lock(trx, first.executionId);
        const request = (await findRequest(trx, id, 'update')) as ApprovalRequest;
        if (request.status !== 'pending') {
          if (request.status === input.decision && request.feedback === feedback) {
            return { request, executionStatus: execution?.status ?? 'unknown', changed: false };
          }
          throw conflict(
            request.status === 'expired'
              ? `Approval request "${id}" expired at ${request.expiresAt}; the execution ended as timeout.`
              : request.status === 'cancelled'
                ? `Approval request "${id}" was cancelled: its execution ended (${execution?.status}) before a decision.`
                : request.status === input.decision
                  ? `Approval request "${id}" was already decided ${request.status} with other feedback.`
                  : `Approval request "${id}" was already decided: ${request.status}.`,
          );
        }
        if (Date.parse(request.expiresAt) <= now.getTime()) {
          // Past its expiry, and another replica is expiring it right now: too late all the same.
          throw conflict(
            `Approval request "${id}" expired at ${request.expiresAt}; the execution ends as timeout.`,
          );
        }
        const resumed = await waiting.resume(trx, request.executionId, id, input.decision, now);
        if (!resumed) {
          // Not reachable while the end-while-waiting hook cancels open requests; kept as a guard.
          throw conflict(
            `Execution ${request.executionId} is ${execution?.status}; it no longer waits for "${id}".`,
          );
        }
        const decided = (await resolveRequest(trx, id, {
          status: input.decision,
          feedback,
          deliver: request.callbackUrl !== null,
          now,
        })) as ApprovalRequest;
        return { request: decided, executionStatus: resumed.status as string, changed: true };
      });
      if (outcome.changed) {
        waiting.committed();
        if (outcome.request.callbackStatus) deps.wakeCallbacks();
      }
      return { request: outcome.request, executionStatus: outcome.executionStatus };
    },

    /** `GET /api/v1/approvals`: newest first. */
    async list(query: { status?: ApprovalStatus; node_id?: string; limit: number; cursor?: ListCursor }) {
      const rows = await listRequests(db, {
        status: query.status,
        nodeId: query.node_id,
        after: query.cursor,
        limit: query.limit,
      });
      const items = rows.slice(0, query.limit);
      const last = items[items.length - 1];
      return {
        items,
        next:
          rows.length > query.limit && last
            ? { requestedAt: last.requestedAt, id: last.approvalRequestId }
            : undefined,
      };
    },

    /**
     * `POST /api/v1/agents/{node_id}/executions/{id}/awaiter-status`: an SDK says the execution
     * now awaits a paused child, or goes on. A running execution becomes `waiting` (for a child)
     * until the agent reports `running` again or it ends; one paused for its own approval stays
     * as it is. Each report is also kept as an entry of the execution's log; `recorded` is false
     * when the log is full (the report is not worth failing the SDK's call for).
     */
    async awaiterStatus(
      nodeId: string,
      executionId: string,
      report: { status: 'waiting' | 'running'; reason?: string },
    ): Promise<{ recorded: boolean; at: Date; execution: ExecutionRow }> {
      const at = new Date(clock.now());
      let changed: ExecutionRow | undefined;
      const current = await db.transaction(async (trx: Knex.Transaction) => {
        const execution = checkNode(await waiting.lock(trx, executionId), executionId, nodeId);
        changed =
          report.status === 'waiting'
            ? await waiting.awaitChild(trx, executionId, report.reason ?? null, at)
            : await waiting.resumeFromChild(trx, executionId, at);
        return changed ?? execution;
      });
      if (changed) waiting.committed();
      const result = { at, execution: current };
      try {
        await deps.logs.append(executionId, [
          {
            type: 'awaiter_status',
            status: report.status,
            reason: report.reason ?? null,
            node_id: nodeId,
            timestamp: at.toISOString(),
          },
        ]);
        return { recorded: true, ...result };
      } catch (error) {
        if (error instanceof ProblemError && error.code === 'payload_too_large')
          return { recorded: false, ...result };
        throw error;
      }
    },

    /** One sweep: expires every pending request past its expiry. Safe on every replica at once. */
    async expireDue(): Promise<number> {
      let count = 0;
      for (;;) {
        const due = await dueForExpiry(db, new Date(clock.now()), SWEEP_BATCH);
        let expired = 0;
        for (const request of due) if (await expireOne(request.approvalRequestId)) expired += 1;
        count += expired;
        // Rows another replica holds stay due; the next pass (or that replica) takes them.
        if (due.length < SWEEP_BATCH || expired === 0) break;
      }
      if (count > 0) deps.log.info({ count }, 'approval requests expired');
      return count;
    },

    /** For the finisher: an execution that ends while waiting takes its open request with it. */
    async endedWhileWaiting(trx: Knex.Transaction, row: ExecutionRow, now: Date): Promise<void> {
      if (isTerminal(row.status)) await cancelPendingOf(trx, row.execution_id, now);
    },
  };
}

export type ApprovalService = ReturnType<typeof createApprovalService>;
