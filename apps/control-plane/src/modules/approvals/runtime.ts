import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/event-bus.ts';
import type { Logger } from '../../platform/logger.ts';
import type { ExecutionLogs, ExecutionWaiting } from '../executions/index.ts';
import { createCallbackDeliverer } from './callbacks.ts';
import { createApprovalService } from './service.ts';
import type { ApprovalSettings } from './settings.ts';

export interface ApprovalRuntimeDeps {
  db: Knex;
  events: EventBus;
  clock: Clock;
  log: Logger;
  settings: ApprovalSettings;
  /** This process's replica id: callback leases are marked with it. */
  replicaId: string;
  /** Sent to agents' callback_url as X-API-Key when API-key authentication is on; read per call. */
  apiKey?: () => string | undefined;
  executions: { waiting: ExecutionWaiting; logs: ExecutionLogs };
}

/**
 * Approvals wired together: the service the routes call, the deliverer of decisions to agents and
 * the expiry sweep. Nothing runs until start() (server.ts); tests call `callbacks.runOnce()` and
 * `sweep.runOnce()` after moving the clock.
 */
export function createApprovalRuntime(deps: ApprovalRuntimeDeps) {
  const { log, settings } = deps;
  const callbacks = createCallbackDeliverer({
    db: deps.db,
    events: deps.events,
    clock: deps.clock,
    log,
    settings,
    replicaId: deps.replicaId,
    apiKey: deps.apiKey,
    waiting: deps.executions.waiting,
  });
  const service = createApprovalService({
    db: deps.db,
    clock: deps.clock,
    log,
    waiting: deps.executions.waiting,
    logs: deps.executions.logs,
    settings,
    wakeCallbacks: () => callbacks.wake(),
  });
  // An execution that ends while waiting (cancelled, failed, sync timeout) ends its open request.
  deps.executions.waiting.onEndedWhileWaiting(service.endedWhileWaiting);

  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> | undefined;
  const sweep = {
    /** One pass of the expiry sweep (every replica runs it; row locks keep them apart). */
    runOnce: () => service.expireDue(),
  };

  return {
    service,
    callbacks,
    sweep,
    start(): void {
      callbacks.start();
      timer = setInterval(() => {
        sweeping ??= sweep
          .runOnce()
          .catch((error) => log.error({ err: error }, 'approval expiry sweep failed'))
          .finally(() => {
            sweeping = undefined;
          });
      }, settings.sweepIntervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      await sweeping;
      await callbacks.stop();
    },
  };
}

export type ApprovalRuntime = ReturnType<typeof createApprovalRuntime>;
