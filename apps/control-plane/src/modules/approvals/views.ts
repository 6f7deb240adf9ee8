import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { ApprovalRequest } from './repository.ts';
import type { ApprovalSchema, WaitingSchema } from './responses.ts';

/**
 * An approval request as the API shows it (approval-status, the list, the decision's answer).
 * `decision` repeats the status once the request is resolved by a decision or expiry; `callback`
 * is the decision's delivery to the agent, null when the agent gave no callback_url (it polls).
 */
export function approvalView(request: ApprovalRequest): ResponseBody<typeof ApprovalSchema> {
  const { status } = request;
  return {
    approval_request_id: request.approvalRequestId,
    execution_id: request.executionId,
    node_id: request.nodeId,
    target: request.target,
    status: request.status,
    decision: status === 'pending' || status === 'cancelled' ? null : status,
    feedback: request.feedback,
    approval_request_url: request.approvalRequestUrl,
    requested_at: request.requestedAt,
    expires_at: request.expiresAt,
    decided_at: request.decidedAt,
    callback:
      request.callbackUrl === null
        ? null
        : {
            url: request.callbackUrl,
            status: request.callbackStatus,
            attempts: request.callbackAttempts,
            last_status_code: request.callbackLastStatusCode,
            last_error: request.callbackLastError,
            next_attempt_at: request.callbackNextAttemptAt,
            delivered_at: request.callbackDeliveredAt,
          },
  };
}

/** The answer to request-approval: the execution now waits for this request. */
export function waitingView(request: ApprovalRequest): ResponseBody<typeof WaitingSchema> {
  return {
    execution_id: request.executionId,
    status: 'waiting' as const,
    approval_request_id: request.approvalRequestId,
    approval_request_url: request.approvalRequestUrl,
    expires_at: request.expiresAt,
  };
}
