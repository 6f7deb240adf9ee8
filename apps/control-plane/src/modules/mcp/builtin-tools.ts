import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ProblemError } from '@switchyard/shared';
import { z } from 'zod';
import type { CallerContext } from '../../platform/http/context-headers.ts';
import { parseWith } from '../../platform/http/request-body.ts';
import {
  ApprovalListQuerySchema,
  type ApprovalService,
  approvalView,
  DecisionSchema,
  encodeApprovalCursor,
} from '../approvals/index.ts';
import { DiscoveryQuerySchema, type DiscoveryService } from '../discovery/index.ts';
import {
  acknowledgement,
  type ExecutionRow,
  type ExecutionService,
  isTerminal,
  statusRecord,
  syncResult,
} from '../executions/index.ts';
import { toolAnswer } from './tool-results.ts';

/** Longest a get_execution call waits for an end; a client wanting longer calls again. */
export const MAX_WAIT_SECONDS = 60;

export interface BuiltinToolDeps {
  discovery: DiscoveryService;
  executions: ExecutionService;
  approvals: ApprovalService;
  /** Wakes a waiter when an execution ends on this replica (others are seen by re-reading). */
  onFinished: (id: string, wake: () => void) => () => void;
  /** False when decisions must be signed and no API key guards this endpoint (see decide_approval). */
  decisionsAllowed: () => boolean;
}

/** What one tool call brings: its arguments (validated) and the caller's context headers. */
export interface ToolCall<A> {
  args: A;
  context: CallerContext;
  signal: AbortSignal;
}

interface BuiltinTool<S extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: Tool['annotations'];
  run(call: ToolCall<z.output<S>>): Promise<CallToolResult>;
}

function tool<S extends z.ZodType>(spec: BuiltinTool<S>): BuiltinTool<S> {
  return spec;
}

const TargetArg = z
  .string()
  .min(1)
  .max(420)
  .describe('The function to run: <node_id>.<reasoner_id> or <node_id>.skill:<skill_id>.');
const InputArg = z
  .record(z.string(), z.unknown())
  .default({})
  .describe("The function's input, a JSON object matching its input_schema (see discover_capabilities).");

/** Waits until the execution has ended or paused for a decision, or the deadline passes; polls as a backstop. */
async function settle(
  deps: BuiltinToolDeps,
  id: string,
  waitMs: number,
  signal: AbortSignal,
): Promise<ExecutionRow> {
  const deadline = Date.now() + waitMs;
  let row = await deps.executions.get(id);
  while (!isTerminal(row.status) && row.status !== 'waiting' && Date.now() < deadline && !signal.aborted) {
    // The local wake-up ends the wait at once; an execution ending on another replica is seen by
    // the next read, a quarter of a second later at most.
    let wake: () => void = () => {};
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const unsubscribe = deps.onFinished(id, wake);
    const timer = setTimeout(wake, Math.min(250, Math.max(0, deadline - Date.now())));
    signal.addEventListener('abort', wake, { once: true });
    await woken;
    clearTimeout(timer);
    unsubscribe();
    signal.removeEventListener('abort', wake);
    row = await deps.executions.get(id);
  }
  return row;
}

/**
 * The control plane's own tools: discover what the fleet can do, run a function and follow its
 * execution, and decide what waits for a person. Each one calls the same service as its HTTP
 * endpoint, so a call made here is an ordinary execution: recorded, in its workflow's DAG,
 * counted in the metrics and announced on the event stream.
 */
export function builtinTools(deps: BuiltinToolDeps) {
  return [
    tool({
      name: 'discover_capabilities',
      title: 'Discover agent capabilities',
      description:
        'Lists the agent nodes registered with Switchyard and the functions (reasoners and skills) each serves, with their input schemas and health. Filter by agent id, function id or tag (* wildcards allowed).',
      input: z
        .object({
          agent: z.string().min(1).max(200).optional().describe('An agent (node) id or pattern.'),
          reasoner: z.string().min(1).max(200).optional().describe('A reasoner id or pattern.'),
          skill: z.string().min(1).max(200).optional().describe('A skill id or pattern.'),
          tags: z.array(z.string().min(1).max(100)).max(20).optional().describe('Any of these tags.'),
          health_status: z.enum(['active', 'inactive', 'degraded', 'unknown']).optional(),
          include_input_schema: z.boolean().default(true),
          include_descriptions: z.boolean().default(true),
          limit: z.number().int().min(1).max(500).default(100),
          offset: z.number().int().min(0).max(1_000_000).default(0),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run({ args }) {
        const query = parseWith(
          DiscoveryQuerySchema,
          {
            agent: args.agent,
            reasoner: args.reasoner,
            skill: args.skill,
            tags: args.tags?.join(','),
            health_status: args.health_status,
            include_input_schema: String(args.include_input_schema),
            include_descriptions: String(args.include_descriptions),
            limit: String(args.limit),
            offset: String(args.offset),
          },
          'arguments',
        );
        const answer = await deps.discovery.discover(query);
        return toolAnswer(JSON.parse(answer.body.toString('utf8')));
      },
    }),
    tool({
      name: 'call_function',
      title: 'Call a function and wait for its result',
      description:
        'Runs a function of an agent synchronously and answers its result, within the synchronous timeout (60 s by default). For long work use start_function and get_execution.',
      input: z.object({ target: TargetArg, input: InputArg }).strict(),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      async run({ args, context }) {
        const { row } = await deps.executions.executeSync(args.target, args.input, context);
        return toolAnswer(syncResult(row));
      },
    }),
    tool({
      name: 'start_function',
      title: 'Start a function without waiting',
      description:
        'Queues a function of an agent and answers its execution_id at once; the execution runs without a time limit. Follow it with get_execution; a webhook ({url, secret?, headers?}) is notified when it ends.',
      input: z
        .object({
          target: TargetArg,
          input: InputArg,
          webhook: z
            .record(z.string(), z.unknown())
            .optional()
            .describe('Where to POST the outcome: {url, secret?, headers?}.'),
        })
        .strict(),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      async run({ args, context }) {
        const { row } = await deps.executions.submitAsync(args.target, args.input, args.webhook, context);
        return toolAnswer(acknowledgement(row));
      },
    }),
    tool({
      name: 'get_execution',
      title: 'Read an execution, waiting for it to end',
      description: `Answers an execution's status record (status, result or error, times). With wait_seconds (at most ${MAX_WAIT_SECONDS}) it first waits until the execution ends or pauses for an approval.`,
      input: z
        .object({
          execution_id: z.string().min(1).max(200),
          wait_seconds: z.number().min(0).max(MAX_WAIT_SECONDS).default(0),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run({ args, signal }) {
        const row = await settle(deps, args.execution_id, args.wait_seconds * 1000, signal);
        return toolAnswer(statusRecord(row));
      },
    }),
    tool({
      name: 'list_approvals',
      title: 'List approval requests',
      description:
        'Lists the approval requests of executions paused for a human decision, newest first; by default the pending ones.',
      input: z
        .object({
          status: z
            .enum(['pending', 'approved', 'rejected', 'request_changes', 'expired', 'cancelled'])
            .default('pending'),
          node_id: z.string().min(1).max(200).optional(),
          limit: z.number().int().min(1).max(100).default(20),
          cursor: z.string().min(1).max(1000).optional().describe('next_cursor of the previous page.'),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run({ args }) {
        const query = parseWith(
          ApprovalListQuerySchema,
          { status: args.status, node_id: args.node_id, limit: String(args.limit), cursor: args.cursor },
          'arguments',
        );
        const page = await deps.approvals.list(query);
        return toolAnswer({
          approvals: page.items.map(approvalView),
          next_cursor: page.next ? encodeApprovalCursor(page.next) : null,
        });
      },
    }),
    tool({
      name: 'decide_approval',
      title: 'Decide an approval request',
      description:
        'Approves, rejects or asks for changes on a pending approval request; the paused execution resumes with the decision and the feedback.',
      input: DecisionSchema.extend({}).strict(),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      async run({ args }) {
        if (!deps.decisionsAllowed()) {
          throw new ProblemError(
            'forbidden',
            'Decisions must be signed (approvals.webhook_secret is set) and no API key guards /mcp: decide through the signed webhook, or configure api.auth.api_key.',
          );
        }
        const { request, executionStatus } = await deps.approvals.decide(args);
        return toolAnswer({ ...approvalView(request), execution_status: executionStatus });
      },
    }),
  ];
}

export type BuiltinToolSet = ReturnType<typeof builtinTools>;

/** A tool's MCP description: its input schema as JSON Schema, as the client validates arguments with it. */
export function describeTool(spec: BuiltinToolSet[number]): Tool {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(spec.input, { io: 'input' }) as Record<
    string,
    unknown
  >;
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: schema as Tool['inputSchema'],
    annotations: { title: spec.title, ...spec.annotations },
  };
}
