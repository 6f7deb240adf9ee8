import { Link } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type CSSProperties, useEffect, useMemo, useRef, useState } from 'react';
import { formatDuration } from './duration.ts';
import { barOf, type TimeSpan, ticksOf } from './time-axis.ts';
import { useTickingNow } from './use-ticking-now.ts';
import { type DagNode, TERMINAL } from './workflow-queries.ts';

const ROW_HEIGHT = 40;
/** Room each tick label needs, so labels never overlap however narrow the timeline is. */
const TICK_SPACING_PX = 90;

/** The width of an element, kept current as it resizes. */
function useWidth(element: HTMLElement | null): number {
  const [width, setWidth] = useState(0);
  useEffect(() => {
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => setWidth(entry?.contentRect.width ?? 0));
    observer.observe(element);
    return () => observer.disconnect();
  }, [element]);
  return width;
}

/**
 * One bar per execution from its start to its end on a shared time axis, coloured by status with
 * the status also written in the row; running executions grow to now. Drawn with HTML and CSS
 * rather than a Gantt library: the ones that fit React (gantt-task-react, frappe-gantt, dhtmlx)
 * are project planners (tasks, dependencies, dragging) that bring their own stylesheets or set
 * styles through injected <style> elements, which the Content-Security-Policy refuses, and all
 * this needs is a bar per row. Rows are virtualised, so a 20,000-execution workflow scrolls as
 * smoothly as a small one. Bar offsets go through CSS custom properties set from script (CSSOM,
 * which style-src does not govern).
 */
export function GanttTimeline({ nodes }: { nodes: DagNode[] }) {
  const anyRunning = nodes.some((node) => !TERMINAL.has(node.status) && node.started_at !== null);
  const now = useTickingNow(anyRunning);
  const scroller = useRef<HTMLDivElement>(null);
  const [axisTrack, setAxisTrack] = useState<HTMLSpanElement | null>(null);
  const trackWidth = useWidth(axisTrack);

  const span = useMemo<TimeSpan | undefined>(() => {
    let start = Number.POSITIVE_INFINITY;
    let end = Number.NEGATIVE_INFINITY;
    for (const node of nodes) {
      if (node.started_at === null) continue;
      const began = Date.parse(node.started_at);
      start = Math.min(start, began);
      end = Math.max(
        end,
        node.completed_at ? Date.parse(node.completed_at) : TERMINAL.has(node.status) ? began : now,
      );
    }
    if (!Number.isFinite(start)) return undefined;
    return { start, length: Math.max(end - start, 1) };
  }, [nodes, now]);

  const rows = useVirtualizer({
    count: nodes.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
  });

  if (!span) {
    return (
      <p className="muted">
        No execution of this workflow has started yet: the timeline begins with the first start.
      </p>
    );
  }
  const ticks = ticksOf(span, Math.max(1, Math.floor(trackWidth / TICK_SPACING_PX)));
  return (
    <div className="gantt" data-testid="workflow-timeline">
      <div className="gantt-axis" aria-hidden="true">
        <span className="gantt-label" />
        <span className="gantt-track" ref={setAxisTrack}>
          {ticks.map((tick) => (
            <span key={tick.at} className="gantt-tick" style={{ '--at': tick.at } as CSSProperties}>
              {tick.label}
            </span>
          ))}
        </span>
      </div>
      <div className="gantt-rows" ref={scroller}>
        <ol
          className="gantt-list"
          aria-label="Executions on a time line"
          style={{ height: rows.getTotalSize() }}
        >
          {rows.getVirtualItems().map((item) => {
            const node = nodes[item.index]!;
            return <GanttRow key={node.execution_id} node={node} span={span} now={now} offset={item.start} />;
          })}
        </ol>
      </div>
    </div>
  );
}

function GanttRow({
  node,
  span,
  now,
  offset,
}: {
  node: DagNode;
  span: TimeSpan;
  now: number;
  offset: number;
}) {
  const started = node.started_at ? Date.parse(node.started_at) : undefined;
  const ended = node.completed_at ? Date.parse(node.completed_at) : TERMINAL.has(node.status) ? started : now;
  const bar = started !== undefined && ended !== undefined ? barOf(span, started, ended) : undefined;
  const took =
    node.duration_ms !== null
      ? formatDuration(node.duration_ms)
      : started !== undefined && !TERMINAL.has(node.status)
        ? `${formatDuration(now - started)} so far`
        : 'not started';
  return (
    <li
      className="gantt-row"
      style={{ '--offset': `${offset}px` } as CSSProperties}
      data-execution-id={node.execution_id}
    >
      <Link
        to="/executions/$executionId"
        params={{ executionId: node.execution_id }}
        className="gantt-label"
        title={node.target}
      >
        <span className="gantt-target">{node.target}</span>
        <span className="gantt-status" data-status={node.status}>
          {node.status} · {took}
        </span>
      </Link>
      <span className="gantt-track">
        {bar ? (
          <span
            className="gantt-bar"
            data-status={node.status}
            style={{ '--from': bar.from, '--width': bar.width } as CSSProperties}
          />
        ) : null}
      </span>
    </li>
  );
}
