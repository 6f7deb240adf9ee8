import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { LRUCache } from 'lru-cache';
import type { OpenStreams } from '../../platform/http/open-streams.ts';
import type { Logger } from '../../platform/logger.ts';

interface Session {
  server: Server;
  transport: StreamableHTTPServerTransport;
  /** Forgets the session's entry in the open streams (ended at shutdown). */
  forget: () => void;
}

export interface McpSessionsDeps {
  createServer: () => Server;
  /** Sessions kept at once; the least recently used one is closed to make room. */
  maxSessions: number;
  /** A session unused this long is closed; its client starts a new one (MCP's 404 rule). */
  idleMs: number;
  streams?: OpenStreams;
  log: Logger;
}

/**
 * The open MCP sessions of this process. A session is what lets the control plane tell a client
 * that its tool list changed (over the client's GET stream), so it is stateful and lives in the
 * replica that created it: a request naming a session another replica holds (or one closed for
 * idleness) answers 404, and an MCP client then initializes a new one. Behind a load balancer,
 * route /mcp by the Mcp-Session-Id header to keep a session on one replica
 * (content/api/mcp.md).
 */
export function createMcpSessions(deps: McpSessionsDeps) {
  const sessions = new LRUCache<string, Session>({
    max: deps.maxSessions,
    ttl: deps.idleMs,
    updateAgeOnGet: true,
    ttlAutopurge: true,
    dispose: (session) => {
      session.forget();
      // Closing ends the session's open streams; their clients see the stream end.
      session.server
        .close()
        .catch((error) => deps.log.warn({ err: error }, 'could not close an MCP session'));
    },
  });

  return {
    get: (id: string) => sessions.get(id),
    get size() {
      return sessions.size;
    },

    /** Answers an initialize request with a new session (its id goes back in Mcp-Session-Id). */
    async open(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
      const server = deps.createServer();
      let opened = false;
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableJsonResponse: true,
        onsessioninitialized: (id) => {
          opened = true;
          const forget = deps.streams?.add(() => sessions.delete(id)) ?? (() => {});
          sessions.set(id, { server, transport, forget });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      // An initialize the transport refused (a wrong Accept, say) leaves nothing behind.
      if (!opened) await server.close();
    },

    /** Every open session's server, to notify them all. */
    servers: () => [...sessions.values()].map((session) => session.server),

    closeAll(): void {
      sessions.clear();
    },
  };
}

export type McpSessions = ReturnType<typeof createMcpSessions>;
