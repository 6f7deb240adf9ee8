/** Human approvals: executions paused for a reviewer's decision, and the decision's way back to the agent. */
export { type ApprovalSettings, approvalSettings } from './settings.ts';
