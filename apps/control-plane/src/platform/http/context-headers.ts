import { ProblemError } from '@switchyard/shared';

/** The context headers that execute and memory requests may carry (X-Workflow-ID, X-Session-ID, ...), plus the caller's node, as agent SDKs send them. */
export interface CallerContext {
  workflowId?: string;
  runId?: string;
  parentExecutionId?: string;
  sessionId?: string;
  actorId?: string;
  callerNodeId?: string;
}

const HEADERS = {
  workflowId: 'x-workflow-id',
  runId: 'x-run-id',
  parentExecutionId: 'x-parent-execution-id',
  sessionId: 'x-session-id',
  actorId: 'x-actor-id',
  callerNodeId: 'x-agent-node-id',
} as const;

// Visible ASCII and spaces, up to 256 characters: these values are stored, shown and sent on to
// agents as headers again, so anything else would be a trap further down the line.
const VALUE = /^[\x20-\x7e]{1,256}$/;

/** Reads the context headers; a malformed one is a 400 naming the header. */
export function readCallerContext(get: (name: string) => string): CallerContext {
  const context: CallerContext = {};
  const errors: Array<{ field: string; message: string }> = [];
  for (const [key, header] of Object.entries(HEADERS) as Array<[keyof CallerContext, string]>) {
    const value = get(header).trim();
    if (value === '') continue;
    if (!VALUE.test(value))
      errors.push({ field: `header ${header}`, message: 'use 1 to 256 printable ASCII characters' });
    else context[key] = value;
  }
  if (errors.length > 0) {
    throw new ProblemError(
      'invalid_request',
      `Invalid context header: ${errors.map((e) => e.field).join(', ')}.`,
      {
        extensions: { errors },
      },
    );
  }
  return context;
}
