import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { type CommandResult, runToEnd } from './child-process.ts';

/** One fenced code block of a markdown page. */
export interface FencedBlock {
  /** The info string's first word: `bash`, `json`, `text`, `js`, or '' for a bare fence. */
  lang: string;
  code: string;
  /** 1-based line of the opening fence, for messages that point at the page. */
  line: number;
}

/**
 * The fenced blocks of a markdown page, in order. Fences are lines starting with three or more
 * backticks (or tildes); a block ends at a fence of the same character at least as long, as in
 * CommonMark, so a block may show a shorter fence inside it.
 */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split('\n');
  let open: { fence: string; lang: string; line: number; body: string[] } | undefined;
  for (const [index, line] of lines.entries()) {
    if (!open) {
      const start = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(line);
      if (start) open = { fence: start[1]!, lang: start[2] ?? '', line: index + 1, body: [] };
      continue;
    }
    const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
    if (close && close[1]![0] === open.fence[0] && close[1]!.length >= open.fence.length) {
      blocks.push({ lang: open.lang, code: open.body.join('\n'), line: open.line });
      open = undefined;
    } else {
      open.body.push(line);
    }
  }
  if (open) throw new Error(`the fence opened at line ${open.line} is never closed`);
  return blocks;
}

/** A shell command of a page and the answer the page shows right after it, if any. */
export interface CommandExample {
  command: FencedBlock;
  /** The first ```json or ```text block after the command and before the next command. */
  shown: FencedBlock | undefined;
  /**
   * The ```json and ```text blocks after `shown`, before the next command: what the command prints
   * in other circumstances the page describes (an agent started while its port is taken).
   */
  also: FencedBlock[];
}

/** Every ```bash block of a page, each paired with the output blocks that follow it. */
export function commandExamples(markdown: string): CommandExample[] {
  const blocks = fencedBlocks(markdown);
  const examples: CommandExample[] = [];
  for (const [index, block] of blocks.entries()) {
    if (block.lang !== 'bash') continue;
    const end = blocks.findIndex((b, i) => i > index && b.lang === 'bash');
    const outputs = blocks
      .slice(index + 1, end === -1 ? blocks.length : end)
      .filter((b) => b.lang === 'json' || b.lang === 'text');
    const next = blocks[index + 1];
    const shown = next && (next.lang === 'json' || next.lang === 'text') ? next : undefined;
    examples.push({ command: block, shown, also: shown ? outputs.slice(1) : [] });
  }
  return examples;
}

/** What a shell command did. */
export type ShellResult = CommandResult;

/**
 * Runs `command` with `bash -c`, as a reader pasting it into a terminal would, with the Node
 * that runs the tests first on PATH (so `node` is the same one). Rejects if it runs longer than
 * `timeoutMs` (its process group is killed).
 */
export function runShell(
  command: string,
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ShellResult> {
  return runToEnd('bash', ['-c', command], { ...options, env: { ...shellEnv(), ...options.env } });
}

/** PATH with this Node first, and nothing else of the developer's environment. */
export function shellEnv(): NodeJS.ProcessEnv {
  return {
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: process.env.HOME,
  };
}

// ---- Comparing a real answer with the one a page shows ----------------------------------------

/** An id as the control plane makes them: a prefix, `_`, 26 Crockford base32 characters. */
const ID = /^([a-z][a-z0-9]*)_[0-9a-hjkmnp-tv-z]{26}$/;
/** An event id of the control plane's event log (`<tx>-<id>`), as streams and histories write them. */
const EVENT_ID = /^\d+-\d+$/;
/** An ISO 8601 timestamp in UTC with milliseconds, as every answer writes them. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Page ids and the real ids they stand for. The first time a page id meets a real one they are
 * paired; from then on the page id must always meet the same real id (an execution's id in its
 * status record is the one its execute call answered), and commands that name the page id are
 * run with the real one.
 */
export class IdMap {
  readonly pairs = new Map<string, string>();

  /** Pairs `shown` with `real`, or returns why they cannot be paired. */
  pair(shown: string, real: string): string | undefined {
    const known = this.pairs.get(shown);
    if (known === undefined) {
      for (const [other, value] of this.pairs) {
        if (value === real) return `${real} already stands for ${other} on the page, not for ${shown}`;
      }
      this.pairs.set(shown, real);
      return undefined;
    }
    return known === real ? undefined : `the page's ${shown} was ${known} earlier, here it is ${real}`;
  }

  /** A copy to compare against, committed with {@link IdMap.adopt} only if the comparison passed. */
  clone(): IdMap {
    const copy = new IdMap();
    for (const [shown, real] of this.pairs) copy.pairs.set(shown, real);
    return copy;
  }

  adopt(other: IdMap): void {
    for (const [shown, real] of other.pairs) this.pairs.set(shown, real);
  }

  /** The text with every paired page id replaced by its real id. */
  substitute(text: string): string {
    let out = text;
    for (const [shown, real] of this.pairs) out = out.split(shown).join(real);
    return out;
  }
}

export interface ShapeRules {
  /** Keys whose numbers are measurements (durations) that differ on every run: any number ≥ 0. */
  measured: ReadonlySet<string>;
  ids: IdMap;
  /** Applied to every string the page shows before comparing it (host and port substitutions). */
  rewrite?: (text: string) => string;
  /**
   * Keys whose values follow a rule from the other fields of their object (a value learned over
   * time): the check gets both objects and returns what is wrong, or undefined.
   */
  derived?: Readonly<Record<string, DerivedCheck>>;
}

/** Checks one key of a real object against the page's, knowing both whole objects. */
export type DerivedCheck = (
  actual: Record<string, unknown>,
  shown: Record<string, unknown>,
) => string | undefined;

/**
 * Where `actual` differs from the `shown` JSON of a page, as `path: problem` lines (none when it
 * matches). Objects must have the same keys; arrays the same length; values must be equal, except
 * ids (same prefix, paired through `rules.ids`), event ids (paired too), timestamps (any timestamp)
 * and measured numbers.
 */
export function shapeDifferences(actual: unknown, shown: unknown, rules: ShapeRules, path = '$'): string[] {
  const show = (value: unknown) => JSON.stringify(value);
  if (shown === null || typeof shown !== 'object') {
    if (typeof shown === 'string') {
      const idShown = ID.exec(shown);
      if (idShown) {
        if (typeof actual !== 'string' || ID.exec(actual)?.[1] !== idShown[1])
          return [`${path}: expected an id ${idShown[1]}_…, got ${show(actual)}`];
        const problem = rules.ids.pair(shown, actual);
        return problem ? [`${path}: ${problem}`] : [];
      }
      if (EVENT_ID.test(shown)) {
        if (typeof actual !== 'string' || !EVENT_ID.test(actual))
          return [`${path}: expected an event id like ${shown}, got ${show(actual)}`];
        const problem = rules.ids.pair(shown, actual);
        return problem ? [`${path}: ${problem}`] : [];
      }
      if (TIMESTAMP.test(shown)) {
        return typeof actual === 'string' && TIMESTAMP.test(actual)
          ? []
          : [`${path}: expected a timestamp, got ${show(actual)}`];
      }
      const expected = rules.ids.substitute(rules.rewrite ? rules.rewrite(shown) : shown);
      return actual === expected ? [] : [`${path}: expected ${show(expected)}, got ${show(actual)}`];
    }
    const key = path.slice(path.lastIndexOf('.') + 1);
    if (typeof shown === 'number' && rules.measured.has(key)) {
      return typeof actual === 'number' && actual >= 0
        ? []
        : [`${path}: expected a number ≥ 0, got ${show(actual)}`];
    }
    return actual === shown ? [] : [`${path}: expected ${show(shown)}, got ${show(actual)}`];
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${show(actual)}`];
    if (actual.length !== shown.length)
      return [`${path}: expected ${shown.length} items, got ${actual.length}: ${show(actual)}`];
    return shown.flatMap((item, index) => shapeDifferences(actual[index], item, rules, `${path}[${index}]`));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
    return [`${path}: expected an object, got ${show(actual)}`];
  // A key may be a page id (an answer keyed by execution id): it stands for its paired real id.
  const shownByKey = new Map(
    Object.entries(shown).map(([key, value]) => [ID.test(key) ? rules.ids.substitute(key) : key, value]),
  );
  const shownKeys = [...shownByKey.keys()];
  const actualKeys = Object.keys(actual);
  const problems: string[] = [];
  const missing = shownKeys.filter((k) => !actualKeys.includes(k));
  const extra = actualKeys.filter((k) => !shownKeys.includes(k));
  if (missing.length) problems.push(`${path}: missing ${missing.join(', ')} (the page shows them)`);
  if (extra.length) problems.push(`${path}: has ${extra.join(', ')}, which the page does not show`);
  for (const key of shownKeys) {
    if (!actualKeys.includes(key)) continue;
    const derived = rules.derived?.[key];
    if (derived) {
      const problem = derived(actual as Record<string, unknown>, shown as Record<string, unknown>);
      if (problem) problems.push(`${path}.${key}: ${problem}`);
      continue;
    }
    problems.push(
      ...shapeDifferences(
        (actual as Record<string, unknown>)[key],
        shownByKey.get(key),
        rules,
        `${path}.${key}`,
      ),
    );
  }
  return problems;
}

/** A command left running in the background (`node agent.mjs`), with what it printed. */
export interface BackgroundCommand {
  output(): string;
  /** What it printed on stdout alone (curl's progress meter goes to stderr when stdout is a pipe). */
  stdout(): string;
  /** Resolves once `text` has been printed; rejects if the command exits first or `timeoutMs` passes. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code once the command has ended (null when a signal ended it). */
  exited(): Promise<number | null>;
  /** SIGTERM to its process group (as Ctrl-C reaches a terminal's foreground job), SIGKILL after 5 s. */
  stop(): Promise<void>;
}

/** Starts `command` with `bash -c` and leaves it running, as in a second terminal. */
export function startShell(
  command: string,
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): BackgroundCommand {
  const child = spawn('bash', ['-c', command], {
    cwd: options.cwd,
    env: { ...shellEnv(), ...options.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let exited = false;
  const listeners = new Set<() => void>();
  const record = (chunk: string) => {
    output += chunk;
    for (const listener of [...listeners]) listener();
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    record(chunk);
  });
  child.stderr.setEncoding('utf8').on('data', record);
  const done = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exited = true;
      for (const listener of [...listeners]) listener();
      resolve(code);
    }),
  );
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group is empty already
    }
  };
  return {
    output: () => output,
    stdout: () => stdout,
    waitFor(text, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const finish = (error?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve();
        };
        const check = () => {
          if (output.includes(text)) finish();
          else if (exited)
            finish(new Error(`\`${command}\` exited before printing "${text}"; it printed:\n${output}`));
        };
        const timer = setTimeout(
          () =>
            finish(
              new Error(
                `\`${command}\` did not print "${text}" within ${timeoutMs} ms; it printed:\n${output}`,
              ),
            ),
          timeoutMs,
        );
        listeners.add(check);
        check();
      });
    },
    exited: () => done,
    async stop() {
      if (exited) return;
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), 5_000);
      await done;
      clearTimeout(timer);
    },
  };
}

// ---- Server-Sent Events as a page shows them --------------------------------------------------

/** One event of a Server-Sent Events stream, its fields as sent. */
export interface SseEvent {
  id?: string;
  event?: string;
  /** The `data:` lines, joined with newlines. */
  data: string;
}

/**
 * A Server-Sent Events text as a client reads it: its last `retry:` value and its events, in
 * order. Comment lines (`: keep-alive`) are left out, since keep-alives arrive whenever the timer
 * fires; an event still missing its closing blank line is not complete yet and is left out too.
 */
export function parseSse(text: string): { retry?: string; events: SseEvent[] } {
  const events: SseEvent[] = [];
  let retry: string | undefined;
  let fields: { id?: string; event?: string; data: string[] } = { data: [] };
  for (const line of text.split(/\r\n|\r|\n/).slice(0, -1)) {
    if (line === '') {
      if (fields.data.length > 0) {
        const { data, ...rest } = fields;
        events.push({ ...rest, data: data.join('\n') });
      }
      fields = { data: [] };
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'data') fields.data.push(value);
    else if (name === 'id' || name === 'event') fields[name] = value;
    else if (name === 'retry') retry = value;
  }
  return { retry, events };
}

/**
 * Where a real SSE text differs from the one a page shows, as `path: problem` lines. The same
 * `retry:`, the same number of events, each with the same `event:`; an `id:` where the page shows
 * one, of the same shape (ids are opaque cursors: `7512-4081` stands for any `<digits>-<digits>`);
 * `data:` compared as JSON with {@link shapeDifferences} when the page's is JSON, else as text.
 */
export function sseDifferences(actual: string, shown: string, rules: ShapeRules): string[] {
  const real = parseSse(actual);
  // A page's block ends without the blank line that closes its last event.
  const page = parseSse(`${shown}\n\n`);
  const problems: string[] = [];
  if (page.retry !== undefined && real.retry !== page.retry) {
    problems.push(`retry: expected ${page.retry}, got ${real.retry ?? 'none'}`);
  }
  if (real.events.length !== page.events.length) {
    return [...problems, `expected ${page.events.length} events, got ${real.events.length}`];
  }
  const shape = (id: string) => id.replace(/[0-9]+/g, '9').replace(/[a-z]+/gi, 'a');
  for (const [index, expected] of page.events.entries()) {
    const got = real.events[index]!;
    const path = `event ${index + 1}`;
    if (got.event !== expected.event) {
      problems.push(`${path}: expected event: ${expected.event}, got ${got.event ?? 'none'}`);
    }
    if (expected.id !== undefined && (got.id === undefined || shape(got.id) !== shape(expected.id))) {
      problems.push(`${path}: expected an id like ${expected.id}, got ${got.id ?? 'none'}`);
    }
    let shownData: unknown;
    try {
      shownData = JSON.parse(expected.data);
    } catch {
      if (got.data !== expected.data)
        problems.push(`${path}: expected data: ${expected.data}, got ${got.data}`);
      continue;
    }
    let gotData: unknown;
    try {
      gotData = JSON.parse(got.data);
    } catch {
      problems.push(`${path}: data is not JSON: ${got.data}`);
      continue;
    }
    problems.push(...shapeDifferences(gotData, shownData, rules, `${path} data`));
  }
  return problems;
}
