/**
 * content/operations/postgresql.md, "DATABASE_URL": every connection string the page shows is
 * given to a real control plane, against a real PostgreSQL server that speaks TLS with a
 * certificate from a CA of this test's own (so Node's CA list does not know it):
 *
 * - `sslmode=verify-full` alone is refused (the certificate cannot be verified), and so is
 *   `sslmode=require`, which the page says node-postgres treats as verify-full;
 * - `verify-full` with `sslrootcert` naming the CA, and `no-verify`, start, and every connection
 *   the control plane holds is encrypted;
 * - `disable` starts, and no connection is encrypted.
 *
 * The server is a PostgreSQL cluster of its own (initdb in a scratch directory, run as the
 * `postgres` user, on a free port), since TLS cannot be switched on for the shared server of
 * DATABASE_URL. Runs with the PostgreSQL suite (DATABASE_URL set); needs the PostgreSQL server
 * programs (Debian's postgresql package), openssl and root (to run the cluster as `postgres`).
 *
 * Substituted: `db.internal:5432` becomes the cluster's address, `/etc/switchyard/db-ca.pem` the
 * test's CA file.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlaneProcess } from '../support/control-plane-process.ts';
import { type BackgroundCommand, fencedBlocks, runShell, startShell } from '../support/doc-examples.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/free-port.ts';
import { operationsPage } from '../support/operations-pages.ts';

const POSTGRES = Boolean(process.env.DATABASE_URL);
const { page, markdown } = operationsPage('postgresql.md');
const shown = fencedBlocks(markdown).find((b) => b.lang === 'text' && b.code.includes('sslmode='));
const urls = (shown?.code ?? '').split('\n').filter((line) => line.startsWith('postgres://'));

let dir: string;
let port: number;
let cluster: BackgroundCommand | undefined;
const cleanups: Array<() => Promise<void>> = [];

/** The PostgreSQL server programs of the newest installed major version. */
function serverBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(`no PostgreSQL server programs under ${base}: install Debian's postgresql package`);
  }
  return join(base, versions[0]!, 'bin');
}

async function psql(sql: string): Promise<string> {
  const result = await runShell(
    `psql -h 127.0.0.1 -p ${port} -U postgres -d postgres -v ON_ERROR_STOP=1 -Atc "${sql}"`,
  );
  if (result.code !== 0) throw new Error(`psql failed: ${result.stderr}`);
  return result.stdout.trim();
}

beforeAll(async () => {
  if (!POSTGRES) return;
  const bin = serverBin();
  dir = mkdtempSync(join(tmpdir(), 'sy-pg-tls-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  // The CA and the server certificate it signs, valid for the address the URLs will name.
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=switchyard test CA',
  ]);
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  ]);
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'san.cnf',
  ]);
  // PostgreSQL refuses to run as root and wants its key readable by its user alone.
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  chmodSync(dir, 0o755);
  for (const file of ['server.key', 'server.crt', 'ca.pem']) chownSync(join(dir, file), uid, gid);
  chmodSync(join(dir, 'server.key'), 0o600);
  chownSync(dir, uid, gid);
  execFileSync(
    'runuser',
    ['-u', 'postgres', '--', join(bin, 'initdb'), '-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust'],
    {
      stdio: 'pipe',
    },
  );
  port = await freePort();
  cluster = startShell(
    [
      'exec runuser -u postgres --',
      join(bin, 'postgres'),
      `-D ${join(dir, 'data')} -p ${port} -k ${dir}`,
      '-c listen_addresses=127.0.0.1 -c ssl=on',
      `-c ssl_cert_file=${join(dir, 'server.crt')} -c ssl_key_file=${join(dir, 'server.key')}`,
    ].join(' '),
  );
  cleanups.push(async () => cluster?.stop());
  await eventually(
    'the TLS cluster accepts connections',
    async () => ((await psql('select 1').catch(() => '')) === '1' ? true : undefined),
    () => cluster?.output() ?? '',
  );
  // The role and database of the page's "Role and database".
  await psql("create role switchyard login password 'change-me'");
  await psql('create database switchyard owner switchyard');
}, 120_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const localize = (url: string) =>
  url
    .split('db.internal:5432')
    .join(`127.0.0.1:${port}`)
    .split('/etc/switchyard/db-ca.pem')
    .join(join(dir, 'ca.pem'));

/** Starts a control plane on `url`; whether its connections are encrypted, or why it failed. */
async function tryUrl(
  url: string,
): Promise<{ started: true; ssl: boolean[] } | { started: false; why: string }> {
  const work = mkdtempSync(join(tmpdir(), 'sy-pg-tls-cp-'));
  try {
    const server = await startControlPlaneProcess({ dir: work, databaseUrl: url, readyTimeoutMs: 30_000 });
    try {
      const ssl = (
        await psql(
          "select s.ssl from pg_stat_ssl s join pg_stat_activity a using (pid) where a.usename = 'switchyard'",
        )
      )
        .split('\n')
        .map((v) => v === 't');
      return { started: true, ssl };
    } finally {
      await server.stop();
    }
  } catch (error) {
    return { started: false, why: String(error) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

describe(`${page}: DATABASE_URL and TLS`, () => {
  it('shows four connection strings', () => {
    expect(urls.map((u) => new URL(u).search)).toEqual([
      '?sslmode=verify-full',
      '?sslmode=verify-full&sslrootcert=/etc/switchyard/db-ca.pem',
      '?sslmode=no-verify',
      '?sslmode=disable',
    ]);
  });

  it.skipIf(!POSTGRES)(
    `each connection string does what the page says against a TLS server with a private CA (${POSTGRES ? 'PostgreSQL' : 'skipped: runs with DATABASE_URL'})`,
    async () => {
      const [verifyFull, withCa, noVerify, disable] = urls.map(localize);

      const refused = await tryUrl(verifyFull!);
      expect(refused.started, 'verify-full without the CA').toBe(false);
      expect((refused as { why: string }).why).toMatch(/certificate/);

      // node-postgres reads require as verify-full: refused too.
      const required = await tryUrl(verifyFull!.replace('sslmode=verify-full', 'sslmode=require'));
      expect(required.started, 'require').toBe(false);
      expect((required as { why: string }).why).toMatch(/certificate/);

      for (const [name, url] of [
        ['verify-full with sslrootcert', withCa!],
        ['no-verify', noVerify!],
      ] as const) {
        const result = await tryUrl(url);
        expect(result, name).toMatchObject({ started: true });
        const { ssl } = result as { ssl: boolean[] };
        expect(ssl.length, `${name}: connections`).toBeGreaterThan(0);
        expect(new Set(ssl), `${name}: every connection encrypted`).toEqual(new Set([true]));
      }

      const plain = await tryUrl(disable!);
      expect(plain).toMatchObject({ started: true });
      expect(new Set((plain as { ssl: boolean[] }).ssl), 'disable: none encrypted').toEqual(new Set([false]));
    },
    240_000,
  );
});
