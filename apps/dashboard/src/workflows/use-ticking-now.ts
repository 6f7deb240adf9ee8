import { useEffect, useState } from 'react';

/** The current time, moving every `everyMs` while `ticking`, still otherwise. */
export function useTickingNow(ticking: boolean, everyMs = 1_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [ticking, everyMs]);
  return now;
}
