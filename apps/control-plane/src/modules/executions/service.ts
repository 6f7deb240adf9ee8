import { newId, ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { EventLog } from '../../platform/events/event-log.ts';
import type { CallerContext } from '../../platform/http/context-headers.ts';
import { findUnstorable, storableText } from '../../platform/json-storable.ts';
import type { Logger } from '../../platform/logger.ts';
import { checkWebhook, type WebhookSettings } from '../webhooks/index.ts';
import { type AgentAnswer, type AgentClient, callContextOf } from './agent-client.ts';
import type { DispatchSlot } from './dispatcher.ts';
import { EXECUTIONS_STREAM, startedPayload } from './events.ts';
import type { Finisher } from './finisher.ts';
import { type ExecutionRow, syncResult } from './records.ts';
import {
  countQueued,
  type FinishedRow,
  findExecution,
  findParent,
  insertQueued,
  markAccepted,
  type Outcome,
  recordExecution,
  recordProgress,
} from './repository.ts';
import type { Resolver, Route } from './resolver.ts';
import { parseTarget } from './targets.ts';

/** The `execution_queue` settings the lanes use (the section also holds the webhook settings). */
export interface ExecutionQueueSettings {
  syncTimeoutMs: number;
  queueSize: number;
  dispatchConcurrency: number;
  maxConcurrentPerNode: number;
  answerTimeoutMs: number;
  orphanGraceMs: number;
  maxSilenceMs: number;
}

export interface ExecutionServiceDeps {
  db: Knex;
  clock: Clock;
  log: Logger;
  eventLog: EventLog;
  resolver: Resolver;
  agents: AgentClient;
  finisher: Finisher;
  settings: ExecutionQueueSettings;
  webhookSettings: WebhookSettings;
  replicaId: string;
  /** Wakes this replica's dispatcher and, through the bus, the others'. */
  wakeDispatchers: () => void;
  /** A slot of this replica's dispatcher to forward a submission at once, if it has one. */
  dispatchNow: (nodeId: string) => DispatchSlot | undefined;
}

/** What the status callback of an agent reports. */
export interface StatusReport {
  status: 'succeeded' | 'failed' | 'cancelled' | 'running';
  result?: unknown;
  error?: string | null;
  error_details?: unknown;
  progress?: number | null;
}

function storableOrFailure(result: unknown, what: string): Outcome | undefined {
  const path = findUnstorable(result);
  if (!path) return undefined;
  return {
    status: 'failed',
    error: `the agent's ${what} cannot be stored: it contains U+0000 or a lone surrogate at ${[what, ...path].join('.')}`,
  };
}

/** The outcome an agent's direct answer stands for (everything but 202). */
export function outcomeOf(answer: Exclude<AgentAnswer, { kind: 'accepted' }>): Outcome {
  switch (answer.kind) {
    case 'result':
      return storableOrFailure(answer.result, 'result') ?? { status: 'succeeded', result: answer.result };
    case 'error':
      return {
        status: 'failed',
        error: storableText(answer.error),
        errorDetails: findUnstorable(answer.details) ? null : answer.details,
      };
    case 'unreachable':
    case 'lost':
      return { status: 'failed', error: storableText(answer.error) };
  }
}

/**
 * Executions: the synchronous and asynchronous lanes, agents' status reports, cancellation. The
 * dispatcher forwards queued executions; the finisher ends every one.
 */
export function createExecutionService(deps: ExecutionServiceDeps) {
  const { db, clock, finisher } = deps;
  // Sync calls this process is making right now (the reaper leaves them alone).
  const syncInFlight = new Set<string>();
  // Queue admission reads the queue length at most every 250 ms and counts its own admissions in
  // between: exact enough for a bound of thousands, and no COUNT(*) per submission. Submissions
  // that find the count stale while it is being read share that one read.
  let queued = { count: 0, at: Number.NEGATIVE_INFINITY };
  let counting: Promise<void> | undefined;

  function recount(now: number): Promise<void> {
    counting ??= countQueued(db)
      .then((count) => {
        queued = { count, at: now };
      })
      .finally(() => {
        counting = undefined;
      });
    return counting;
  }

  async function admit(): Promise<void> {
    const now = clock.now();
    if (now - queued.at > 250 || queued.count >= deps.settings.queueSize) await recount(now);
    if (queued.count >= deps.settings.queueSize) {
      throw new ProblemError(
        'rate_limited',
        `The execution queue is full (${queued.count} queued executions, limit ${deps.settings.queueSize}).`,
        { headers: { 'Retry-After': '1' } },
      );
    }
    queued.count += 1;
  }

  async function identity(context: CallerContext) {
    const parent = context.parentExecutionId ? await findParent(db, context.parentExecutionId) : undefined;
    const runId = context.runId ?? parent?.run_id ?? newId('run');
    return {
      execution_id: newId('exec'),
      run_id: runId,
      workflow_id: context.workflowId ?? parent?.workflow_id ?? runId,
      parent_execution_id: context.parentExecutionId ?? null,
      session_id: context.sessionId ?? null,
      actor_id: context.actorId ?? null,
      caller_node_id: context.callerNodeId ?? null,
      depth: (parent?.depth ?? 0) + 1,
    };
  }

  function refuseUnstorableInput(input: unknown): void {
    const path = findUnstorable(input);
    if (!path) return;
    const field = ['input', ...path].join('.');
    throw new ProblemError(
      'invalid_request',
      `The input cannot be stored: ${field} contains U+0000 or a lone surrogate.`,
      {
        extensions: { errors: [{ field, message: 'contains U+0000 or a lone UTF-16 surrogate' }] },
      },
    );
  }

  /** Resolves and validates a call: 400 bad target or input, 404 unknown, 503 nothing routable. */
  async function prepare(targetText: string, input: unknown): Promise<Route> {
    const route = await deps.resolver.route(parseTarget(targetText));
    deps.resolver.validateInput(route, input);
    refuseUnstorableInput(input);
    return route;
  }

  return {
    /**
     * `POST /api/v1/execute/{target}`: records the execution as running, calls the agent, and
     * answers its result. An agent that answers 202 (SDKs always do when they get X-Run-ID and
     * X-Execution-ID) reports through the status callback, which this call waits for up to the
     * sync timeout; after that the execution is `timeout`, the agent is asked to cancel it, and
     * the caller gets 504 with the execution id.
     */
    async executeSync(targetText: string, input: unknown, context: CallerContext) {
      const route = await prepare(targetText, input);
      const now = new Date(clock.now());
      const ids = await identity(context);
      const values = {
        ...ids,
        target: route.target.text,
        node_id: route.target.nodeId,
        function_name: route.target.functionName,
        function_type: route.target.type,
        lane: 'sync' as const,
        status: 'running' as const,
        input,
        routed_version: route.instance.version,
        agent_base_url: route.instance.baseUrl,
        webhook: null,
        webhook_registered: false,
        webhook_error: null,
        dispatched_by: deps.replicaId,
        dispatch_count: 1,
        now,
      };
      // The execution and its `execution.started` event, in one statement; the row is recorded
      // before the agent is called. Everything the call needs is in `values` already.
      await recordExecution(db, values, {
        stream: EXECUTIONS_STREAM,
        name: 'execution.started',
        payload: startedPayload({ ...values, error: null, duration_ms: null }, now),
      });
      const id = values.execution_id;
      deps.eventLog.announce(EXECUTIONS_STREAM);
      syncInFlight.add(id);

      // One signal for the call: aborted by the sync timeout, or when the call is abandoned
      // because the execution ended elsewhere first. A plain timer rather than AbortSignal.timeout
      // and AbortSignal.any: those cost a timer, weak references and an abort event per call.
      const call = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        call.abort();
      }, deps.settings.syncTimeoutMs);
      // Like AbortSignal.timeout's, the timer alone does not keep the process running.
      timer.unref();
      let finishedElsewhere: () => void = () => {};
      const ended = new Promise<void>((resolve) => {
        finishedElsewhere = resolve;
      });
      // Subscribed before the call: the agent's callback may beat its own 202.
      const unsubscribe = finisher.onFinished(id, () => finishedElsewhere());
      // Whether the agent call is still open when this ends (then it is abandoned).
      let calling = true;
      // The row as this call ended it, when it did; otherwise it is read back at the end.
      let endedRow: FinishedRow | undefined;
      // The agent's own status when it answered the call with an error.
      let agentStatus: number | undefined;
      try {
        const answer = await Promise.race([
          deps.agents
            .call(
              route.instance.baseUrl,
              route.target.type,
              route.target.functionName,
              input,
              callContextOf(values),
              call.signal,
            )
            .finally(() => {
              calling = false;
            }),
          ended.then(() => undefined),
        ]);
        // An abort by the deadline surfaces as a lost call: that is the timeout below, not a failure.
        if (answer && answer.kind !== 'accepted' && !(answer.kind === 'lost' && timedOut)) {
          const finished = await finisher.finish(id, outcomeOf(answer));
          endedRow = finished;
          if (answer.kind === 'error') agentStatus = answer.status;
          if (finished && (answer.kind === 'unreachable' || answer.kind === 'lost')) {
            throw syncFailure('upstream_unavailable', finished, `Execution ${id} failed: ${answer.error}.`);
          }
        } else if (answer?.kind === 'accepted') {
          await markAccepted(db, [id], new Date(clock.now()));
          await waitFor(ended, call.signal, async () => {
            const now = await findExecution(db, id);
            return !now || !['queued', 'running', 'waiting'].includes(now.status);
          });
        }
        if (timedOut) {
          const timedOutRow = await finisher.finish(id, {
            status: 'timeout',
            error: `no result within the synchronous timeout of ${deps.settings.syncTimeoutMs} ms; use POST /api/v1/execute/async/{target} for long work`,
          });
          if (timedOutRow) {
            void deps.agents.cancel(route.instance.baseUrl, id);
            throw new ProblemError(
              'upstream_timeout',
              `Execution ${id} did not finish within ${deps.settings.syncTimeoutMs} ms; it is recorded as timeout and the agent was asked to cancel it.`,
              {
                extensions: { execution_id: id },
                headers: { 'X-Execution-ID': id },
              },
            );
          }
        }
      } finally {
        clearTimeout(timer);
        if (calling) call.abort();
        unsubscribe();
        syncInFlight.delete(id);
      }
      const final: FinishedRow = endedRow ?? ((await findExecution(db, id)) as ExecutionRow);
      if (final.status === 'failed' || final.status === 'cancelled') {
        // SDKs return any 2xx body to the caller as the function's result, so a failure must not
        // answer 2xx: the agent's own 4xx passes through (it refused the input), anything else is 502.
        const status =
          agentStatus !== undefined && agentStatus >= 400 && agentStatus < 500 ? agentStatus : 502;
        throw syncFailure(
          'execution_failed',
          final,
          `Execution ${final.execution_id} ${final.status}: ${final.error ?? 'no error message'}`,
          status,
        );
      }
      return { row: final, version: route.instance.version };
    },

    /**
     * `POST /api/v1/execute/async/{target}`: validates, checks the webhook, writes the queued
     * execution (the queue item itself) and wakes the dispatchers. The version is chosen now (and
     * returned as X-Routed-Version); the dispatcher keeps it while that instance stays routable.
     *
     * When this replica's dispatcher has room and nothing waits in the queue, the execution skips
     * it (eager dispatch): it is written running, dispatched here, with its `execution.started`
     * event, and forwarded at once, as a claim would have done two statements later. A crash
     * after the write leaves it as a crash leaves a claimed execution: recovered once this
     * replica's lease ends. The acknowledgement says `queued` either way: accepted, not yet run.
     */
    async submitAsync(targetText: string, input: unknown, webhookInput: unknown, context: CallerContext) {
      const route = await prepare(targetText, input);
      const check =
        webhookInput === undefined ? undefined : await checkWebhook(webhookInput, deps.webhookSettings);
      const slot = deps.dispatchNow(route.target.nodeId);
      let forwarded = false;
      try {
        if (!slot) await admit();
        const now = new Date(clock.now());
        const row = {
          ...(await identity(context)),
          target: route.target.text,
          node_id: route.target.nodeId,
          function_name: route.target.functionName,
          function_type: route.target.type,
          lane: 'async' as const,
          status: 'queued' as const,
          input,
          routed_version: route.instance.version,
          agent_base_url: null,
          webhook: check?.registered ? check.webhook : null,
          webhook_registered: check?.registered ?? false,
          webhook_error: check && !check.registered ? check.error : null,
          dispatched_by: null,
          dispatch_count: 0,
          now,
        };
        if (slot) {
          const running = {
            ...row,
            status: 'running' as const,
            agent_base_url: route.instance.baseUrl,
            dispatched_by: deps.replicaId,
            dispatch_count: 1,
          };
          await recordExecution(db, running, {
            stream: EXECUTIONS_STREAM,
            name: 'execution.started',
            payload: startedPayload({ ...running, error: null, duration_ms: null }, now),
          });
          deps.eventLog.announce(EXECUTIONS_STREAM);
          slot.forward(running, route);
          forwarded = true;
        } else {
          await insertQueued(db, row);
          deps.wakeDispatchers();
        }
        return { row: { ...row, created_at: now }, version: route.instance.version };
      } finally {
        if (slot && !forwarded) slot.release();
      }
    },

    /**
     * `POST /api/v1/executions/{id}/status` from the agent: progress while running, or the
     * terminal outcome. Reports on an execution that has already ended change nothing (SDKs
     * retry callbacks), and answer its current record.
     */
    async report(id: string, report: StatusReport): Promise<ExecutionRow> {
      let row: ExecutionRow | undefined;
      if (report.status === 'running') {
        row = await recordProgress(db, id, report.progress ?? undefined, new Date(clock.now()));
      } else {
        const outcome: Outcome =
          report.status === 'succeeded'
            ? (storableOrFailure(report.result, 'result') ?? {
                status: 'succeeded',
                result: report.result ?? null,
              })
            : {
                status: report.status,
                error: report.error
                  ? storableText(report.error)
                  : report.status === 'cancelled'
                    ? 'cancelled by the agent'
                    : 'the agent reported a failure',
                errorDetails: storableOrFailure(report.error_details, 'error_details')
                  ? null
                  : report.error_details,
              };
        row = await finisher.finishRecord(id, outcome);
      }
      // Nothing changed: the execution had already ended (its record is the answer), or is unknown.
      row ??= await findExecution(db, id);
      if (!row) throw notFound(id);
      return row;
    },

    /**
     * `POST /api/v1/executions/{id}/cancel`: cancelled at once (whatever the agent does next
     * changes nothing), then the agent that has it is told. 409 when it had already ended.
     */
    async cancel(id: string) {
      const finished = await finisher.finishRecord(id, {
        status: 'cancelled',
        error: 'cancelled by request',
      });
      if (!finished) {
        const current = await findExecution(db, id);
        if (!current) throw notFound(id);
        throw new ProblemError(
          'conflict',
          `Execution ${id} has already ended (${current.status}); there is nothing to cancel.`,
        );
      }
      const notice = finished.agent_base_url
        ? await deps.agents.cancel(finished.agent_base_url, id)
        : { delivered: false, error: null };
      return { row: finished, agentNotified: notice.delivered, agentError: notice.error };
    },

    /** The sync calls this process is making right now. */
    inFlightIds: () => [...syncInFlight],

    async get(id: string): Promise<ExecutionRow> {
      const row = await findExecution(db, id);
      if (!row) throw notFound(id);
      return row;
    },
  };
}

/**
 * Waits until the execution has ended or the deadline passes. The finisher's wake-up (local, or
 * through the bus from another replica) is the fast path; the bus may drop a message while its
 * connection is re-established, so the row is also re-read every two seconds.
 */
async function waitFor(
  ended: Promise<void>,
  deadline: AbortSignal,
  hasEnded: () => Promise<boolean>,
): Promise<void> {
  const aborted = new Promise<void>((resolve) => {
    if (deadline.aborted) resolve();
    deadline.addEventListener('abort', () => resolve(), { once: true });
  });
  let done = false;
  void Promise.race([ended, aborted]).then(() => {
    done = true;
  });
  while (!done) {
    let timer: NodeJS.Timeout | undefined;
    const tick = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 2_000);
    });
    await Promise.race([ended, aborted, tick]);
    clearTimeout(timer);
    if (done || deadline.aborted) return;
    if (await hasEnded()) return;
  }
}

/**
 * The problem a synchronous call answers when its execution did not succeed: the document also
 * carries the synchronous result's members (the execution's own status as `execution_status`,
 * since `status` is the HTTP status there), and `error`, the member the platform's SDKs print.
 */
function syncFailure(
  code: 'execution_failed' | 'upstream_unavailable',
  row: FinishedRow,
  detail: string,
  status?: number,
): ProblemError {
  const { status: executionStatus, error_message, ...result } = syncResult(row);
  const message = (error_message as string | undefined) ?? detail;
  return new ProblemError(code, detail, {
    status,
    extensions: {
      ...result,
      execution_status: executionStatus,
      error_message: message,
      error: message,
      error_details: row.error_details ?? null,
    },
    headers: { 'X-Execution-ID': row.execution_id },
  });
}

export function notFound(id: string): ProblemError {
  return new ProblemError('not_found', `No execution "${id.slice(0, 200)}" exists.`);
}

export type ExecutionService = ReturnType<typeof createExecutionService>;
