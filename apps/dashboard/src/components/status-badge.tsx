/** How a status reads at a glance: the colour class of each execution and node status. */
const KIND: Record<string, 'ok' | 'warn' | 'bad' | 'info' | 'idle'> = {
  succeeded: 'ok',
  delivered: 'ok',
  ready: 'ok',
  active: 'ok',
  healthy: 'ok',
  running: 'info',
  starting: 'info',
  queued: 'idle',
  delivering: 'info',
  pending: 'idle',
  waiting: 'warn',
  degraded: 'warn',
  stopping: 'warn',
  draining: 'warn',
  failed: 'bad',
  dead: 'bad',
  timeout: 'bad',
  offline: 'bad',
  unhealthy: 'bad',
  cancelled: 'idle',
  stopped: 'idle',
};

/** A status as a coloured pill; the word itself is always shown, colour only supports it. */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge ${KIND[status] ?? 'idle'}`}>{status}</span>;
}
