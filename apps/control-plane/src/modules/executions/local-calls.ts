import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { EventLog } from '../../platform/events/event-log.ts';
import { isUniqueViolation } from '../../platform/unique-violation.ts';
import { EXECUTIONS_STREAM, startedPayload } from './events.ts';
import type { Finisher } from './finisher.ts';
import type { ExecutionRow } from './records.ts';
import { findExecution, insertExecution, type Outcome } from './repository.ts';
import type { Resolver } from './resolver.ts';
import type { LocalCallEvent } from './schemas.ts';
import type { ExecutionWaiting } from './waiting.ts';

export interface LocalCallsDeps {
  db: Knex;
  clock: Clock;
  eventLog: EventLog;
  resolver: Resolver;
  finisher: Finisher;
  waiting: ExecutionWaiting;
}

/**
 * Local calls: functions an agent ran in its own process (one of its functions calling another
 * of the same agent), which SDKs report with `POST /api/v1/workflow/executions/events` instead of
 * calling through the control plane. Each becomes an execution of lane `local` in the workflow,
 * with its parent, input, outcome and duration, so the DAG shows every step the agent took.
 *
 * The agent holds the work, so a local execution is `accepted` from the start: the reaper ends
 * it like any execution an agent took when that agent goes away or falls silent.
 */
export function createLocalCalls(deps: LocalCallsDeps) {
  const { db, clock } = deps;

  /** The execution a first report of a local call creates, `running` since it began. */
  async function insertLocal(event: LocalCallEvent, now: Date): Promise<ExecutionRow> {
    const type = await deps.resolver.localFunctionType(event.agent_node_id, event.reasoner_id);
    const parent = event.parent_execution_id ? await findExecution(db, event.parent_execution_id) : undefined;
    // A report that arrives already ended (its `running` report was lost) began duration_ms ago.
    const startedAt =
      event.status === 'succeeded' || event.status === 'failed'
        ? new Date(now.getTime() - (event.duration_ms ?? 0))
        : now;
    const values = {
      execution_id: event.execution_id,
      run_id: event.run_id,
      workflow_id: event.workflow_id ?? parent?.workflow_id ?? event.run_id,
      parent_execution_id: event.parent_execution_id ?? null,
      session_id: parent?.session_id ?? null,
      actor_id: parent?.actor_id ?? null,
      caller_node_id: event.agent_node_id,
      target:
        type === 'skill'
          ? `${event.agent_node_id}.skill:${event.reasoner_id}`
          : `${event.agent_node_id}.${event.reasoner_id}`,
      node_id: event.agent_node_id,
      function_name: event.reasoner_id,
      function_type: type,
      lane: 'local' as const,
      status: 'running' as const,
      input: event.input_data ?? {},
      // The instance that ran the parent ran this too: the reaper watches that instance.
      routed_version: parent?.node_id === event.agent_node_id ? parent.routed_version : null,
      agent_base_url: null,
      webhook: null,
      webhook_registered: false,
      webhook_error: null,
      depth: (parent?.depth ?? 0) + 1,
      dispatched_by: null,
      dispatch_count: 0,
      accepted_at: startedAt,
      started_at: startedAt,
      now,
    };
    try {
      const row = await insertExecution(db, values, {
        stream: EXECUTIONS_STREAM,
        name: 'execution.started',
        payload: startedPayload({ ...values, error: null, duration_ms: null }, startedAt),
      });
      deps.eventLog.announce(EXECUTIONS_STREAM);
      return row;
    } catch (error) {
      // The same report reached two replicas at once: the other one created it.
      if (!isUniqueViolation(error)) throw error;
      return (await findExecution(db, event.execution_id)) as ExecutionRow;
    }
  }

  /** A report may only speak for a local call of its own agent: never for a routed execution. */
  function checkOwn(row: ExecutionRow, event: LocalCallEvent): void {
    if (row.lane !== 'local') {
      throw new ProblemError(
        'conflict',
        `Execution ${row.execution_id} was routed by the control plane, not run in process; report its outcome with POST /api/v1/executions/${row.execution_id}/status.`,
      );
    }
    if (row.node_id !== event.agent_node_id || row.function_name !== event.reasoner_id) {
      throw new ProblemError(
        'conflict',
        `Execution ${row.execution_id} is the local call ${row.target}; a report about ${event.agent_node_id}.${event.reasoner_id} cannot use its id.`,
      );
    }
  }

  async function transition(change: (trx: Knex.Transaction) => Promise<ExecutionRow | undefined>) {
    if (await db.transaction(change)) deps.waiting.committed();
  }

  return {
    /**
     * Applies one report: creates the execution on the first, then follows it (`waiting` while
     * the agent says it awaits a child, `running` again, and the end). Reports after the end
     * change nothing, like repeated status callbacks. Answers the execution as it now stands.
     */
    async report(event: LocalCallEvent): Promise<{ row: ExecutionRow; created: boolean }> {
      const now = new Date(clock.now());
      const id = event.execution_id;
      const existing = await findExecution(db, id);
      if (existing) checkOwn(existing, event);
      const row = existing ?? (await insertLocal(event, now));
      switch (event.status) {
        case 'running':
          await transition((trx) => deps.waiting.resumeFromChild(trx, id, now));
          break;
        case 'waiting':
          await transition((trx) => deps.waiting.awaitChild(trx, id, event.status_reason ?? null, now));
          break;
        case 'succeeded':
        case 'failed': {
          const outcome: Outcome =
            event.status === 'succeeded'
              ? { status: 'succeeded', result: event.result ?? null }
              : {
                  status: 'failed',
                  error: event.error ?? 'the agent reported a failure',
                  errorDetails: event.error_details ?? null,
                };
          await deps.finisher.finish(id, outcome);
          break;
        }
      }
      return { row: (await findExecution(db, id)) ?? row, created: existing === undefined };
    },
  };
}

export type LocalCalls = ReturnType<typeof createLocalCalls>;
