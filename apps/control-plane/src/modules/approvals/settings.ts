import { durationSetting, optionalTextSetting } from '@switchyard/shared/settings';
import { setting, type ValuesOf } from '../../platform/config/setting.ts';

/** Human approvals (config `approvals:`). */
export const approvalSettings = {
  defaultExpiryMs: setting({
    key: 'approvals.default_expiry',
    env: 'SWITCHYARD_APPROVALS_DEFAULT_EXPIRY',
    schema: durationSetting({ min: 1000 }),
    default: '24h',
    fromDatabase: true,
    meaning: 'How long an approval request stays open when the request names no `expires_in_hours`.',
  }),
  maxExpiryMs: setting({
    key: 'approvals.max_expiry',
    env: 'SWITCHYARD_APPROVALS_MAX_EXPIRY',
    schema: durationSetting({ min: 1000 }),
    default: '720h',
    fromDatabase: true,
    meaning: 'Longest `expires_in_hours` a request may ask for; longer answers 400.',
  }),
  webhookSecret: setting({
    key: 'approvals.webhook_secret',
    env: 'SERVICE_APPROVAL_WEBHOOK_SECRET',
    schema: optionalTextSetting(),
    default: undefined,
    fromDatabase: true,
    meaning:
      'Secret decisions posted to /api/v1/webhooks/approval are signed with (X-Service-Signature over timestamp and body); unset accepts unsigned decisions behind the API key.',
  }),
  webhookToleranceMs: setting({
    key: 'approvals.webhook_tolerance',
    env: 'SWITCHYARD_APPROVALS_WEBHOOK_TOLERANCE',
    schema: durationSetting({ min: 1000 }),
    default: '5m',
    fromDatabase: true,
    meaning: 'How far a signed decision’s X-Service-Timestamp may be from the control plane’s clock.',
  }),
  callbackTimeoutMs: setting({
    key: 'approvals.callback_timeout',
    env: 'SWITCHYARD_APPROVALS_CALLBACK_TIMEOUT',
    schema: durationSetting({ min: 100 }),
    default: '10s',
    fromDatabase: true,
    meaning: 'Timeout of one delivery of a decision to the agent’s `callback_url`.',
  }),
  callbackMaxBackoffMs: setting({
    key: 'approvals.callback_max_backoff',
    env: 'SWITCHYARD_APPROVALS_CALLBACK_MAX_BACKOFF',
    schema: durationSetting({ min: 100 }),
    default: '5m',
    fromDatabase: true,
    meaning:
      'Longest wait between two deliveries of a decision to an agent that does not take it (retries start at 1 s and double until the execution ends).',
  }),
  sweepIntervalMs: setting({
    key: 'approvals.sweep_interval',
    env: 'SWITCHYARD_APPROVALS_SWEEP_INTERVAL',
    schema: durationSetting({ min: 100 }),
    default: '5s',
    fromDatabase: true,
    meaning: 'How often each replica looks for approval requests past their expiry.',
  }),
};

export type ApprovalSettings = ValuesOf<typeof approvalSettings>;
