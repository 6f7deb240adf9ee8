import { newId, ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import type { Clock } from '../../platform/clock.ts';
import { checkWebhook, type HostLookup, type WebhookSettings } from '../webhooks/index.ts';
import type { Forwarder } from './forwarder.ts';
import {
  type CollectorSettings,
  claimParked,
  claimParkedByIds,
  clearParked,
  countParked,
  databaseNow,
  deleteSettings,
  type ForwarderState,
  listParked,
  type ParkedHead,
  readParked,
  readSettings,
  readState,
  redriveDelivered,
  redriveFailed,
  releaseClaims,
  restartForwarding,
  writeSettings,
} from './repository.ts';
import { type CollectorSettingsBody, MAX_REDRIVE_BATCHES } from './schemas.ts';

export interface ObservabilityServiceDeps {
  db: Knex;
  clock: Clock;
  forwarder: Forwarder;
  /** `config.executionQueue`: the address rules collectors share with execution webhooks. */
  webhookSettings: WebhookSettings;
  /** Resolves host names in the URL check (tests pass one for names of the public internet). */
  lookup?: HostLookup;
}

export interface ForwarderStatus {
  settings: CollectorSettings | undefined;
  state: ForwarderState | undefined;
  parked: { batches: number; events: number };
}

export interface RedriveOutcome {
  batchId: string;
  events: number;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
}

/** What a redrive's claim lasts beyond the time its posts may take (see redrive). */
const CLAIM_MARGIN_MS = 60_000;

const notConfigured = () =>
  new ProblemError(
    'not_found',
    'No observability webhook is configured; set one with POST /api/v1/settings/observability-webhook.',
  );

/** The field a checkWebhook message is about (`webhook.url ...` → url). */
function fieldOf(message: string): string {
  return /^webhook\.(url|secret|headers)/.exec(message)?.[1] ?? 'body';
}

export function createObservabilityService(deps: ObservabilityServiceDeps) {
  const { db, clock, forwarder } = deps;

  return {
    async settings(): Promise<CollectorSettings> {
      const settings = await readSettings(db);
      if (!settings) throw notConfigured();
      return settings;
    },

    /**
     * Replaces the settings. Enabling (from absent or disabled) starts forwarding from now; an
     * enabled collector whose URL or secret changes keeps its cursors; disabling stops forwarding
     * (events meanwhile are not forwarded later). Every replica's forwarder re-reads the row.
     */
    async update(body: CollectorSettingsBody): Promise<CollectorSettings> {
      // An empty secret means unsigned, as when absent (content/api/observability.md).
      const secret = body.secret === '' ? undefined : body.secret;
      const checked = await checkWebhook(
        { url: body.url, ...(secret === undefined ? {} : { secret }), headers: body.headers },
        deps.webhookSettings,
        { lookup: deps.lookup },
      );
      if (!checked.registered) {
        throw new ProblemError('invalid_request', `The observability webhook is refused: ${checked.error}`, {
          extensions: { errors: [{ field: fieldOf(checked.error), message: checked.error }] },
        });
      }
      const headers = checked.webhook.headers;
      const enabled = body.enabled ?? true;
      const now = new Date(clock.now());
      await db.transaction(async (trx) => {
        const before = await readSettings(trx);
        await writeSettings(
          trx,
          { url: checked.webhook.url, secret: checked.webhook.secret ?? null, enabled, headers },
          now,
        );
        if (enabled && !before?.enabled) await restartForwarding(trx, await databaseNow(trx), now);
        if (!enabled && before?.enabled) await restartForwarding(trx, null, now);
      });
      forwarder.settingsChanged();
      return (await readSettings(db)) as CollectorSettings;
    },

    /** Removes the settings; forwarding stops on every replica. Counters and the DLQ stay. */
    async remove(): Promise<void> {
      const now = new Date(clock.now());
      const removed = await db.transaction(async (trx) => {
        const gone = await deleteSettings(trx);
        if (gone) await restartForwarding(trx, null, now);
        return gone;
      });
      if (!removed) throw notConfigured();
      forwarder.settingsChanged();
    },

    async status(): Promise<ForwarderStatus> {
      const [settings, state, parked] = await Promise.all([readSettings(db), readState(db), countParked(db)]);
      return { settings, state, parked };
    },

    /** A page of parked batches: at most `limit`, fewer when their events pass DLQ_PAGE_BYTES. */
    async parked(options: { after?: number; limit: number }) {
      const [page, totals] = await Promise.all([
        listParked(db, { after: options.after, limit: options.limit }),
        countParked(db),
      ]);
      return {
        items: page.batches,
        next: page.more ? page.batches.at(-1)?.id : undefined,
        totals,
      };
    },

    clearParked(): Promise<{ batches: number; events: number }> {
      return clearParked(db, new Date(clock.now()));
    },

    /**
     * Posts parked batches again (one attempt each, `workers` at once, same batch ids): each one
     * delivered leaves the DLQ and counts as forwarded; each failure stays with its new error.
     * The batches are claimed before anything is posted, so a redrive running at the same time (on
     * this replica or another) never sends them too, and each answer reports only what its own
     * redrive sent: the no-body form takes the oldest batches nobody holds; named batch ids that
     * another redrive holds are a 409 and nothing is sent.
     */
    async redrive(batchIds?: string[]): Promise<{ outcomes: RedriveOutcome[]; remaining: number }> {
      const collector = await readSettings(db);
      if (!collector) {
        throw new ProblemError(
          'conflict',
          'No observability webhook is configured: there is nowhere to redrive to.',
        );
      }
      if (!collector.enabled) {
        throw new ProblemError(
          'conflict',
          'The observability webhook is disabled; enable it before redriving parked batches.',
        );
      }
      const workers = Math.max(1, forwarder.workers);
      const now = clock.now();
      // Long enough for every post this redrive may make (each bounded by http_timeout, `workers`
      // at once), plus a minute for the database: a redrive that died frees its batches then.
      const rounds = Math.ceil((batchIds?.length ?? MAX_REDRIVE_BATCHES) / workers);
      const claim = {
        by: `${forwarder.replicaId}/${newId('redrive')}`,
        now: new Date(now),
        until: new Date(now + rounds * forwarder.httpTimeoutMs + CLAIM_MARGIN_MS),
      };
      // Chosen without their events; each batch's events are read when a worker posts it, so a
      // redrive holds at most `workers` batches in memory, not a hundred.
      let batches: ParkedHead[];
      if (batchIds) {
        const claimed = await claimParkedByIds(db, claim, batchIds);
        if (claimed.missing.length > 0) {
          throw new ProblemError(
            'not_found',
            `No parked batch has the id ${JSON.stringify(claimed.missing[0]?.slice(0, 64))}; nothing was redriven.`,
          );
        }
        if (claimed.held.length > 0) {
          throw new ProblemError(
            'conflict',
            `The parked batch ${JSON.stringify(claimed.held[0])} is being redriven by another request now; nothing was redriven.`,
            {
              resolution:
                'Wait for that redrive to answer, then list the DLQ again: what it delivered is gone.',
            },
          );
        }
        batches = claimed.claimed;
      } else {
        batches = await claimParked(db, claim, MAX_REDRIVE_BATCHES);
      }
      const outcomes: RedriveOutcome[] = [];
      let next = 0;
      const work = async () => {
        while (next < batches.length) {
          const head = batches[next++] as ParkedHead;
          const batch = await readParked(db, head.id);
          if (!batch) {
            // Only once this redrive's claim ran out: another redrive or a clear took the batch.
            outcomes.push({
              batchId: head.batchId,
              events: head.eventCount,
              delivered: false,
              statusCode: null,
              error: 'the batch left the dead-letter queue meanwhile (cleared or redriven)',
            });
            continue;
          }
          const result = await forwarder.client.post(batch, collector, new Date(clock.now()));
          const at = new Date(clock.now());
          if (result.error === null) {
            // The collector took it: delivered, whether or not this redrive still held it.
            await redriveDelivered(db, batch, claim.by, at);
            outcomes.push({
              batchId: batch.batchId,
              events: batch.eventCount,
              delivered: true,
              statusCode: result.statusCode,
              error: null,
            });
          } else {
            await redriveFailed(
              db,
              batch,
              claim.by,
              { error: result.error, statusCode: result.statusCode },
              at,
            );
            outcomes.push({
              batchId: batch.batchId,
              events: batch.eventCount,
              delivered: false,
              statusCode: result.statusCode,
              error: result.error,
            });
          }
        }
      };
      try {
        await Promise.all(Array.from({ length: Math.min(workers, batches.length) }, work));
      } finally {
        // Whatever is still held (a worker failed on the database) is free for the next redrive.
        if (batches.length > 0) await releaseClaims(db, claim.by);
      }
      const order = new Map(batches.map((batch, index) => [batch.batchId, index]));
      outcomes.sort((a, b) => (order.get(a.batchId) ?? 0) - (order.get(b.batchId) ?? 0));
      return { outcomes, remaining: (await countParked(db)).batches };
    },
  };
}

export type ObservabilityService = ReturnType<typeof createObservabilityService>;
