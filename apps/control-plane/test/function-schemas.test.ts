/**
 * Function schemas as a hostile agent could write them: an `input_schema` pattern must not be
 * able to stall the control plane while a call's input is checked against it, and a pattern the
 * linear-time engine cannot run is refused at registration, never later. See "Function schemas
 * are compiled at registration" on content/api/nodes.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@switchyard/shared/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  registration,
  startTestControlPlane,
  type TestControlPlane,
  uniqueNodeId,
} from './helpers/control-plane.ts';
import { type ExecutionAgent, startExecutionAgent } from './helpers/execution-agent.ts';

/** The build `npm start` runs: a process of its own, so a blocked event loop shows from outside. */
const SERVER_ENTRY = new URL('../dist/server.js', import.meta.url).pathname;
/** Generous: a backtracking engine needs about 5 s for 30 characters, and doubles per character. */
const ABORT_MS = 5_000;

/** `^(a+)+$`: catastrophic backtracking on `aaa…a!` for JavaScript's RegExp. */
const REDOS_SCHEMA = {
  type: 'object',
  properties: { code: { type: 'string', pattern: '^(a+)+$' } },
  required: ['code'],
};

const agents: ExecutionAgent[] = [];

async function agentOn(base: string, inputSchema: Record<string, unknown>): Promise<ExecutionAgent> {
  const agent = await startExecutionAgent({
    controlPlaneUrl: base,
    nodeId: uniqueNodeId('patterns'),
    reasoners: { check: { kind: 'answer', inputSchema, result: { checked: true } } },
    heartbeatMs: 60_000,
  });
  agents.push(agent);
  await agent.register();
  return agent;
}

/** A fetch that gives up after {@link ABORT_MS}: the JSON body, or the error that ended it. */
async function timed(url: string, init: RequestInit = {}): Promise<{ status: number; body: any } | Error> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(ABORT_MS) });
    return { status: response.status, body: await response.json() };
  } catch (error) {
    return error as Error;
  }
}

describe('an input_schema pattern cannot stall the control plane (built server in a process of its own)', () => {
  let child: ChildProcess | undefined;
  let base: string;
  let dataDir: string;
  let scratch: ScratchDatabase | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sy-patterns-'));
    if (process.env.DATABASE_URL)
      scratch = await createScratchDatabase(process.env.DATABASE_URL, 'sy_patterns');
    const server = spawn(process.execPath, ['--enable-source-maps', SERVER_ENTRY], {
      env: {
        PATH: process.env.PATH,
        CONTROL_PLANE_PORT: '0',
        SWITCHYARD_DATA_DIR: join(dataDir, 'data'),
        ...(scratch ? { DATABASE_URL: scratch.url } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = server;
    base = await new Promise<string>((done, fail) => {
      let stdout = '';
      let stderr = '';
      server.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        for (const line of stdout.split('\n').slice(0, -1)) {
          const entry = JSON.parse(line);
          if (typeof entry.msg === 'string' && entry.msg.startsWith('listening on')) done(entry.url);
        }
      });
      server.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      server.on('exit', (code) => fail(new Error(`the server exited with ${code}: ${stderr}`)));
    });
  }, 60_000);

  afterAll(async () => {
    for (const agent of agents.splice(0)) await agent.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child!.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers the normal validation error for "aaa…a!" on both lanes, however long, while /health keeps answering', async () => {
    const agent = await agentOn(base, REDOS_SCHEMA);
    for (const length of [30, 5_000, 200_000]) {
      const code = `${'a'.repeat(length)}!`;
      for (const lane of ['', 'async/']) {
        const [answer, health] = await Promise.all([
          timed(`${base}/api/v1/execute/${lane}${agent.nodeId}.check`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ input: { code } }),
          }),
          // Sent together with the call: it is answered only if validating does not hold the loop.
          timed(`${base}/api/v1/health`),
        ]);
        expect(answer, `${lane || 'sync/'} ${length}`).not.toBeInstanceOf(Error);
        expect(answer).toMatchObject({
          status: 400,
          body: {
            code: 'invalid_request',
            errors: [{ field: 'input.code', message: 'must match pattern "^(a+)+$"' }],
          },
        });
        expect(health).toMatchObject({ status: 200 });
      }
    }
    // The pattern still means what it says: an input it matches runs.
    const matching = await timed(`${base}/api/v1/execute/${agent.nodeId}.check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { code: 'a'.repeat(5_000) } }),
    });
    expect(matching).toMatchObject({ status: 200, body: { status: 'succeeded', result: { checked: true } } });
    expect(agent.calls).toHaveLength(1);
  });
});

describe('patterns the linear-time engine cannot run', () => {
  let cp: TestControlPlane;

  beforeAll(async () => {
    cp = await startTestControlPlane();
  });

  afterAll(async () => {
    for (const agent of agents.splice(0)) await agent.close();
    await cp.close();
  });

  const fn = (id: string, extra: Record<string, unknown> = {}) => ({ id, tags: [], ...extra });
  const textWith = (pattern: string) => ({
    type: 'object',
    properties: { text: { type: 'string', pattern } },
  });

  it('refuses a lookahead, a lookbehind or a back-reference at registration, naming the function, the schema path and why; nothing is stored', async () => {
    const id = uniqueNodeId('lookaround');
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(id, 'http://127.0.0.1:9', {
        reasoners: [
          fn('fine', { input_schema: textWith('^[a-z]+$') }),
          fn('not_blank', { input_schema: textWith('^(?!\\s*$).+') }),
        ],
        skills: [
          fn('twice', { input_schema: textWith('^(\\w)\\1$') }),
          fn('named_twice', {
            input_schema: { patternProperties: { '(?<c>x)\\k<c>': {} }, additionalProperties: false },
          }),
          fn('after_dollar', { input_schema: { propertyNames: { pattern: '(?<=\\$)\\d+' } } }),
        ],
      }),
    );
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('invalid_request');
    const why =
      'which schema patterns cannot use: they run on a linear-time engine (RE2 syntax), without lookarounds or back-references';
    expect(response.body.errors).toEqual([
      {
        field: 'reasoners[1].input_schema',
        message: `reasoner "not_blank": input_schema pattern "^(?!\\\\s*$).+" at /properties/text/pattern uses a lookahead assertion "(?!…", ${why}`,
      },
      {
        field: 'skills[0].input_schema',
        message: `skill "twice": input_schema pattern "^(\\\\w)\\\\1$" at /properties/text/pattern uses a back-reference "\\1", ${why}`,
      },
      {
        field: 'skills[1].input_schema',
        message: `skill "named_twice": input_schema pattern "(?<c>x)\\\\k<c>" at /patternProperties/(?<c>x)\\k<c> uses a back-reference "\\k<c>", ${why}`,
      },
      {
        field: 'skills[2].input_schema',
        message: `skill "after_dollar": input_schema pattern "(?<=\\\\$)\\\\d+" at /propertyNames/pattern uses a lookbehind assertion "(?<=…", ${why}`,
      },
    ]);
    expect(response.body.detail).toContain('reasoners[1].input_schema');
    expect((await call(cp.base, 'GET', `/api/v1/nodes/${id}`)).status).toBe(404);
  });

  it('refuses a pattern past the engine’s limits, and still refuses one that is not a regular expression at all', async () => {
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId('limits'), 'http://127.0.0.1:9', {
        reasoners: [
          fn('huge_repeat', { input_schema: textWith('^a{1001}$') }),
          fn('unclosed', { input_schema: textWith('([a-z') }),
        ],
        skills: [],
      }),
    );
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      {
        field: 'reasoners[0].input_schema',
        message: expect.stringMatching(
          /^reasoner "huge_repeat": input_schema pattern "\^a\{1001\}\$" at \/properties\/text\/pattern cannot be compiled by the linear-time engine .*invalid repeat count/,
        ),
      },
      {
        field: 'reasoners[1].input_schema',
        message: expect.stringMatching(
          /^reasoner "unclosed": input_schema is not a JSON Schema ajv can compile: .*\(\[a-z/,
        ),
      },
    ]);
  });

  it('accepts a lookahead in an output_schema, which is published and never run', async () => {
    const response = await call(
      cp.base,
      'POST',
      '/api/v1/nodes/register',
      registration(uniqueNodeId('output'), 'http://127.0.0.1:9', {
        reasoners: [
          fn('summary', {
            input_schema: textWith('^\\p{L}[\\p{L} ]*$'),
            output_schema: textWith('^(?!\\s*$).+'),
          }),
        ],
        skills: [],
      }),
    );
    expect(response.status).toBe(201);
  });

  it('answers 409 conflict, at once and on both lanes, for a stored input_schema registered before the rule refused its pattern', async () => {
    const agent = await agentOn(cp.base, textWith('^[a-z]+$'));
    // As a release before this rule stored it: the lookahead written straight into the row.
    const [row] = await cp.handle.db('node_instances').where({ node_id: agent.nodeId }).select('reasoners');
    const reasoners = typeof row.reasoners === 'string' ? JSON.parse(row.reasoners) : row.reasoners;
    reasoners[0].input_schema = textWith('^(?!\\s*$).+');
    await cp.handle
      .db('node_instances')
      .where({ node_id: agent.nodeId })
      .update({ reasoners: JSON.stringify(reasoners) });
    for (const lane of ['', 'async/']) {
      const answer = await call(cp.base, 'POST', `/api/v1/execute/${lane}${agent.nodeId}.check`, {
        input: { text: 'hello' },
      });
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({
        code: 'conflict',
        detail: expect.stringMatching(
          new RegExp(
            `^The input_schema that version 1\\.0\\.0 of node "${agent.nodeId}" registered for ${agent.nodeId}\\.check cannot be used: pattern .* at /properties/text/pattern uses a lookahead assertion`,
          ),
        ),
        resolution: expect.stringContaining('register again'),
      });
    }
    expect(agent.calls).toHaveLength(0);
  });
});
