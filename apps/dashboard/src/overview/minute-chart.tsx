import type { Overview } from './overview-query.ts';

type Minute = Overview['executions']['per_minute'][number];

const WIDTH = 600;
const HEIGHT = 120;

/**
 * Executions finished per minute over the window, failures stacked on successes. A few SVG
 * rectangles: a chart library would be the largest dependency of the page for one bar chart.
 * Each bar carries its numbers in a <title> (hover), and the figure a text summary.
 */
export function MinuteChart({ minutes }: { minutes: Minute[] }) {
  const peak = Math.max(1, ...minutes.map((m) => m.succeeded + m.failed + m.cancelled));
  const slot = WIDTH / Math.max(1, minutes.length);
  const total = minutes.reduce((sum, m) => sum + m.succeeded + m.failed + m.cancelled, 0);
  const failed = minutes.reduce((sum, m) => sum + m.failed, 0);
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`Executions finished per minute over the last hour: ${total} in all, ${failed} failed.`}
      >
        {minutes.map((m, index) => {
          const ok = ((m.succeeded + m.cancelled) / peak) * HEIGHT;
          const bad = (m.failed / peak) * HEIGHT;
          const x = index * slot + 1;
          const time = new Date(m.minute).toLocaleTimeString(undefined, {
            hour: '2-digit',
            minute: '2-digit',
          });
          return (
            <g key={m.minute}>
              <title>{`${time}: ${m.started} started, ${m.succeeded} succeeded, ${m.failed} failed, ${m.cancelled} cancelled`}</title>
              <rect className="bar-hit" x={x - 1} y={0} width={slot} height={HEIGHT} />
              <rect className="bar-ok" x={x} y={HEIGHT - ok - bad} width={slot - 2} height={ok} />
              <rect className="bar-bad" x={x} y={HEIGHT - bad} width={slot - 2} height={bad} />
            </g>
          );
        })}
      </svg>
      <figcaption className="muted">
        Finished per minute, last hour (failures in red); hover a bar for its numbers.
      </figcaption>
    </figure>
  );
}
