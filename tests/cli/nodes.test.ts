/**
 * `switchyard nodes`, `node` and `weight`, the build run as a child process against a real
 * control plane (PGlite, or PostgreSQL when DATABASE_URL is set) with the first example agent
 * registered on loopback. Every command of content/reference/cli-nodes.md runs as the page shows.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSession, runCli, startCli, startCliSession } from '../support/cli.ts';
import { startControlPlaneProcess } from '../support/control-plane-process.ts';
import { checkCliPage } from './cli-pages.ts';

let session: CliSession;

beforeAll(async () => {
  session = await startCliSession({ databasePrefix: 'sy_cli_nodes' });
  await session.startExample('first-agent/agent.mjs', 'hello-agent');
});

afterAll(async () => {
  await session?.stop();
});

describe('switchyard nodes', () => {
  it('lists each instance with its state, version, weight and last heartbeat', async () => {
    const { code, stdout, stderr } = await session.cli(['nodes']);
    expect(code, stderr).toBe(0);
    const [header, row, ...rest] = stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual([
      'NODE',
      'VERSION',
      'STATE',
      'WEIGHT',
      'LAST HEARTBEAT',
      'FUNCTIONS',
      'URL',
    ]);
    expect(row).toMatch(/^hello-agent\s+1\.0\.0\s+ready\s+100\s+\d+ s ago\s+2\s+http:\/\/127\.0\.0\.1:\d+$/);
    expect(rest).toEqual([]);
    expect(stdout, 'no colour when stdout is not a terminal').not.toContain('\u001b[');
  });

  it('colours states when FORCE_COLOR asks, and never when NO_COLOR does', async () => {
    const forced = await session.cli(['nodes'], { env: { FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain('\u001b[32mready\u001b[39m');
    const plain = await session.cli(['nodes'], { env: { NO_COLOR: '1' } });
    expect(plain.stdout).not.toContain('\u001b[');
  });

  it('--json prints one document with every node and its instances', async () => {
    const { code, stdout } = await session.cli(['nodes', '--json']);
    expect(code).toBe(0);
    const body = JSON.parse(stdout);
    expect(body.nodes.map((n: any) => [n.node_id, n.instances.length, n.lifecycle_status])).toEqual([
      ['hello-agent', 1, 'ready'],
    ]);
  });

  it('filters by state, and refuses a state that does not exist with status 2', async () => {
    const offline = await session.cli(['--json', 'nodes', '--status', 'offline']);
    expect(JSON.parse(offline.stdout)).toEqual({ nodes: [] });
    const wrong = await session.cli(['nodes', '--status', 'asleep']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('must be one of starting, ready, degraded, offline');
    expect(wrong.stdout).toBe('');
  });
});

describe('switchyard node', () => {
  it('shows the instances and every function with its schemas', async () => {
    const { code, stdout } = await session.cli(['node', 'hello-agent']);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^hello-agent\n\nVERSION\s+STATE\s+WEIGHT\s+ROUTABLE\s+LAST HEARTBEAT\s+URL\n1\.0\.0\s+ready/,
    );
    expect(stdout).toContain('hello-agent.summarize  reasoner  tags: text, demo');
    expect(stdout).toContain('hello-agent.skill:word_count  skill  tags: text, demo');
    expect(stdout).toContain('"max_sentences": {');
  });

  it('--json prints the node record', async () => {
    const { stdout } = await session.cli(['node', 'hello-agent', '--json']);
    const node = JSON.parse(stdout);
    expect(node.node_id).toBe('hello-agent');
    expect(node.reasoners[0].input_schema.required).toEqual(['text']);
  });

  it('an unknown node exits 1 with the problem detail and resolution on stderr', async () => {
    const { code, stdout, stderr } = await session.cli(['node', 'ghost']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('error: Not found (404): Node "ghost" is not registered.');
    expect(stderr).toContain('fix: Check the path or identifier');
  });

  it('a missing argument is bad usage: status 2', async () => {
    const { code, stderr } = await session.cli(['node']);
    expect(code).toBe(2);
    expect(stderr).toContain("missing required argument 'node-id'");
  });

  it('a wrong API key exits 1 with the unauthorized problem', async () => {
    const { code, stderr } = await session.cli(['node', 'hello-agent', '--api-key', 'wrong']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/error: Unauthorized \(401\)/);
  });
});

describe('switchyard weight', () => {
  it('sets the weight with the connector token, and the table shows it', async () => {
    const set = await session.cli(['weight', 'hello-agent', '1.0.0', '40'], {
      env: { SWITCHYARD_CONNECTOR_TOKEN: session.connectorToken },
    });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('hello-agent 1.0.0: weight 40, 100% of its traffic.\n');
    const nodes = JSON.parse((await session.cli(['nodes', '--json'])).stdout);
    expect(nodes.nodes[0].instances[0].traffic_weight).toBe(40);
    const json = await session.cli(
      ['weight', 'hello-agent', '1.0.0', '100', '--json', '--connector-token', session.connectorToken],
      {},
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      node_id: 'hello-agent',
      traffic_weight: 100,
      traffic_share: 1,
    });
  });

  it('without a token, or with a weight out of range, is bad usage: status 2', async () => {
    const none = await session.cli(['weight', 'hello-agent', '1.0.0', '5']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('weight needs the connector token');
    const range = await session.cli(['weight', 'hello-agent', '1.0.0', '10001', '--connector-token', 'x']);
    expect(range.code).toBe(2);
    expect(range.stderr).toContain('must be from 0 to 10000');
  });

  it('a wrong token and an unknown version exit 1 with what the connector said', async () => {
    const wrong = await session.cli(['weight', 'hello-agent', '1.0.0', '5', '--connector-token', 'nope']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('error: The connector token was refused');
    const missing = await session.cli([
      'weight',
      'hello-agent',
      '9.9.9',
      '5',
      '--connector-token',
      session.connectorToken,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('has no version "9.9.9"');
  });

  it('says the connector is disabled when the control plane has no connector token (503)', async () => {
    const dir = `${session.dir}/bare`;
    mkdirSync(dir);
    const bare = await startControlPlaneProcess({ dir, databaseUrl: undefined });
    try {
      const { code, stderr } = await runCli(
        ['weight', 'hello-agent', '1.0.0', '5', '--connector-token', 't'],
        {
          env: { SWITCHYARD_URL: bare.url },
        },
      );
      expect(code).toBe(1);
      expect(stderr).toContain('error: The connector is disabled on this control plane');
      expect(stderr).toContain('fix: Start the control plane with SERVICE_CONNECTOR_TOKEN set');
    } finally {
      await bare.stop();
    }
  });

  it('says versions:write is missing when the deployment does not grant it (403)', async () => {
    const dir = `${session.dir}/read-only`;
    mkdirSync(dir);
    const readOnly = await startControlPlaneProcess({
      dir,
      databaseUrl: undefined,
      env: {
        SERVICE_CONNECTOR_TOKEN: 't',
        SWITCHYARD_CONNECTOR_CAPABILITIES: 'reasoners:read,versions:read',
      },
    });
    try {
      const { code, stderr } = await runCli(
        ['weight', 'hello-agent', '1.0.0', '5', '--connector-token', 't'],
        {
          env: { SWITCHYARD_URL: readOnly.url },
        },
      );
      expect(code).toBe(1);
      expect(stderr).toContain('does not grant versions:write');
      expect(stderr).toContain('fix: Add versions:write to connector.capabilities');
    } finally {
      await readOnly.stop();
    }
  });
});

describe('README.md', () => {
  it('every CLI command of the quick start runs against the control plane, as README shows it', async () => {
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const commands = [...readme.matchAll(/\| `npx switchyard ([^`]+)` \|/g)].map((match) => match[1]!);
    expect(commands).toHaveLength(5);
    for (const command of commands) {
      const args = [...command.matchAll(/(\w[\w.-]*=)?"([^"]*)"|(\S+)/g)].map((m) =>
        m[2] !== undefined ? `${m[1] ?? ''}${m[2]}` : m[3]!,
      );
      // tail follows events until stopped: it must get live, then it is stopped as Ctrl-C does.
      if (args[0] === 'tail') {
        const tail = startCli(args, session.env);
        await tail.waitFor(/execution events: live/);
        await tail.stop('SIGINT');
        expect(tail.child.exitCode, command).toBe(0);
        continue;
      }
      const { code, stderr } = await session.cli(args);
      expect(code, `${command}: ${stderr}`).toBe(0);
    }
  });
});

describe('content/reference/cli-nodes.md', () => {
  it('every command prints what the page shows', async () => {
    await checkCliPage(
      'content/reference/cli-nodes.md',
      {
        ...session.env,
        SERVICE_CONNECTOR_TOKEN: session.connectorToken,
      },
      5,
    );
  });
});
