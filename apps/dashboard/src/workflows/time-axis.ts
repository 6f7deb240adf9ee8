export interface TimeSpan {
  /** Epoch ms of the axis's left edge: the earliest start. */
  start: number;
  /** Length of the axis in ms (at least 1). */
  length: number;
}

/** A tick's offset, as short as it can be: "200 ms", "2 s", "1.5 s", "2 min". */
function tickLabel(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Number((ms / 1000).toFixed(2))} s`;
  if (ms < 7_200_000) return `${Number((ms / 60_000).toFixed(1))} min`;
  return `${Number((ms / 3_600_000).toFixed(1))} h`;
}

export interface Tick {
  /** Share of the axis from its left edge, 0 to 1. */
  at: number;
  label: string;
}

const FACTORS = [1, 2, 5, 10];

/** The smallest step of 1, 2 or 5 times a power of ten (ms) at least `roughMs`. */
function niceStepUp(roughMs: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(roughMs, 1)));
  return power * (FACTORS.find((factor) => power * factor >= roughMs) ?? 10);
}

/** The largest such step at most `roughMs`. */
function niceStepDown(roughMs: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(roughMs, 1)));
  return power * ([...FACTORS].reverse().find((factor) => power * factor <= roughMs) ?? 1);
}

/**
 * At most `count` evenly spaced ticks at round offsets from the start ("0", "+200 ms", "+2 s"),
 * and never fewer than two when the span is at least 1 ms long: a lone "0" says nothing.
 */
export function ticksOf(span: TimeSpan, count: number): Tick[] {
  const rough = span.length / Math.max(count, 1);
  const up = niceStepUp(rough);
  const step = up < span.length ? up : niceStepDown(Math.max(rough, 1));
  const ticks: Tick[] = [];
  for (let offset = 0; offset <= span.length; offset += step) {
    ticks.push({ at: offset / span.length, label: offset === 0 ? '0' : `+${tickLabel(offset)}` });
  }
  return ticks;
}

export interface Bar {
  /** Share of the axis where the bar starts and how much of it the bar covers, 0 to 1. */
  from: number;
  width: number;
}

/** Where a run from `started` to `ended` (epoch ms) sits on the axis. */
export function barOf(span: TimeSpan, started: number, ended: number): Bar {
  const from = (started - span.start) / span.length;
  const width = Math.max(0, ended - started) / span.length;
  return { from: Math.min(Math.max(from, 0), 1), width: Math.min(width, 1 - Math.min(Math.max(from, 0), 1)) };
}
