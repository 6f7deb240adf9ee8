/**
 * A reader follows the tutorials in order and leaves every agent running: each example agent the
 * pages start has a default port of its own, and when that port is taken it stops with the one line
 * its page shows instead of a stack trace. The test reads every page of content/ that starts an
 * example agent (`node …agent….mjs`), takes the address each one shows in its `listening on` line,
 * and checks that no two agents share one. Then it holds each agent's default port itself and starts
 * the example exactly as its page does, without AGENT_PORT: the agent must exit with code 1 and
 * print the page's line for a taken port (so its real default is the port the page shows).
 *
 * The page tests (first-agent-tutorial, share-memory-tutorial, approvals-pages) run each page twice
 * on free ports; this one is about the defaults a reader gets.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type CommandExample, commandExamples, startShell } from '../support/doc-examples.ts';
import { freePort } from '../support/free-port.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONTENT = join(ROOT, 'content');
/** A page command that starts an example agent. */
const START_AGENT = /^node \S*agents?\.mjs( \w+)?$/;
/** The first-agent page has the reader save its code as agent.mjs; the repository keeps it here. */
const SAVED_AS_AGENT_MJS = join(ROOT, 'examples/first-agent');

interface AgentStart {
  page: string;
  example: CommandExample;
  /** What names the agent in its `listening on` line: `[agent] hello-agent`, `[writer]`. */
  agent: string;
  port: number;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const starts: AgentStart[] = markdownFiles(CONTENT).flatMap((file) => {
  const page = relative(ROOT, file);
  return commandExamples(readFileSync(file, 'utf8'))
    .filter((example) => START_AGENT.test(example.command.code.trim()))
    .map((example) => {
      const listening = /^(.*?) ?listening on http:\/\/127\.0\.0\.1:(\d+)$/m.exec(example.shown?.code ?? '');
      if (!listening) throw new Error(`${page}:${example.command.line}: no "listening on" line after it`);
      return { page, example, agent: listening[1]!, port: Number(listening[2]) };
    });
});

const held: Server[] = [];

/** Listens on `port` so that an agent finds it taken; something else holding it does as well. */
async function hold(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? done() : fail(error),
    );
    server.listen(port, '127.0.0.1', () => {
      held.push(server);
      done();
    });
  });
}

afterAll(async () => {
  await Promise.all(held.map((server) => new Promise((done) => server.close(done))));
});

describe('the example agents the pages start', () => {
  it('are started by the tutorials and the approvals pages', () => {
    expect(new Set(starts.map((s) => s.agent))).toEqual(
      new Set(['[agent] hello-agent', '[researcher]', '[writer]', '[agent] publisher']),
    );
  });

  it('each have a default port of their own, the same on every page', () => {
    const portOf = new Map<string, Set<number>>();
    for (const start of starts)
      portOf.set(start.agent, (portOf.get(start.agent) ?? new Set()).add(start.port));
    for (const [agent, ports] of portOf) expect([agent, [...ports]]).toEqual([agent, [expect.any(Number)]]);
    const ports = [...portOf.values()].map((set) => [...set][0]);
    expect(new Set(ports).size).toBe(ports.length);
  });

  for (const start of starts) {
    it(`${start.page}:${start.example.command.line} \`${start.example.command.code.trim()}\` stops with the page's one line when port ${start.port} is taken`, async () => {
      await hold(start.port);
      const command = start.example.command.code.trim();
      const agent = startShell(command, {
        cwd: command === 'node agent.mjs' ? SAVED_AS_AGENT_MJS : ROOT,
        // Nothing listens there: an agent that did start would not register anywhere.
        env: { CONTROL_PLANE_URL: `http://127.0.0.1:${await freePort()}` },
      });
      const code = await Promise.race([
        agent.exited(),
        new Promise<'running'>((done) => setTimeout(() => done('running'), 10_000)),
      ]);
      await agent.stop();
      const lines = start.example.also.filter((b) => b.lang === 'text').map((b) => b.code.trim());
      expect(lines, 'the page shows what the agent prints when its port is taken').toHaveLength(1);
      expect({ code, printed: agent.output().trim() }).toEqual({ code: 1, printed: lines[0] });
    });
  }
});
