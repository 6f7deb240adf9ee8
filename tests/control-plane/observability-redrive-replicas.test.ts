/**
 * Two replicas redriving the observability dead-letter queue at once. PostgreSQL only:
 * PGlite's files belong to a single process, so there is no second replica to run (the same race
 * on one process is in apps/control-plane/test/observability.test.ts, on both databases).
 *
 * Two real control-plane processes (A and B) on one throwaway database and one real collector on
 * 127.0.0.1. Batches of one event each are parked while the collector answers 503; then it takes
 * everything, and redrives are sent to both replicas at once:
 * - without a body, two per replica: the collector receives every parked batch exactly once, each
 *   answer lists only batches it delivered, and the answers add up to what was parked;
 * - with the same `batch_ids` on both replicas: one delivers them, the other sends nothing (409
 *   while the first holds them, 404 once they are gone), and the collector receives each once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneProcess, startControlPlaneProcess } from '../support/control-plane-process.ts';
import { eventually } from '../support/eventually.ts';
import { type ThrowawayDatabase, throwawayDatabase } from '../support/throwaway-database.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const RUN_ID = randomBytes(3).toString('hex');
const PATH = '/api/v1/settings/observability-webhook';
/** More than one redrive takes (100), so both replicas' redrives find batches to send. */
const PARKED = 150;
const NAMED = 10;

/** Batch-sized forwarding with one attempt, collectors on loopback over http (local development). */
const ENV = {
  SWITCHYARD_OBSERVABILITY_BATCH_SIZE: '1',
  SWITCHYARD_OBSERVABILITY_BATCH_TIMEOUT: '10ms',
  SWITCHYARD_OBSERVABILITY_MAX_ATTEMPTS: '1',
  SWITCHYARD_OBSERVABILITY_SNAPSHOT_INTERVAL: '0',
  SWITCHYARD_OBSERVABILITY_WORKERS: '4',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_HTTP: 'true',
  SWITCHYARD_EXECUTION_QUEUE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
};

interface Collector {
  url: string;
  /** The batch id of every request, in arrival order. */
  received: string[];
  status: number;
  close(): Promise<void>;
}

/** A collector that answers `status`, 20 ms after each request (so redrives overlap). */
async function startCollector(): Promise<Collector> {
  const collector: Collector = {
    url: '',
    received: [],
    status: 503,
    async close() {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    collector.received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).batch_id);
    const status = collector.status;
    await new Promise((done) => setTimeout(done, 20));
    res.statusCode = status;
    res.end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  collector.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/ingest`;
  return collector;
}

async function api(base: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

let dirA: string;
let dirB: string;
let database: ThrowawayDatabase | undefined;
let replicaA: ControlPlaneProcess | undefined;
let replicaB: ControlPlaneProcess | undefined;
let collector: Collector | undefined;

beforeAll(async () => {
  if (!POSTGRES) return;
  dirA = mkdtempSync(join(tmpdir(), 'sy-redrive-a-'));
  dirB = mkdtempSync(join(tmpdir(), 'sy-redrive-b-'));
  database = await throwawayDatabase('sy_redrive_replicas');
  // One after the other: the first one migrates the fresh database.
  replicaA = await startControlPlaneProcess({ dir: dirA, databaseUrl: database.url, env: ENV });
  replicaB = await startControlPlaneProcess({ dir: dirB, databaseUrl: database.url, env: ENV });
  collector = await startCollector();
});

afterAll(async () => {
  await Promise.all([replicaA?.stop(), replicaB?.stop()]);
  await collector?.close();
  await database?.drop();
  for (const dir of [dirA, dirB]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Writes `count` memory values through A and B in turn, and waits until their batches are parked. */
async function park(count: number, total: number): Promise<string[]> {
  const a = replicaA!;
  const b = replicaB!;
  for (let i = 0; i < count; i++) {
    const answer = await api(i % 2 ? b.url : a.url, 'POST', '/api/v1/memory/set', {
      key: `redrive-${RUN_ID}-${total}-${i}`,
      data: i,
    });
    expect(answer.status).toBe(200);
  }
  return eventually(
    `${total} parked batches`,
    async () => {
      const dlq = await api(a.url, 'GET', `${PATH}/dlq?limit=100`);
      return dlq.body.total_batches === total ? dlq.body.total_batches : undefined;
    },
    () => `A:\n${a.output()}\nB:\n${b.output()}`,
  ).then(async () => {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await api(a.url, 'GET', `${PATH}/dlq?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      ids.push(...page.body.batches.map((batch: any) => batch.batch_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    return ids;
  });
}

/** How often the collector received each batch id since `from`. */
function receipts(from: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of collector!.received.slice(from)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

describe('two replicas redriving the observability DLQ at once', () => {
  it.skipIf(!POSTGRES)(
    `deliver every parked batch exactly once, and their answers add up to what was parked (${POSTGRES ? 'PostgreSQL' : 'skipped: needs DATABASE_URL, PGlite serves one process'})`,
    { timeout: 120_000 },
    async () => {
      const a = replicaA!;
      const b = replicaB!;
      const c = collector!;
      expect((await api(a.url, 'POST', PATH, { url: c.url })).status).toBe(200);

      // Without a body, two redrives per replica at once.
      const parked = await park(PARKED, PARKED);
      c.status = 204;
      let from = c.received.length;
      const answers = await Promise.all(
        [a, b, a, b].map((replica) => api(replica.url, 'POST', `${PATH}/redrive`)),
      );
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect([...receipts(from).entries()].sort()).toEqual(parked.map((id) => [id, 1]).sort());
      const results = answers.flatMap((answer) => answer.body.results);
      expect(results.map((r: any) => r.batch_id).sort()).toEqual([...parked].sort());
      expect(results.every((r: any) => r.delivered === true)).toBe(true);
      const sum = (field: string) => answers.reduce((total, answer) => total + answer.body[field], 0);
      expect([sum('attempted'), sum('delivered'), sum('failed'), sum('delivered_events')]).toEqual([
        PARKED,
        PARKED,
        0,
        PARKED,
      ]);
      // More than one redrive's worth: more than one of them sent batches.
      expect(answers.filter((answer) => answer.body.delivered > 0).length).toBeGreaterThan(1);
      const after = await api(b.url, 'GET', `${PATH}/status`);
      expect(after.body).toMatchObject({ forwarded_total: PARKED, dlq_batches: 0 });

      // The same batch ids on both replicas at once: one sends them, the other nothing.
      c.status = 503;
      const named = await park(NAMED, NAMED);
      c.status = 204;
      from = c.received.length;
      const both = await Promise.all(
        [a, b].map((replica) => api(replica.url, 'POST', `${PATH}/redrive`, { batch_ids: named })),
      );
      const statuses = both.map((answer) => answer.status).sort();
      expect(statuses[0]).toBe(200);
      expect([404, 409]).toContain(statuses[1]);
      const delivered = both.find((answer) => answer.status === 200)!;
      expect(delivered.body).toMatchObject({ attempted: NAMED, delivered: NAMED, remaining: 0 });
      expect([...receipts(from).entries()].sort()).toEqual(named.map((id) => [id, 1]).sort());
      const refused = both.find((answer) => answer.status !== 200)!;
      expect(refused.body.detail).toContain('nothing was redriven');
    },
  );
});
