import { formatDuration } from './duration.ts';

export interface TimeSpan {
  /** Epoch ms of the axis's left edge: the earliest start. */
  start: number;
  /** Length of the axis in ms (at least 1). */
  length: number;
}

export interface Tick {
  /** Share of the axis from its left edge, 0 to 1. */
  at: number;
  label: string;
}

/** Tick steps of 1, 2 and 5 times a power of ten, in ms. */
function niceStep(roughMs: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(roughMs, 1)));
  for (const factor of [1, 2, 5, 10]) if (power * factor >= roughMs) return power * factor;
  return power * 10;
}

/** About `count` evenly spaced ticks at round offsets from the start ("+0 ms", "+2 s", …). */
export function ticksOf(span: TimeSpan, count: number): Tick[] {
  const step = niceStep(span.length / Math.max(count, 1));
  const ticks: Tick[] = [];
  for (let offset = 0; offset <= span.length; offset += step) {
    ticks.push({ at: offset / span.length, label: offset === 0 ? '0' : `+${formatDuration(offset)}` });
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
