import { type IncomingMessage, type RequestListener, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** The raw connection of an upgrade request, for the route that takes it over. */
export interface PendingUpgrade {
  socket: Duplex;
  /** The first bytes after the request head, which belong to the new protocol. */
  head: Buffer;
}

const pending = new WeakMap<IncomingMessage, PendingUpgrade>();

/**
 * Sends upgrade requests (`Connection: Upgrade`) through the app like every other request. Once a
 * server has an 'upgrade' listener, Node hands it every such request with the bare socket instead
 * of emitting 'request', so without this a WebSocket handshake would skip the request log, the
 * Host check, API-key auth and query validation. Here the request goes to `handler` (the Koa
 * callback) with a ServerResponse bound to the socket: a route that accepts the upgrade takes the
 * socket over (see {@link pendingUpgrade}); any other answer (a 401, a 400, a 404, even a 200 for
 * a route that ignores `Upgrade`) is written as a normal response with `Connection: close`, and
 * the socket ends after it, since Node's parser has already let go of the connection.
 *
 * A body sent with an upgrade request arrives in `head`, not in the request stream, so a route
 * reached this way reads an empty body; browsers and WebSocket clients never send one.
 */
export function attachUpgrades(server: Server, handler: RequestListener): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node hands over an upgraded socket with no 'error' listener at all: a client resetting the
    // connection while its answer is written would be an uncaught exception and end the process.
    // A broken connection is simply gone (the response and ws see it close).
    socket.on('error', () => socket.destroy());
    pending.set(req, { socket, head });
    // The upgrade event's socket is always a net.Socket for an http.Server (Duplex in the types).
    whenAnswered(socket as Socket, () => {
      const res = new ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket as Socket);
      res.once('finish', () => {
        // Ends once everything written has gone out, as Node does after a `Connection: close` answer.
        (socket as Socket).destroySoon();
      });
      handler(req, res);
    });
  });
}

/**
 * Runs `next` once the requests pipelined ahead of an upgrade on `socket` have been answered.
 * Node emits 'upgrade' as soon as it parses the request, even while an earlier one is still
 * answered on the same socket (and more wait their turn); a second response on the socket would
 * throw ERR_HTTP_SOCKET_ASSIGNED. Node's own 'finish' listener, added first, hands the socket to
 * the next queued response, so the wait goes on until no response holds it. A connection that
 * closes first never runs `next`.
 */
function whenAnswered(socket: Socket, next: () => void): void {
  const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (current) current.once('finish', () => whenAnswered(socket, next));
  else next();
}

/**
 * The connection of a WebSocket handshake, or undefined when `req` is not one: it did not come
 * through {@link attachUpgrades}, is not a GET, or asks for another protocol (`Upgrade: h2c`).
 * Taking it is the route's promise to answer on the socket itself (`ctx.respond = false`).
 */
export function pendingUpgrade(req: IncomingMessage): PendingUpgrade | undefined {
  const upgrade = pending.get(req);
  if (!upgrade || req.method !== 'GET') return undefined;
  const protocols = (req.headers.upgrade ?? '').split(',').map((p) => p.trim().toLowerCase());
  return protocols.includes('websocket') ? upgrade : undefined;
}

/**
 * Records on the request's response that the connection switched protocols. The WebSocket
 * library writes the 101 on the socket itself, so nothing is sent here: the response only keeps
 * the status (Node writes stored headers lazily, and nobody writes to it again), which the
 * request log reports when the connection closes.
 */
export function markSwitched(res: ServerResponse): void {
  if (!res.headersSent) res.writeHead(101);
}
