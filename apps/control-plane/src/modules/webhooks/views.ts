import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { Attempt, Delivery } from './repository.ts';
import type { AttemptSchema, DeliverySchema } from './responses.ts';

/**
 * A delivery as the API shows it. Never the secret (only whether deliveries are signed), and only
 * the names of the custom headers: their values often carry the receiver's own credentials.
 */
export function deliveryView(delivery: Delivery): ResponseBody<typeof DeliverySchema> {
  return {
    delivery_id: delivery.deliveryId,
    execution_id: delivery.executionId,
    event: delivery.event,
    url: delivery.url,
    signed: delivery.secret !== null,
    header_names: Object.keys(delivery.headers),
    status: delivery.status,
    attempt_count: delivery.attempts,
    manual: delivery.manual,
    next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt : null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    created_at: delivery.createdAt,
    updated_at: delivery.updatedAt,
    delivered_at: delivery.deliveredAt,
    dead_at: delivery.deadAt,
  };
}

export function attemptView(attempt: Attempt): ResponseBody<typeof AttemptSchema> {
  return {
    attempt: attempt.attempt,
    manual: attempt.manual,
    started_at: attempt.startedAt,
    duration_ms: attempt.durationMs,
    status_code: attempt.statusCode,
    error: attempt.error,
    response_body: attempt.responseBody,
  };
}
