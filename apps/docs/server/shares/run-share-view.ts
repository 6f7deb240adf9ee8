import { RUN_BUNDLE_LIMITS } from '../../contract/site-contract.ts';
import { displayTitle, type RunNode, type RunShare } from './run-bundle.ts';
import { layoutRunGraph, MAX_GRAPH_NODES, type RunGraphView, statusMark } from './run-graph.ts';

/**
 * What the permalink page of a share shows, worked out here so the Astro page is markup only.
 * Every value is display text: nothing the page prints is `null`, `undefined` or raw JSON.
 */
export interface RunShareView {
  title: string;
  /** False when the title was made from the workflow id (the bundle has none). */
  titled: boolean;
  /** The page's meta description. */
  description: string;
  workflowId: string;
  generatedAt: string;
  publishedAt: string;
  /** The permalink, for the "as JSON" hint. */
  url: string;
  totals: Array<{ label: string; value: string }>;
  nodes: NodeView[];
  /** Whether any node reported a cost or a model (the columns are left out otherwise). */
  showCost: boolean;
  showModel: boolean;
  edges: Array<{ from: EdgeEnd; to: EdgeEnd }>;
  /** The run drawn as a graph; undefined without executions or above the size drawn. */
  graph?: RunGraphView;
  /** Why there is no graph although the run has executions. */
  graphOmitted?: string;
}

export interface NodeView {
  /** Fragment id of the node's row. */
  anchor: string;
  executionId: string;
  agent: string;
  func: string;
  status: string;
  /** A mark for the status (✓, ✗, …), so it reads without colour. */
  mark: string;
  /** True while the execution has not reached a final status. */
  inProgress: boolean;
  started: string;
  duration: string;
  cost: string;
  model: string;
  input?: string;
  output?: string;
  error?: string;
  /** The executions that called this one and those it called, for its section. */
  calledBy: EdgeEnd[];
  calls: EdgeEnd[];
}

export interface EdgeEnd {
  anchor: string;
  executionId: string;
  /** `agent.function` of the node, or the id alone for an end that names no node. */
  label: string;
}

const NOT_REPORTED = '—';
const IN_PROGRESS = new Set(['queued', 'pending', 'running', 'waiting']);
/** Longest preview text shown; the rest stays in the bundle (JSON permalink). */
const MAX_SHOWN_PREVIEW = RUN_BUNDLE_LIMITS.preview;
const CLIPPED = '\n… [clipped on this page; the full value is in the JSON permalink]';

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return NOT_REPORTED;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return NOT_REPORTED;
  // Model calls cost fractions of a cent: keep four decimals below a dollar.
  return `$${usd.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: usd < 1 ? 4 : 2 })}`;
}

function formatTime(iso: string | undefined): string {
  if (!iso) return NOT_REPORTED;
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC');
}

function totalLabel(key: string): string {
  if (key === 'cost_usd') return 'Cost (USD)';
  const words = key.replace(/_(ms|usd)$/, '').replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function formatTotal(key: string, value: number | null): string {
  if (value === null) return NOT_REPORTED;
  if (key.endsWith('_ms')) return formatDuration(value);
  if (key.endsWith('_usd')) return formatCost(value);
  return value.toLocaleString('en');
}

function clip(text: string): string {
  return text.length > MAX_SHOWN_PREVIEW ? `${text.slice(0, MAX_SHOWN_PREVIEW)}${CLIPPED}` : text;
}

/**
 * A preview as text: text as sent, other JSON pretty-printed. Indentation grows with depth, so a
 * large nested value is shown compact (and clipped) rather than pretty-printed into megabytes.
 * Empty text means no preview (the CLI sends "" when there is none).
 */
export function previewText(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string') return clip(value);
  const compact = JSON.stringify(value);
  if (compact.length > MAX_SHOWN_PREVIEW) return clip(compact);
  return clip(JSON.stringify(value, null, 2));
}

/** The agent and function of a node: the CLI's agent (node id) and the rest of the target. */
function agentAndFunction(node: RunNode): { agent: string; func: string } {
  if (node.node_id && node.target.startsWith(`${node.node_id}.`)) {
    return { agent: node.node_id, func: node.target.slice(node.node_id.length + 1) };
  }
  if (node.node_id) return { agent: node.node_id, func: node.target };
  const dot = node.target.indexOf('.');
  if (dot <= 0) return { agent: NOT_REPORTED, func: node.target };
  return { agent: node.target.slice(0, dot), func: node.target.slice(dot + 1) };
}

/**
 * A fragment id from an execution id; an id with characters a fragment would have to escape
 * falls back to the row number (a prefix no execution anchor has, so the two never collide).
 */
function anchorOf(executionId: string, index: number): string {
  return /^[\w.:-]+$/.test(executionId) ? `node-${executionId}` : `row-${index + 1}`;
}

function nodeView(node: RunNode, index: number): NodeView {
  const { agent, func } = agentAndFunction(node);
  const inProgress = IN_PROGRESS.has(node.status);
  const view: NodeView = {
    anchor: anchorOf(node.execution_id, index),
    executionId: node.execution_id,
    agent,
    func,
    status: node.status,
    mark: statusMark(node.status),
    inProgress,
    started: formatTime(node.started_at),
    duration:
      node.duration_ms === null || node.duration_ms === undefined
        ? inProgress
          ? 'in progress'
          : NOT_REPORTED
        : formatDuration(node.duration_ms),
    cost: formatCost(node.cost_usd),
    model: node.model || NOT_REPORTED,
    calledBy: [],
    calls: [],
  };
  const input = previewText(node.input_preview);
  const output = previewText(node.output_preview);
  const error = node.error_message ? clip(node.error_message) : undefined;
  if (input !== undefined) view.input = input;
  if (output !== undefined) view.output = output;
  if (error !== undefined) view.error = error;
  return view;
}

/** Builds the view of a stored share for its permalink page. */
export function runShareView(share: RunShare): RunShareView {
  const { bundle } = share;
  const nodes = bundle.nodes.map(nodeView);
  const byId = new Map(nodes.map((node) => [node.executionId, node]));
  const end = (executionId: string): EdgeEnd => {
    const node = byId.get(executionId);
    return {
      anchor: node?.anchor ?? '',
      executionId,
      label: node ? (node.agent === NOT_REPORTED ? node.func : `${node.agent}.${node.func}`) : executionId,
    };
  };
  const edges = bundle.edges.map((edge) => ({ from: end(edge.from), to: end(edge.to) }));
  for (const edge of edges) {
    byId.get(edge.from.executionId)?.calls.push(edge.to);
    byId.get(edge.to.executionId)?.calledBy.push(edge.from);
  }
  const graph = layoutRunGraph(nodes, bundle.edges);
  const statusCounts = new Map<string, number>();
  for (const node of bundle.nodes) statusCounts.set(node.status, (statusCounts.get(node.status) ?? 0) + 1);
  const counts = [...statusCounts].map(([status, count]) => `${count} ${status}`).join(', ');
  return {
    title: displayTitle(bundle),
    titled: bundle.title !== undefined,
    description: `Workflow ${bundle.workflow_id}: ${bundle.nodes.length} executions, ${counts || 'no executions'}.`,
    workflowId: bundle.workflow_id,
    generatedAt: formatTime(bundle.generated_at),
    publishedAt: formatTime(share.created_at),
    url: share.url,
    totals: Object.entries(bundle.totals).map(([key, value]) => ({
      label: totalLabel(key),
      value: formatTotal(key, value),
    })),
    nodes,
    showCost: bundle.nodes.some((node) => typeof node.cost_usd === 'number'),
    showModel: bundle.nodes.some((node) => typeof node.model === 'string' && node.model !== ''),
    edges,
    ...(graph ? { graph } : {}),
    ...(!graph && nodes.length > MAX_GRAPH_NODES
      ? {
          graphOmitted: `The run has ${nodes.length.toLocaleString('en')} executions; runs of up to ${MAX_GRAPH_NODES} are drawn as a graph. Each execution is listed below.`,
        }
      : {}),
  };
}
