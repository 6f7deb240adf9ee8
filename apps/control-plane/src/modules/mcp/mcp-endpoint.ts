import type Router from '@koa/router';
import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/index.ts';
import type { OpenStreams } from '../../platform/http/open-streams.ts';
import type { Logger } from '../../platform/logger.ts';
import type { NodeInstanceRecord } from '../nodes/index.ts';
import type { BuiltinToolDeps } from './builtin-tools.ts';
import { createMcpToolbox } from './mcp-server.ts';
import { mcpRouter } from './routes.ts';
import { createMcpSessions } from './sessions.ts';
import { createToolCatalog } from './tool-catalog.ts';

/** Sessions one process keeps; past it the least recently used one is closed. */
export const MCP_MAX_SESSIONS = 1_000;
/** A session unused for this long is closed (its client initializes again). */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;

export interface McpEndpointDeps extends BuiltinToolDeps {
  listInstances: () => Promise<NodeInstanceRecord[]>;
  events: EventBus;
  clock: Clock;
  log: Logger;
  version: string;
  streams?: OpenStreams;
  /** The interface the server listens on (`server.host`): on loopback, /mcp answers loopback names only. */
  listenHost: string;
}

/** `/mcp` wired together: the tool catalog, the per-session servers and the HTTP routes. */
export function mcpEndpoint(deps: McpEndpointDeps): Router {
  const sessions = createMcpSessions({
    createServer: () => toolbox.createMcpServer(),
    maxSessions: MCP_MAX_SESSIONS,
    idleMs: MCP_SESSION_IDLE_MS,
    streams: deps.streams,
    log: deps.log,
  });
  const catalog = createToolCatalog({
    listInstances: deps.listInstances,
    events: deps.events,
    clock: deps.clock,
    log: deps.log,
    listening: () => sessions.size > 0,
    onChange: () => {
      for (const server of sessions.servers()) {
        // A session whose client holds no stream open has nowhere to be told; it lists again when it asks.
        server.sendToolListChanged().catch(() => {});
      }
    },
  });
  const toolbox = createMcpToolbox({ ...deps, functionTools: catalog.list });
  return mcpRouter({ sessions, listenHost: deps.listenHost });
}
