import { durationSetting, integerSetting } from '@switchyard/shared/settings';
import { setting } from '../../platform/config/setting.ts';

/**
 * The execution queue (config `execution_queue:`). The section's `webhook_*` keys (the settings reference puts
 * them here) are declared by the webhooks module and merged into this section in config.ts.
 */
export const executionQueueSettings = {
  syncTimeoutMs: setting({
    key: 'execution_queue.sync_timeout',
    env: 'SWITCHYARD_EXECUTION_QUEUE_SYNC_TIMEOUT',
    schema: durationSetting(),
    default: '60s',
    fromDatabase: true,
    meaning: 'Longest wait of POST /api/v1/execute/{target} for its result.',
  }),
  queueSize: setting({
    key: 'execution_queue.queue_size',
    env: 'SWITCHYARD_EXECUTION_QUEUE_QUEUE_SIZE',
    schema: integerSetting(1, 1_000_000),
    default: 10000,
    fromDatabase: true,
    meaning: 'Queued executions before async submissions are answered 429.',
  }),
  dispatchConcurrency: setting({
    key: 'execution_queue.dispatch_concurrency',
    env: 'SWITCHYARD_EXECUTION_QUEUE_DISPATCH_CONCURRENCY',
    schema: integerSetting(1, 10_000),
    default: 64,
    fromDatabase: true,
    meaning: 'Async executions each replica forwards to agents at once.',
  }),
  maxConcurrentPerNode: setting({
    key: 'execution_queue.max_concurrent_per_node',
    env: 'SWITCHYARD_EXECUTION_QUEUE_MAX_CONCURRENT_PER_NODE',
    schema: integerSetting(1, 10_000),
    default: 32,
    fromDatabase: true,
    meaning:
      "Async calls each replica has open to one node at once; keep it below dispatch_concurrency so a node that stops answering cannot hold every slot and stall the other nodes' executions.",
  }),
  answerTimeoutMs: setting({
    key: 'execution_queue.answer_timeout',
    env: 'SWITCHYARD_EXECUTION_QUEUE_ANSWER_TIMEOUT',
    schema: durationSetting({ min: 1000 }),
    default: '10m',
    fromDatabase: true,
    meaning:
      'An async call the agent has neither answered (its result, or 202 to work on in the background) nor reported on for this long ends as timeout; once it answers 202 or reports, only max_silence applies.',
  }),
  orphanGraceMs: setting({
    key: 'execution_queue.orphan_grace',
    env: 'SWITCHYARD_EXECUTION_QUEUE_ORPHAN_GRACE',
    schema: durationSetting(),
    default: '2m',
    fromDatabase: true,
    meaning:
      'After a replica stops, how long an execution it had sent but the agent had not acknowledged waits for the agent to report before it is sent again; set it above your longest function.',
  }),
  maxSilenceMs: setting({
    key: 'execution_queue.max_silence',
    env: 'SWITCHYARD_EXECUTION_QUEUE_MAX_SILENCE',
    schema: durationSetting({ min: 0 }),
    default: '24h',
    fromDatabase: true,
    meaning:
      'An execution an agent took (202) with no report from it for this long becomes timeout (its callback was lost); progress reports reset it; 0 disables.',
  }),
};
