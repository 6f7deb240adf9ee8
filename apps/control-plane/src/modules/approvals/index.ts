/**
 * Human approvals: executions paused for a reviewer's decision (request-approval, approval-status,
 * the decision webhook, the list), the decision's way back to the agent (a durable, retried
 * callback), and the expiry sweep. Other features reach it only through this file.
 */
export { APPROVAL_CALLBACKS_TOPIC } from './callbacks.ts';
export { approvalsOpenApi } from './openapi.ts';
export { approvalsRouter } from './routes.ts';
export { type ApprovalRuntime, createApprovalRuntime } from './runtime.ts';
export {
  DecisionSchema,
  encodeCursor as encodeApprovalCursor,
  ListQuerySchema as ApprovalListQuerySchema,
} from './schemas.ts';
export type { ApprovalService } from './service.ts';
export { type ApprovalSettings, approvalSettings } from './settings.ts';
export { decisionSignature } from './signing.ts';
export { approvalView } from './views.ts';
