/**
 * content/operations/backup-restore.md: the page's commands take a backup and restore it, and a
 * control plane on the restored copy answers the same data.
 *
 * Data: a real agent (an HTTP server on 127.0.0.1) registers `hello-agent`, one synchronous
 * execution of it succeeds, and a global memory value is written.
 *
 * On PostgreSQL (DATABASE_URL set): the page's `pg_dump` runs against the throwaway database
 * while its control plane runs; the page's `createdb` + `pg_restore` load the dump into a new
 * database (the page's name `switchyard_restored` is replaced by a unique one, since databases are
 * shared by every run on the server); a control plane started on it answers the same node,
 * execution and memory value.
 *
 * On PGlite (no DATABASE_URL): the server runs in a directory with the default `.data`, is stopped,
 * the page's `tar -czf` archives it, the page's `tar -xzf` restores it into a fresh directory, and
 * a server started there answers the same data.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@switchyard/shared/db';
import { afterAll, describe, expect, it } from 'vitest';
import { startExecutionAgent } from '../../apps/control-plane/test/helpers/execution-agent.ts';
import { startControlPlaneProcess } from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { libpqEnv, operationsPage, runPageCommand, withDatabase } from '../support/operations-pages.ts';
import { throwawayDatabase } from '../support/throwaway-database.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const { page, examples } = operationsPage('backup-restore.md');
const [dump, restore, archive, unarchive] = examples;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sy-backup-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Written {
  executionId: string;
  execution: Record<string, unknown>;
  node: Record<string, unknown>;
}

/** Registers a real agent, runs one execution on it, writes a memory value; what was written. */
async function writeData(url: string): Promise<Written> {
  const agent = await startExecutionAgent({
    controlPlaneUrl: url,
    nodeId: 'hello-agent',
    version: '1.0.0',
    reasoners: { summarize: { kind: 'answer' } },
  });
  try {
    await agent.register();
    const executed = await eventually('the agent takes an execution', async () => {
      const response = await fetch(`${url}/api/v1/execute/hello-agent.summarize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: { text: 'A long report.' } }),
      });
      return response.status === 200 ? ((await response.json()) as { execution_id: string }) : undefined;
    });
    const memory = await fetch(`${url}/api/v1/memory/set`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'release', scope: 'global', data: { version: '1.4.2', approved: true } }),
    });
    expect(memory.status).toBe(200);
    const execution = await (await fetch(`${url}/api/v1/executions/${executed.execution_id}`)).json();
    expect(execution.status).toBe('succeeded');
    const node = await (await fetch(`${url}/api/v1/nodes/hello-agent`)).json();
    return { executionId: executed.execution_id, execution, node };
  } finally {
    agent.stopHeartbeats();
    await agent.close();
  }
}

/** The restored control plane answers the same node, execution and memory value. */
async function expectSameData(url: string, written: Written): Promise<void> {
  const execution = await (await fetch(`${url}/api/v1/executions/${written.executionId}`)).json();
  expect(execution).toEqual(written.execution);
  const node = await fetch(`${url}/api/v1/nodes/hello-agent`);
  expect(node.status).toBe(200);
  const restoredNode = await node.json();
  for (const key of ['id', 'version', 'base_url', 'reasoners', 'registered_at']) {
    expect(restoredNode[key], key).toEqual(written.node[key]);
  }
  const memory = await fetch(`${url}/api/v1/memory/get`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key: 'release', scope: 'global' }),
  });
  expect(memory.status).toBe(200);
  expect((await memory.json()).data).toEqual({ version: '1.4.2', approved: true });
}

describe(page, () => {
  it('has the four commands this test runs: dump, restore, archive, unarchive', () => {
    expect(examples.map((e) => e.command.code.split(/\s/)[0])).toEqual([
      'pg_dump',
      'createdb',
      'tar',
      'mkdir',
    ]);
  });

  it.skipIf(!POSTGRES)(
    `pg_dump while the control plane runs, pg_restore into a new database, the same data there (${POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL'})`,
    async () => {
      const database = await throwawayDatabase('sy_backup_source');
      cleanups.push(() => database.drop());
      const source = await startControlPlaneProcess({ dir: scratchDir(), databaseUrl: database.url });
      cleanups.push(async () => void (await source.stop()));
      const written = await writeData(source.url);

      const work = scratchDir();
      await runPageCommand(page, dump!, { cwd: work, env: { DATABASE_URL: database.url! } });
      expect(existsSync(join(work, 'switchyard.dump'))).toBe(true);

      const restoredName = `sy_backup_restored_${randomBytes(4).toString('hex')}`;
      cleanups.push(async () => {
        const admin = await openDatabase({ url: process.env.DATABASE_URL, poolMax: 1 });
        try {
          await admin.raw(`drop database if exists ${restoredName} with (force)`);
        } finally {
          await admin.destroy();
        }
      });
      await runPageCommand(page, restore!, {
        cwd: work,
        env: libpqEnv(process.env.DATABASE_URL!),
        localize: (text) => text.split('switchyard_restored').join(restoredName),
      });

      const restored = await startControlPlaneProcess({
        dir: scratchDir(),
        databaseUrl: withDatabase(process.env.DATABASE_URL!, restoredName),
      });
      cleanups.push(async () => void (await restored.stop()));
      await expectSameData(restored.url, written);
    },
    180_000,
  );

  it.skipIf(POSTGRES)(
    `the embedded database: stop, tar, restore into a fresh directory, the same data there (${POSTGRES ? 'skipped: runs without DATABASE_URL' : 'PGlite'})`,
    async () => {
      const first = scratchDir();
      // The default data directory, ./.data, as the page's commands expect.
      const env = { SWITCHYARD_DATA_DIR: '.data' };
      const source = await startControlPlaneProcess({ dir: first, databaseUrl: undefined, env });
      const written = await writeData(source.url);
      expect((await source.stop()).code).toBe(0);

      await runPageCommand(page, archive!, { cwd: first });
      const second = scratchDir();
      copyFileSync(join(first, 'switchyard-data.tar.gz'), join(second, 'switchyard-data.tar.gz'));
      await runPageCommand(page, unarchive!, { cwd: second });
      expect(existsSync(join(second, '.data', 'control-plane', 'PG_VERSION'))).toBe(true);

      const restored = await startControlPlaneProcess({ dir: second, databaseUrl: undefined, env });
      cleanups.push(async () => void (await restored.stop()));
      await expectSameData(restored.url, written);
    },
    180_000,
  );
});
