import type { Knex } from 'knex';
import { Counter, Gauge, type Registry } from 'prom-client';
import { countDeadLetters } from './repository.ts';

/**
 * The webhook metrics, registered on the app's registry. A second dispatcher on the same registry
 * (tests run two replicas in one process) shares the first one's series instead of failing.
 */
export function createWebhookMetrics(registry: Registry, db: Knex) {
  const existing = <T>(name: string) => registry.getSingleMetric(name) as T | undefined;
  const registers = [registry];
  return {
    attemptsTotal:
      existing<Counter<'result'>>('service_webhook_attempts_total') ??
      new Counter({
        name: 'service_webhook_attempts_total',
        help: 'Webhook delivery attempts by result (success: a 2xx answer; failure: anything else).',
        labelNames: ['result'] as const,
        registers,
      }),
    deliveriesTotal:
      existing<Counter<'outcome'>>('service_webhook_deliveries_total') ??
      new Counter({
        name: 'service_webhook_deliveries_total',
        help: 'Webhook deliveries finished, by outcome (delivered, or dead: moved to the dead-letter queue).',
        labelNames: ['outcome'] as const,
        registers,
      }),
    deadLetters:
      existing<Gauge>('service_webhook_dead_letters') ??
      new Gauge({
        name: 'service_webhook_dead_letters',
        help: 'Webhook deliveries in the dead-letter queue (all replicas: read from the database on scrape).',
        registers,
        async collect() {
          try {
            this.set(await countDeadLetters(db));
          } catch {
            // The last value stays: a scrape must not fail because the database is briefly away.
          }
        },
      }),
  };
}

export type WebhookMetrics = ReturnType<typeof createWebhookMetrics>;
