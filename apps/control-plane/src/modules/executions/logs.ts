import { ProblemError } from '@switchyard/shared';
import type { Knex } from 'knex';
import { findUnstorable } from '../../platform/json-storable.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import { findExecution } from './repository.ts';
import type { LogsPageSchema } from './responses.ts';
import type { Note } from './schemas.ts';
import { notFound } from './service.ts';

/** Entries kept per execution; SDK log lines beyond it are refused with 413, not silently dropped. */
export const MAX_LOG_ENTRIES = 10_000;
/** Entries accepted in one request. */
export const MAX_ENTRIES_PER_REQUEST = 1_000;
/** Entries returned in one page. */
export const LOG_PAGE = 500;

type Entry = Record<string, unknown>;

function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The entries of a log post. SDKs send one structured line (an object) or several; some wrap
 * them as `{ "logs": [...] }` or `{ "entries": [...] }` (an object with that one member). Each
 * entry must be an object.
 */
export function entriesOf(body: unknown): Entry[] {
  const wrapped = isEntry(body) && Object.keys(body).length === 1 ? (body.logs ?? body.entries) : undefined;
  const list = Array.isArray(body) ? body : Array.isArray(wrapped) ? wrapped : [body];
  const errors = list.flatMap((entry, index) =>
    isEntry(entry) ? [] : [{ field: `[${index}]`, message: 'each log entry must be a JSON object' }],
  );
  if (body === undefined || errors.length > 0) {
    throw new ProblemError('invalid_request', 'Send a log entry (a JSON object) or an array of them.', {
      extensions: {
        errors: errors.length ? errors.slice(0, 20) : [{ field: '(body)', message: 'required' }],
      },
    });
  }
  if (list.length > MAX_ENTRIES_PER_REQUEST) {
    throw new ProblemError(
      'payload_too_large',
      `Send at most ${MAX_ENTRIES_PER_REQUEST} entries per request (got ${list.length}).`,
    );
  }
  const path = findUnstorable(list);
  if (path) {
    const field = `[${path[0]}]${path
      .slice(1)
      .map((p) => `.${p}`)
      .join('')}`;
    throw new ProblemError('invalid_request', `Log entry ${field} contains U+0000 or a lone surrogate.`, {
      extensions: { errors: [{ field, message: 'contains U+0000 or a lone UTF-16 surrogate' }] },
    });
  }
  return list as Entry[];
}

/**
 * A note as the execution's log keeps it, among the SDK's log lines and awaiter reports:
 * `{ type: "note", message, tags, timestamp, agent_node_id }`, the agent's epoch seconds as ISO time.
 */
function noteEntry(note: Note, receivedAt: Date): Entry {
  return {
    type: 'note',
    message: note.message,
    tags: note.tags ?? [],
    timestamp: (note.timestamp === undefined ? receivedAt : new Date(note.timestamp * 1000)).toISOString(),
    agent_node_id: note.agent_node_id ?? null,
  };
}

/** Execution logs: what SDKs post to `/api/v1/executions/{id}/logs`, kept in order and read back. */
export function createExecutionLogs(deps: { db: Knex; now: () => Date }) {
  return {
    async append(executionId: string, entries: Entry[]): Promise<number> {
      return deps.db.transaction(async (trx: Knex.Transaction) => {
        // Locks the execution row so two concurrent posts cannot both squeeze under the cap.
        const row = await trx('executions')
          .select('execution_id')
          .where({ execution_id: executionId })
          .forUpdate()
          .first();
        if (!row) throw notFound(executionId);
        const have = await trx('execution_logs')
          .where({ execution_id: executionId })
          .count({ n: '*' })
          .first();
        if (Number(have?.n ?? 0) + entries.length > MAX_LOG_ENTRIES) {
          throw new ProblemError(
            'payload_too_large',
            `Execution ${executionId} already holds ${have?.n} log entries; at most ${MAX_LOG_ENTRIES} are kept.`,
          );
        }
        // An empty batch (`[]`, `{"logs":[]}`) is a post like any other with nothing to keep:
        // knex turns an insert of no rows into an empty query, which the database refuses.
        if (entries.length === 0) return 0;
        const at = deps.now();
        await trx('execution_logs').insert(
          entries.map((entry) => ({
            execution_id: executionId,
            entry: JSON.stringify(entry),
            created_at: at,
          })),
        );
        return entries.length;
      });
    },

    /** Keeps an agent's note among the execution's log entries; answers the entry as kept. */
    async note(executionId: string, note: Note): Promise<Entry> {
      const entry = noteEntry(note, deps.now());
      await this.append(executionId, [entry]);
      return entry;
    },

    /** One page of entries after `after` (an entry id), oldest first. */
    async read(
      executionId: string,
      after: number | undefined,
      limit = LOG_PAGE,
    ): Promise<ResponseBody<typeof LogsPageSchema>> {
      if (!(await findExecution(deps.db, executionId))) throw notFound(executionId);
      const query = deps
        .db('execution_logs')
        .select('id', 'entry', 'created_at')
        .where({ execution_id: executionId });
      if (after !== undefined) query.where('id', '>', after);
      const rows = await query.orderBy('id').limit(limit + 1);
      const page = rows.slice(0, limit);
      return {
        execution_id: executionId,
        entries: page.map((r) => ({
          id: Number(r.id),
          received_at: new Date(r.created_at).toISOString(),
          entry: r.entry,
        })),
        next_after: rows.length > limit ? Number(page[page.length - 1]?.id) : null,
      };
    },
  };
}

export type ExecutionLogs = ReturnType<typeof createExecutionLogs>;
