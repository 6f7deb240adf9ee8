import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Where the kernel's ephemeral ports begin: every outgoing connection's local port, and every
 * `listen(0)`, comes from there up. Linux says in /proc; 32768 is its default.
 */
function ephemeralFloor(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return Number(low) || 32_768;
  } catch {
    return 32_768;
  }
}

/** The ports below the ephemeral range are split into blocks, one per Vitest worker. */
const FIRST_PORT = 12_000;
const BLOCK = 2_000;
const WORKERS = Math.max(1, Math.floor((ephemeralFloor() - FIRST_PORT) / BLOCK));
const worker = (Number(process.env.VITEST_POOL_ID ?? 1) - 1) % WORKERS;
const blockStart = FIRST_PORT + Math.max(0, worker) * BLOCK;
let cursor = Math.floor(Math.random() * BLOCK);

function listens(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/**
 * A loopback port nothing listens on right now, for a process that must be told its port up front
 * (a child process, start.mjs). Servers started in-process listen on port 0 instead.
 *
 * Not an answer of `listen(0)`: that port is from the ephemeral range, which every outgoing
 * connection of every test also draws from, and a child can take seconds to listen (creating its
 * database first). A run failed once that way, the port taken in between (EADDRINUSE). Ports come
 * from below that range instead, in turn, each Vitest worker from its own block, so neither a
 * connection nor the file running beside this one can be handed the same port.
 */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < BLOCK; tried++) {
    const port = blockStart + (cursor++ % BLOCK);
    if (await listens(port)) return port;
  }
  throw new Error(`no free port in ${blockStart}-${blockStart + BLOCK - 1}`);
}
