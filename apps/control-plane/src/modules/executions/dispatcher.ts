import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import { doublingBackoffMs } from '../../platform/backoff.ts';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import type { EventLog } from '../../platform/events/event-log.ts';
import type { Logger } from '../../platform/logger.ts';
import { createWorkLoop } from '../../platform/work-loop.ts';
import { type AgentClient, callContextOf } from './agent-client.ts';
import { EXECUTIONS_STREAM, startedPayload } from './events.ts';
import type { Finisher } from './finisher.ts';
import type { ExecutionRow } from './records.ts';
import { claimQueued, findExecution, markAccepted, recordRoutes, requeue } from './repository.ts';
import type { Resolver, Route } from './resolver.ts';
import { outcomeOf } from './service.ts';
import { parseTarget } from './targets.ts';

/** Bus topic: queued executions are waiting (a hint; the queue itself is the table). */
export const QUEUE_TOPIC = 'execution_queue';

/** Dispatch attempts of an execution whose agent cannot be reached before it fails. */
export const MAX_DISPATCHES = 5;
/** Longest wait before a queued execution whose node has nothing routable is tried again. */
const MAX_BACKOFF_MS = 30_000;
/** Least time between two cross-replica wake-ups of the dispatchers. */
const HINT_INTERVAL_MS = 5;
/** Safety net for a lost wake-up (the bus drops messages while reconnecting); not the hot path. */
const SAFETY_POLL_MS = 5_000;

export interface DispatcherDeps {
  db: Knex;
  clock: Clock;
  log: Logger;
  events: EventBus;
  eventLog: EventLog;
  resolver: Resolver;
  agents: AgentClient;
  finisher: Finisher;
  replicaId: string;
  /** Calls in flight at once on this replica (execution_queue.dispatch_concurrency). */
  concurrency: number;
  /** Calls in flight at once to one node (execution_queue.max_concurrent_per_node). */
  perNode: number;
  /** How long a call may go without an answer or a report before it ends as timeout. */
  answerTimeoutMs: number;
}

/** What a call needs of its execution: a claimed row, or a submission written as running. */
export type Forwardable = Parameters<typeof callContextOf>[0] &
  Pick<ExecutionRow, 'node_id' | 'input' | 'dispatch_count'>;

/** A slot taken for one submission forwarded at once (`dispatchNow`): use it once, either way. */
export interface DispatchSlot {
  /** The execution is written, running and dispatched by this replica: call its agent. */
  forward(row: Forwardable, route: Route): void;
  /** The execution was not written: give the slot back. */
  release(): void;
}

function backoffMs(dispatches: number): number {
  return doublingBackoffMs(dispatches, 1000, MAX_BACKOFF_MS);
}

/**
 * Forwards queued executions to agents, on every replica at once. The queue is the `executions`
 * table: a pump claims due rows in batches (FOR UPDATE SKIP LOCKED, so replicas never claim the
 * same row), routes each to an instance, records the route and the `execution.started` event,
 * and calls the agents, at most `concurrency` calls in flight. It runs when woken: by a
 * submission on this replica, by the bus when another replica enqueued, when a call finishes
 * and frees a slot while work may wait, and when a backed-off execution falls due. A submission
 * that finds a slot free and the queue drained skips the queue altogether (`dispatchNow`).
 *
 * No node can stall the others: at most `perNode` calls are open to one node at once (a claim
 * skips the queued executions of a node at its cap, so the other nodes' executions behind them
 * are claimed), and a call the agent neither answers nor reports on for `answerTimeoutMs` ends
 * as `timeout` and frees its slot. An agent that answered 202, or reported while it works, is
 * past that rule: the asynchronous lane has no execution time limit (only max_silence).
 */
export function createDispatcher(deps: DispatcherDeps) {
  const { db, clock, log } = deps;
  let inFlight = 0;
  /** Calls open per node, for the per-node cap. */
  const perNode = new Map<string, number>();
  const calls = new Set<Promise<void>>();
  const aborts = new Map<string, AbortController>();
  let accepted: string[] = [];
  let acceptFlush: Promise<void> | undefined;
  let hintPending = false;
  /**
   * This replica knows of nothing due in the queue: its last pass claimed less than it had room
   * for with no node at its cap, and nothing was queued or hinted since. Only then may a
   * submission skip the queue (dispatchNow), since it passes nothing that waits.
   */
  let queueDrained = false;
  /** Counts the wakes for queued work, so a pass can tell whether more came while it claimed. */
  let wakes = 0;
  /** The dispatcher runs here (start() was called); until then work queued is left to the others. */
  let started = false;
  let unsubscribe = () => {};

  /** Records accepted executions in one statement per event-loop turn instead of one per call. */
  function noteAccepted(id: string): void {
    accepted.push(id);
    acceptFlush ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const ids = accepted;
      accepted = [];
      acceptFlush = undefined;
      await markAccepted(db, ids, new Date(clock.now())).catch((error) =>
        log.error({ err: error }, 'could not record accepted executions'),
      );
    });
  }

  async function route(row: ExecutionRow): Promise<Route | Error> {
    try {
      return await deps.resolver.route(parseTarget(row.target), row.routed_version);
    } catch (error) {
      return error as Error;
    }
  }

  /**
   * The answer rule: a call still open after `answerTimeoutMs` ends as timeout unless the agent
   * reported on it meanwhile (a report sets accepted_at: it has the work and is on it). Reading
   * the row first is racy only against a report arriving in the same instant, which then finds
   * the execution ended, as it would after a cancel.
   */
  async function endUnanswered(row: Forwardable, chosen: Route): Promise<void> {
    const now = await findExecution(db, row.execution_id);
    if (now?.status !== 'running' || now.accepted_at !== null) return;
    const where = `${chosen.instance.nodeId}@${chosen.instance.version}`;
    const seconds = Math.round(deps.answerTimeoutMs / 1000);
    await deps.finisher.finish(row.execution_id, {
      status: 'timeout',
      error: `the agent ${where} neither answered the call nor reported on it within ${seconds} s (execution_queue.answer_timeout); long work should answer 202 and report through the status callback`,
    });
  }

  async function forward(row: Forwardable, chosen: Route): Promise<void> {
    const abort = new AbortController();
    aborts.set(row.execution_id, abort);
    // An end while the call is open abandons the call. Once it has answered there is nothing to
    // abort, and the common end, this call's own result, would otherwise build an abort reason
    // (a DOMException with its stack) for every execution.
    let calling = true;
    const unsubscribe = deps.finisher.onFinished(row.execution_id, () => {
      if (calling) abort.abort();
    });
    const answerTimer = setTimeout(() => {
      endUnanswered(row, chosen).catch((error) =>
        log.error({ err: error, execution_id: row.execution_id }, 'could not end an unanswered call'),
      );
    }, deps.answerTimeoutMs);
    answerTimer.unref();
    try {
      const answer = await deps.agents.call(
        chosen.instance.baseUrl,
        chosen.target.type,
        chosen.target.functionName,
        row.input,
        callContextOf(row),
        abort.signal,
      );
      calling = false;
      if (answer.kind === 'accepted') return noteAccepted(row.execution_id);
      // It ended meanwhile (cancelled, reaped), or a shutdown abandoned the call: nothing to record.
      if (abort.signal.aborted) return;
      if (answer.kind === 'unreachable' && row.dispatch_count < MAX_DISPATCHES) {
        const at = clock.now() + backoffMs(row.dispatch_count);
        await requeue(db, [row.execution_id], new Date(at), new Date(clock.now()));
        log.info(
          { execution_id: row.execution_id, error: answer.error },
          'agent unreachable; execution queued again',
        );
        loop.wakeAt(at);
        return;
      }
      const outcome = outcomeOf(answer);
      if (answer.kind === 'unreachable')
        outcome.error = `${answer.error} (after ${row.dispatch_count} attempts)`;
      await deps.finisher.finish(row.execution_id, outcome);
    } finally {
      clearTimeout(answerTimer);
      unsubscribe();
      aborts.delete(row.execution_id);
    }
  }

  /** Room left per node that has calls open here (the others have `perNode`). */
  function nodeRooms(): Map<string, number> {
    const rooms = new Map<string, number>();
    for (const [node, open] of perNode) rooms.set(node, Math.max(0, deps.perNode - open));
    return rooms;
  }

  function opened(node: string): void {
    inFlight += 1;
    perNode.set(node, (perNode.get(node) ?? 0) + 1);
  }

  function closed(node: string): void {
    inFlight -= 1;
    const open = (perNode.get(node) ?? 1) - 1;
    if (open > 0) perNode.set(node, open);
    else perNode.delete(node);
  }

  /** Calls the agent in a slot opened for it; when the call ends, the slot goes to queued work. */
  function startCall(row: Forwardable, chosen: Route): void {
    const call = forward(row, chosen)
      .catch((error) => log.error({ err: error, execution_id: row.execution_id }, 'dispatch failed'))
      .finally(() => {
        closed(row.node_id);
        calls.delete(call);
        // With the queue drained a freed slot has nothing to claim: no pass, no empty claim.
        if (!queueDrained) loop.wake();
      });
    calls.add(call);
  }

  /** Queued work may be due (a submission queued, an execution requeued, another replica's hint). */
  function queuedWork(): void {
    wakes += 1;
    queueDrained = false;
    loop.wake();
  }

  /**
   * Claims one batch and starts its calls; returns how many rows it claimed and whether a node
   * reached its cap in it (then the queue may hold other nodes' work the cap kept out of it).
   */
  async function claimBatch(room: number): Promise<{ claimed: number; capped: boolean }> {
    const now = new Date(clock.now());
    const rows = await claimQueued(db, deps.replicaId, room, now, {
      perNode: deps.perNode,
      rooms: nodeRooms(),
    });
    if (rows.length === 0) return { claimed: 0, capped: false };
    const routed: Array<{ row: ExecutionRow; route: Route }> = [];
    const waiting: ExecutionRow[] = [];
    const gone: Array<{ row: ExecutionRow; error: Error }> = [];
    for (const row of rows) {
      const chosen = await route(row);
      if (!(chosen instanceof Error)) routed.push({ row, route: chosen });
      else if (chosen instanceof ProblemError && chosen.code === 'service_unavailable') waiting.push(row);
      else gone.push({ row, error: chosen });
    }
    if (routed.length > 0) {
      await recordRoutes(
        db,
        routed.map(({ row, route }) => ({
          id: row.execution_id,
          version: route.instance.version,
          baseUrl: route.instance.baseUrl,
          event: startedPayload(row, now),
        })),
        EXECUTIONS_STREAM,
        now,
      );
      deps.eventLog.announce(EXECUTIONS_STREAM);
    }
    // No instance is ready now: back to the queue, tried again with backoff while the node exists.
    for (const row of waiting) {
      // Waits grow with each claim that found nothing routable (dispatch_count does not).
      const waited = Math.max(1, Math.round((now.getTime() - new Date(row.created_at).getTime()) / 1000));
      const at = clock.now() + Math.min(MAX_BACKOFF_MS, Math.max(1000, waited * 250));
      await requeue(db, [row.execution_id], new Date(at), now, { unsent: true });
      loop.wakeAt(at);
    }
    for (const { row, error } of gone) {
      await deps.finisher.finish(row.execution_id, {
        status: 'failed',
        error: `cannot dispatch: ${error instanceof ProblemError ? error.message : String(error)}`,
      });
    }
    for (const { row, route } of routed) {
      opened(row.node_id);
      startCall(row, route);
    }
    const capped = rows.some((row) => (perNode.get(row.node_id) ?? 0) >= deps.perNode);
    return { claimed: rows.length, capped };
  }

  /**
   * Claims batches while there is room for calls and the last claim may have left work behind;
   * resolves true when it stopped with work possibly left in the queue: every slot taken, or a
   * node at its cap.
   */
  async function claimWhileRoom(): Promise<boolean> {
    let leftWork = false;
    while (!loop.stopped && inFlight < deps.concurrency) {
      const room = Math.min(64, deps.concurrency - inFlight);
      const { claimed, capped } = await claimBatch(room);
      leftWork = capped;
      if (claimed < room && !capped) break;
    }
    return leftWork || inFlight >= deps.concurrency;
  }

  /** One pass; the other replicas are told when it left work or failed, or this one is stopping. */
  async function dispatchPass(): Promise<void> {
    const wakesBefore = wakes;
    // While a pass claims, a submission forwarded at once could pass what it is about to claim.
    queueDrained = false;
    const leftWork = await claimWhileRoom().catch((error) => {
      hintOthers();
      throw error;
    });
    // A node at its cap here is left out of claims, so its backlog would not show in `leftWork`.
    const noneAtCap = [...perNode.values()].every((open) => open < deps.perNode);
    queueDrained = !leftWork && noneAtCap && !loop.stopped && wakes === wakesBefore;
    if (leftWork || loop.stopped) hintOthers();
  }

  /**
   * Wakes the other replicas' dispatchers through the bus, at most once per HINT_INTERVAL_MS
   * however many submissions arrive: replicas claim in batches, so a burst needs one wake-up, not
   * one per execution.
   */
  function hintOthers(): void {
    if (hintPending) return;
    hintPending = true;
    setTimeout(() => {
      hintPending = false;
      deps.events.publish(QUEUE_TOPIC, {}).catch(() => {});
    }, HINT_INTERVAL_MS).unref();
  }

  const loop = createWorkLoop({
    pass: dispatchPass,
    onError: (error) => log.error({ err: error }, 'execution dispatch pass failed'),
    clock,
    pollMs: SAFETY_POLL_MS,
  });

  return {
    /**
     * Wakes this replica's pump now. The other replicas are woken through the bus only when this
     * one cannot take the work itself: it is stopped, or its pass ended with every slot taken or
     * a node at its cap (then the queue may hold work it left). A replica with room claims what
     * was just queued at once, so telling the others would only make them run an empty claim.
     */
    wake(): void {
      if (!started || loop.stopped) hintOthers();
      else queuedWork();
    },
    /**
     * Eager dispatch: a slot to forward a new submission at once, when this replica dispatches,
     * knows the queue to be drained and has room for the node. The submission is then written as
     * running, dispatched by this replica (as a claim would leave it), and forwarded, without a
     * claim and a route statement for it. Undefined otherwise: the submission is queued.
     */
    dispatchNow(nodeId: string): DispatchSlot | undefined {
      if (!started || loop.stopped || !queueDrained || inFlight >= deps.concurrency) return undefined;
      if ((perNode.get(nodeId) ?? 0) >= deps.perNode) return undefined;
      opened(nodeId);
      return {
        forward: (row, route) => startCall(row, route),
        release: () => {
          closed(nodeId);
          if (!queueDrained) loop.wake();
        },
      };
    },
    start(): void {
      started = true;
      unsubscribe = deps.events.subscribe(QUEUE_TOPIC, () => queuedWork());
      loop.start();
    },
    /** Tests: one full pass of claiming (calls run on; `drain()` waits for them). */
    runOnce: (): Promise<void> => loop.run(),
    /**
     * Abandons the calls still in flight (a shutdown that waited long enough): their executions
     * stay claimed by this replica, and are recovered once its lease has ended.
     */
    abandonAll(): void {
      for (const abort of aborts.values()) abort.abort();
    },
    /** Waits for the calls in flight to return. */
    async drain(): Promise<void> {
      while (calls.size > 0) await Promise.allSettled([...calls]);
      await acceptFlush;
    },
    /**
     * Stops claiming; calls in flight are abandoned (their executions stay claimed by this
     * replica and are recovered by whoever runs next, after the orphan grace).
     */
    async stop(): Promise<void> {
      unsubscribe();
      await loop.stop();
      await acceptFlush;
    },
    inFlight: () => inFlight,
    /** The executions whose calls are in flight here. */
    inFlightIds: () => [...aborts.keys()],
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
