import { createServer } from 'node:http';

/**
 * A loopback port nothing listens on right now, for a process that must be told its port up front
 * (a child process, start.mjs). Servers started in-process listen on port 0 instead.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}
