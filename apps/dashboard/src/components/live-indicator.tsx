import { useLiveConnected } from '../live/live-events.tsx';

/** "Live" while the event streams are open, "Reconnecting…" while they are not. */
export function LiveIndicator() {
  const connected = useLiveConnected();
  return (
    <output className="live" data-state={connected ? 'live' : 'reconnecting'} aria-live="polite">
      {connected ? 'Live' : 'Reconnecting…'}
    </output>
  );
}
