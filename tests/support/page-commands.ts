import { rmSync } from 'node:fs';
import path from 'node:path';
import { cliBinDir, normalizeOutput } from './cli.ts';
import {
  type BackgroundCommand,
  type CommandExample,
  type DerivedCheck,
  type IdMap,
  parseSse,
  runShell,
  shapeDifferences,
  shellEnv,
  sseDifferences,
  startShell,
} from './doc-examples.ts';

/**
 * Runs the `curl` commands of a documentation page as a reader would, and compares what they
 * print with what the page shows. Shared by the tests that hold pages to the running control
 * plane (tutorials, concept and API pages).
 *
 * - A `curl` that changes something (`-X`, `-d`) runs exactly once; one that only reads is repeated
 *   for up to `readRetryMs` until its answer matches (a reader running it a moment later).
 * - A `curl -N` is a stream left running in another terminal: `startStream` waits for the lines the
 *   page shows before its first event, and `checkStreams` compares everything it printed, once the
 *   commands after it ran, with the ```text block the page shows.
 * - A `node …` that starts an example agent is left running in another terminal (`startAgent`):
 *   it must print what the page shows, or, when the page is run again and the first agent still
 *   holds the port, the one line the page shows for a taken port.
 * - A `switchyard …` runs the built command line against the page's control plane (the page's
 *   `http://127.0.0.1:8080`, localized, as SWITCHYARD_URL; no settings file) and must exit 0 and
 *   print the ```text block after it, ages, durations, ids and ports aside (`normalizeOutput`).
 * - Answers are compared with `shapeDifferences`/`sseDifferences`: same keys, same values, except
 *   timestamps, `measured` numbers, `derived` values (checked by their rule) and generated ids
 *   (paired page id → real id in `ids`).
 */
export interface PageRunnerOptions {
  /** The page's path relative to the repository root, for messages. */
  page: string;
  /** Where commands run (the repository root). */
  cwd: string;
  /** The page's addresses replaced by the ones of this run (applied to commands and answers). */
  localize: (text: string) => string;
  /** Keys whose numbers are measurements (any number ≥ 0 matches). */
  measured?: ReadonlySet<string>;
  /** Keys whose values follow a rule from the other fields of their object (see ShapeRules). */
  derived?: Readonly<Record<string, DerivedCheck>>;
  readRetryMs?: number;
  /** How long a stream may take to show the events the page shows. */
  streamWaitMs?: number;
}

export function createPageRunner(options: PageRunnerOptions) {
  const measured = options.measured ?? new Set<string>();
  const { derived } = options;
  const readRetryMs = options.readRetryMs ?? 20_000;
  const streamWaitMs = options.streamWaitMs ?? 10_000;
  const { localize } = options;
  const streams: Array<{ example: CommandExample; curl: BackgroundCommand }> = [];
  /** A directory with `switchyard` in it, made on the page's first CLI command. */
  let cliBin: string | undefined;

  const where = (example: CommandExample) => `${options.page}:${example.command.line}`;
  const onlyReads = (command: string) => !/\s-X\s|\s-d\s|--data/.test(command);

  return {
    where,

    /** Runs one `curl` example; the problems (none when its answer matches the page's JSON). */
    async runCurl(example: CommandExample, ids: IdMap): Promise<string[]> {
      const command = ids.substitute(localize(example.command.code));
      const deadline = Date.now() + (onlyReads(command) ? readRetryMs : 0);
      for (;;) {
        const result = await runShell(command, { cwd: options.cwd, timeoutMs: 30_000 });
        let problems: string[];
        let answer: unknown;
        try {
          answer = JSON.parse(result.stdout);
        } catch {
          answer = undefined;
        }
        if (result.code !== 0) {
          problems = [`curl exited with ${result.code}: ${result.stderr.trim()}`];
        } else if (example.shown?.lang !== 'json') {
          problems = [`the page shows no JSON answer after it (found ${example.shown?.lang ?? 'nothing'})`];
        } else if (answer === undefined) {
          problems = [`the answer is not JSON: ${result.stdout.slice(0, 500)}`];
        } else {
          const attempt = ids.clone();
          problems = shapeDifferences(answer, JSON.parse(example.shown.code), {
            measured,
            derived,
            ids: attempt,
            rewrite: localize,
          });
          if (problems.length === 0) ids.adopt(attempt);
          else problems.push(`the whole answer: ${result.stdout}`);
        }
        if (problems.length === 0 || Date.now() > deadline) {
          return problems.map((p) => `${where(example)} \`${command.replace(/\s*\\\n\s*/g, ' ')}\`: ${p}`);
        }
        await new Promise((done) => setTimeout(done, 250));
      }
    },

    /** Runs one `switchyard` example; the problems (none when it prints what the page shows). */
    async runCli(example: CommandExample): Promise<string[]> {
      cliBin ??= cliBinDir();
      const command = example.command.code.trim();
      const result = await runShell(command, {
        cwd: options.cwd,
        timeoutMs: 60_000,
        env: {
          PATH: `${cliBin}:${shellEnv().PATH}`,
          SWITCHYARD_URL: localize('http://127.0.0.1:8080'),
          SWITCHYARD_CONFIG_FILE: path.join(cliBin, 'no-config.json'),
        },
      });
      const at = `${where(example)} \`${command.replace(/\s*\\\n\s*/g, ' ')}\``;
      if (result.code !== 0) return [`${at}: exited with ${result.code}: ${result.stderr.trim()}`];
      if (example.shown?.lang !== 'text') return [`${at}: the page shows no \`\`\`text output after it`];
      const printed = normalizeOutput(`${result.stdout}${result.stderr}`);
      const shown = normalizeOutput(localize(example.shown.code));
      return printed === shown ? [] : [`${at}: it printed\n${printed}\nbut the page shows\n${shown}`];
    },

    /**
     * Starts a `curl -N` stream as the page does (another terminal) and waits for the lines the
     * page shows before its first event (`retry:`, `: connected`): from then on every change is
     * streamed to it.
     */
    async startStream(example: CommandExample): Promise<void> {
      if (example.shown?.lang !== 'text')
        throw new Error(`${where(example)}: a stream needs a \`\`\`text block after it`);
      const curl = startShell(localize(example.command.code.trim()), { cwd: options.cwd });
      streams.push({ example, curl });
      const preamble = example.shown.code.split(/\n\s*\n/)[0]!;
      for (const line of preamble.split('\n').filter((l) => l.trim() !== '')) await curl.waitFor(line);
    },

    /**
     * What each stream printed, compared with the page: waits until it has as many events as the
     * page shows (or `streamWaitMs`), then compares them all.
     */
    async checkStreams(ids: IdMap): Promise<string[]> {
      const problems: string[] = [];
      for (const { example, curl } of streams) {
        const expected = parseSse(`${example.shown!.code}\n\n`).events.length;
        const deadline = Date.now() + streamWaitMs;
        while (parseSse(curl.stdout()).events.length < expected && Date.now() < deadline) {
          await new Promise((done) => setTimeout(done, 100));
        }
        const found = sseDifferences(curl.stdout(), example.shown!.code, {
          measured,
          derived,
          ids,
          rewrite: localize,
        });
        if (found.length > 0) found.push(`the whole stream:\n${curl.stdout()}`);
        problems.push(
          ...found.map((p) => `${where(example)} \`${localize(example.command.code.trim())}\`: ${p}`),
        );
      }
      return problems;
    },

    /**
     * Runs every command of the page in order: `curl -N` streams in the background, other `curl`s
     * compared with their answers, and whatever `other` takes on (it returns false for a command it
     * does not know); then compares the streams. Returns every problem found.
     */
    async runAll(
      examples: CommandExample[],
      ids: IdMap,
      other: (example: CommandExample, command: string) => Promise<boolean> = async () => false,
    ): Promise<string[]> {
      const problems: string[] = [];
      for (const example of examples) {
        const command = example.command.code.trim();
        if (await other(example, command)) continue;
        // Another terminal: the stream shows what the commands after it change.
        if (command.startsWith('curl -N ')) await this.startStream(example);
        else if (command.startsWith('curl ')) problems.push(...(await this.runCurl(example, ids)));
        else if (command.startsWith('switchyard ')) problems.push(...(await this.runCli(example)));
        else problems.push(`${where(example)}: this test does not know how to run \`${command}\``);
      }
      problems.push(...(await this.checkStreams(ids)));
      return problems;
    },

    /**
     * Starts an example agent as the page does (`node …`, a terminal of its own, left running) and
     * returns it with the problems found in what it printed. A first run must print the lines the
     * page shows after the command. With `portTaken` (the page run again while the agent of the
     * first run still holds its port) it must stop at once with exit code 1 and print exactly one
     * of the further blocks the page shows after the command: the line that says which port is
     * taken and how to choose another, with no stack trace.
     */
    async startAgent(
      example: CommandExample,
      run: { env: NodeJS.ProcessEnv; portTaken: boolean },
    ): Promise<{ agent: BackgroundCommand; problems: string[] }> {
      const agent = startShell(example.command.code.trim(), { cwd: options.cwd, env: run.env });
      const problems: string[] = [];
      if (example.shown?.lang !== 'text') {
        problems.push(`${where(example)}: the page shows no \`\`\`text output after it`);
      } else if (!run.portTaken) {
        for (const line of example.shown.code.split('\n').filter((l) => l.trim() !== '')) {
          try {
            await agent.waitFor(localize(line));
          } catch (error) {
            problems.push(`${where(example)}: ${(error as Error).message}`);
            break;
          }
        }
      } else {
        const code = await Promise.race([
          agent.exited(),
          new Promise<'running'>((done) => setTimeout(() => done('running'), 10_000)),
        ]);
        const printed = agent.output().trim();
        const expected = example.also.filter((b) => b.lang === 'text').map((b) => localize(b.code).trim());
        if (code !== 1) {
          problems.push(
            `${where(example)}: started while its port is taken, it should exit with code 1; it ${code === 'running' ? 'is still running' : `exited with ${code}`}, printing:\n${printed}`,
          );
        } else if (!expected.includes(printed)) {
          problems.push(
            `${where(example)}: started while its port is taken, it printed:\n${printed}\nbut the page shows ${expected.length === 0 ? 'nothing for that case' : expected.join('\nor\n')}`,
          );
        }
      }
      return { agent, problems };
    },

    /** Ends the streams, and removes the CLI's directory. */
    async stop(): Promise<void> {
      await Promise.all(streams.map((stream) => stream.curl.stop()));
      if (cliBin) rmSync(cliBin, { recursive: true, force: true });
    },
  };
}

export type PageRunner = ReturnType<typeof createPageRunner>;
