import { readFileSync } from 'node:fs';
import { type ApiProblem, type components, streamEvents, unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import type { Context } from '../context.ts';
import { CommandFailed, UsageError } from '../failures.ts';
import { ago, table } from '../format.ts';
import { examples } from '../help.ts';
import { oneOf } from '../values.ts';

const SCOPES = ['workflow', 'session', 'actor', 'global'] as const;
type Scope = (typeof SCOPES)[number];

interface ScopeOptions {
  scope?: Scope;
  scopeId?: string;
}

/** A key's entry, as get, set and list answer it. */
type Entry = components['schemas']['MemoryEntry'];

/**
 * The scope a command names: none means global (the CLI sends no workflow, session or actor
 * header); a named scope other than global needs its id, since there is no header to take it from.
 */
function scopeOf(options: ScopeOptions): { scope?: Scope; scope_id?: string } {
  if (options.scopeId !== undefined && options.scope === undefined) {
    throw new UsageError('--scope-id needs --scope (workflow, session or actor).');
  }
  if (options.scope && options.scope !== 'global' && !options.scopeId) {
    throw new UsageError(
      `--scope ${options.scope} needs --scope-id: the ${options.scope} the key belongs to.`,
    );
  }
  return {
    ...(options.scope ? { scope: options.scope } : {}),
    ...(options.scopeId ? { scope_id: options.scopeId } : {}),
  };
}

const where = (entry: { scope: string; scope_id: string }) =>
  entry.scope === 'global' ? 'global' : `${entry.scope} ${entry.scope_id}`;

/** A value for a table: compact JSON, cut to `width` characters. */
function preview(value: unknown, width = 60): string {
  const text = JSON.stringify(value);
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

function withScopeOptions(command: Command): Command {
  return command
    .option('--scope <scope>', `the scope (${SCOPES.join(', ')}); global when left out`, oneOf(SCOPES))
    .option('--scope-id <id>', 'the id of the workflow, session or actor');
}

export function registerMemoryCommands(program: Command, ctx: Context): void {
  const memory = examples(
    program
      .command('memory')
      .description('Read, write, list and watch key-value memory, in the global scope or a named one.'),
    'switchyard memory set style \'{"max_facts": 2}\'',
    'switchyard memory list --scope session --scope-id sess_7',
  );

  examples(
    withScopeOptions(
      memory.command('get').description("Print a key's value (with --json, its whole entry)."),
    ).argument('<key>', 'the key'),
    'switchyard memory get style',
    'switchyard memory get draft --scope workflow --scope-id wf_9 --json',
  ).action(async (key: string, options: ScopeOptions) => {
    const entry = await unwrap(ctx.client.POST('/api/v1/memory/get', { body: { key, ...scopeOf(options) } }));
    if (ctx.json) return ctx.printJson(entry);
    ctx.print(JSON.stringify(entry.data, null, 2));
  });

  examples(
    withScopeOptions(
      memory
        .command('set')
        .description(
          'Write a value: JSON when it parses as JSON, else the text itself; --value-file reads it from a file.',
        ),
    )
      .argument('<key>', 'the key')
      .argument('[value]', 'the value')
      .option('--value-file <file>', 'read the value (JSON) from a file; - reads standard input'),
    'switchyard memory set style \'{"max_facts": 2, "sign_off": "-- the team"}\'',
    'switchyard memory set timezone Europe/Paris --scope session --scope-id sess_7',
  ).action(async (key: string, value: string | undefined, options: ScopeOptions & { valueFile?: string }) => {
    if ((value === undefined) === (options.valueFile === undefined)) {
      throw new UsageError('Give the value either as an argument or with --value-file.');
    }
    let data: unknown;
    if (options.valueFile !== undefined) {
      let text: string;
      try {
        text = readFileSync(options.valueFile === '-' ? 0 : options.valueFile, 'utf8');
      } catch (error) {
        throw new UsageError(`Cannot read ${options.valueFile}: ${(error as Error).message}`);
      }
      try {
        data = JSON.parse(text);
      } catch (error) {
        throw new UsageError(`${options.valueFile} is not JSON: ${(error as Error).message}`);
      }
    } else {
      try {
        data = JSON.parse(value!);
      } catch {
        data = value;
      }
    }
    const answer = await unwrap(
      ctx.client.POST('/api/v1/memory/set', { body: { key, data, ...scopeOf(options) } }),
    );
    if (ctx.json) return ctx.printJson(answer);
    ctx.print(`${answer.key} set (${where(answer)})`);
  });

  examples(
    withScopeOptions(
      memory.command('delete').description('Delete a key (deleting a missing key is not an error).'),
    ).argument('<key>', 'the key'),
    'switchyard memory delete style',
  ).action(async (key: string, options: ScopeOptions) => {
    const answer = await unwrap(
      ctx.client.POST('/api/v1/memory/delete', { body: { key, ...scopeOf(options) } }),
    );
    if (ctx.json) return ctx.printJson(answer);
    ctx.print(`${answer.key} ${answer.deleted ? 'deleted' : 'was not set'} (${where(answer)})`);
  });

  examples(
    withScopeOptions(memory.command('list').description("List a scope's entries, ordered by key.")),
    'switchyard memory list',
    'switchyard memory list --scope workflow --scope-id wf_9 --json',
  ).action(async (options: ScopeOptions) => {
    const scope = scopeOf(options);
    const entries: Entry[] = [];
    let after: string | undefined;
    for (;;) {
      const page: Entry[] = await unwrap(
        ctx.client.GET('/api/v1/memory/list', {
          params: { query: { ...scope, limit: 1000, ...(after === undefined ? {} : { after }) } },
        }),
      );
      entries.push(...page);
      if (page.length < 1000) break;
      after = page[page.length - 1]!.key;
    }
    if (ctx.json) return ctx.printJson(entries);
    if (entries.length === 0) return ctx.print('No entries.');
    ctx.print(
      table(
        ['KEY', 'VALUE', 'SCOPE', 'UPDATED'],
        entries.map((e) => [e.key, preview(e.data), where(e), ago(e.updated_at)]),
      ),
    );
  });

  examples(
    withScopeOptions(
      memory
        .command('watch')
        .description(
          'Follow memory changes live until Ctrl-C; a dropped connection resumes after the last change seen, none lost.',
        ),
    ).argument(
      '[pattern]',
      'only keys matching it: * stands for any run of characters (draft*, user.*.prefs)',
    ),
    'switchyard memory watch',
    "switchyard memory watch 'notes*' --scope workflow --scope-id wf_9 --json",
  ).action(async (pattern: string | undefined, options: ScopeOptions) => {
    if (options.scopeId !== undefined && options.scope === undefined) {
      throw new UsageError('--scope-id needs --scope.');
    }
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let failure: ApiProblem | undefined;
    let live = false;
    const stream = streamEvents({
      baseUrl: ctx.baseUrl,
      ...(ctx.apiKey ? { apiKey: ctx.apiKey } : {}),
      path: '/api/v1/memory/events/sse',
      signal: controller.signal,
      reconnect: { maxDelayMs: 5_000 },
      query: {
        ...(options.scope ? { scope: options.scope } : {}),
        ...(options.scopeId ? { scope_id: options.scopeId } : {}),
        ...(pattern ? { key: pattern } : {}),
      },
      onEvent: (event) => {
        const change = event.data;
        if (ctx.json) return ctx.printJsonLine({ id: event.id, event: event.event, data: change });
        const c = ctx.colours;
        const action = change.action === 'delete' ? c.red('delete') : c.green(change.action.padEnd(6));
        ctx.print(
          `${c.dim(change.timestamp.slice(11, 23))}  ${action}  ${change.key}  ${where(change)}  ${preview(change.data)}`,
        );
      },
      onState: (state) => {
        if (state === 'live' && !live) {
          live = true;
          ctx.note(ctx.errColours.dim('memory events: live'));
        }
      },
      onReconnect: ({ resumed, lastEventId }) =>
        ctx.note(
          ctx.errColours.dim(
            resumed
              ? `memory events: resumed after ${lastEventId}, none missed`
              : 'memory events: reconnected',
          ),
        ),
      onError: (error, { retrying }) => {
        if (retrying) ctx.note(ctx.errColours.yellow(`memory events: ${error.detail} Reconnecting.`));
        else failure = error;
      },
    });
    await stream.done;
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    if (failure) {
      throw new CommandFailed(
        `The event stream was refused: ${failure.title} (${failure.status}): ${failure.detail}`,
        failure.resolution,
      );
    }
  });
}
