import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import { timeInRange } from '../../platform/http/timestamps.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { type ExecutionRow, type ExecutionStatus, iso, statusRecord } from './records.ts';
import { findExecutions, listExecutions, workflowExecutions, workflowPayloads } from './repository.ts';
import type { BatchStatusRecordsSchema, DagSchema, ExecutionListSchema } from './responses.ts';
import { ExecutionIdSchema } from './schemas.ts';

/** Largest result a list record carries; larger ones say `result_truncated` (GET by id has it). */
export const LIST_RESULT_BYTES = 64 * 1024;
/** Largest result a batch-status record carries (100 ids at most: 25 MiB in all). */
export const BATCH_RESULT_BYTES = 256 * 1024;

/** The most bytes of records one list page carries (the page ends early, with a cursor). */
export const LIST_ANSWER_BYTES = 4 * 1024 * 1024;

/** Largest DAG answered in one piece; bigger workflows say `truncated: true`. */
export const MAX_DAG_NODES = 20_000;

/** Keyset cursor of the execution list: base64url of `<created_at ISO>|<execution id>`. */
export function encodeCursor(row: ExecutionRow): string {
  return Buffer.from(`${iso(row.created_at)}|${row.execution_id}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = timeInRange(at ?? '');
  if (!id || !ExecutionIdSchema.safeParse(id).success || !createdAt) {
    throw new ProblemError(
      'invalid_request',
      'The cursor is not one this server handed out; start again without it.',
      {
        extensions: { errors: [{ field: 'cursor', message: 'not a cursor from a previous page' }] },
      },
    );
  }
  return { createdAt, id };
}

export interface ListQuery {
  status?: ExecutionStatus;
  target?: string;
  workflow_id?: string;
  node_id?: string;
  since?: Date;
  limit: number;
  cursor?: string;
}

/** Reads, for people and dashboards: the list, batches of records, workflow DAGs and their payloads. */
export function createExecutionQueries(db: Knex) {
  return {
    async list(query: ListQuery): Promise<ResponseBody<typeof ExecutionListSchema>> {
      const rows = await listExecutions(db, {
        status: query.status,
        target: query.target,
        workflowId: query.workflow_id,
        nodeId: query.node_id,
        since: query.since,
        before: query.cursor ? decodeCursor(query.cursor) : undefined,
        limit: query.limit,
        maxResultBytes: LIST_RESULT_BYTES,
      });
      // A page ends early once its records pass LIST_ANSWER_BYTES: results may be megabytes each.
      const page: ExecutionRow[] = [];
      let bytes = 0;
      for (const row of rows.slice(0, query.limit)) {
        if (page.length > 0 && bytes > LIST_ANSWER_BYTES) break;
        page.push(row);
        bytes +=
          JSON.stringify(row.result ?? null).length + JSON.stringify(row.error_details ?? null).length + 1024;
      }
      const last = page[page.length - 1];
      const more = rows.length > page.length;
      return {
        executions: page.map(statusRecord),
        next_cursor: more && last ? encodeCursor(last) : null,
      };
    },

    /** Records keyed by id; ids that name no execution are left out. */
    async batch(ids: string[]): Promise<ResponseBody<typeof BatchStatusRecordsSchema>> {
      const rows = await findExecutions(db, [...new Set(ids)], BATCH_RESULT_BYTES);
      const found: ResponseBody<typeof BatchStatusRecordsSchema> = {};
      for (const row of rows) found[row.execution_id] = statusRecord(row);
      return found;
    },

    /**
     * The workflow's executions as nodes, and parent → child edges between executions of the
     * same workflow. One indexed read of narrow rows: a 10,000-execution workflow is one query.
     */
    async dag(workflowId: string): Promise<ResponseBody<typeof DagSchema>> {
      const rows = await workflowExecutions(db, workflowId, MAX_DAG_NODES);
      if (rows.length === 0) {
        throw new ProblemError(
          'not_found',
          `No execution belongs to workflow "${workflowId.slice(0, 200)}".`,
        );
      }
      const page = rows.slice(0, MAX_DAG_NODES);
      const ids = new Set(page.map((r) => r.execution_id as string));
      const nodes = page.map((r) => ({
        execution_id: r.execution_id as string,
        parent_execution_id: (r.parent_execution_id as string | null) ?? null,
        node_id: r.node_id as string,
        target: r.target as string,
        status: r.status as ExecutionStatus,
        duration_ms: r.duration_ms === null ? null : Math.round(r.duration_ms as number),
        depth: r.depth as number,
        started_at: iso(r.started_at),
        completed_at: iso(r.completed_at),
      }));
      const edges = nodes
        .filter((n) => n.parent_execution_id !== null && ids.has(n.parent_execution_id))
        .map((n) => ({ from: n.parent_execution_id as string, to: n.execution_id }));
      return {
        workflow_id: workflowId,
        run_id: page[0]?.run_id as string,
        depth: nodes.reduce((max, n) => Math.max(max, n.depth), 0),
        total_nodes: nodes.length,
        truncated: rows.length > MAX_DAG_NODES,
        nodes,
        edges,
      };
    },

    /**
     * The function name, input, result and error of the workflow's first `limit` executions
     * (the DAG's order), keyed by execution id: input and result as pretty JSON, each text cut to
     * at most `chars + 1` characters in the database so the caller can tell a cut one.
     */
    async payloads(workflowId: string, options: { chars: number; limit: number }) {
      const rows = await workflowPayloads(db, workflowId, options.chars, options.limit);
      const byId = new Map<string, ExecutionPayload>();
      for (const row of rows) {
        byId.set(row.execution_id, {
          function_name: row.function_name,
          input: row.input_text,
          result: row.result_text,
          error: row.error_text,
        });
      }
      return byId;
    },
  };
}

/** What one execution took and gave, as text cut in the database (see ExecutionQueries.payloads). */
export interface ExecutionPayload {
  function_name: string;
  /** Pretty JSON; null only for a row without one (never for input). */
  input: string | null;
  /** Pretty JSON of the result; null while there is none. */
  result: string | null;
  error: string | null;
}

export type ExecutionQueries = ReturnType<typeof createExecutionQueries>;
