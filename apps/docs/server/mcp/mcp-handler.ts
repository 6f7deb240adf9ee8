import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ProblemError } from '@switchyard/shared';
import { MCP_PATH } from '../../contract/mcp-contract.ts';
import type { Logger } from '../http/logger.ts';
import { readBody } from '../http/request-body.ts';
import { sendJson } from '../http/responses.ts';
import { createDocsMcpServer } from './docs-server.ts';
import type { DocsSources } from './docs-tools.ts';
import { RPC_ERROR } from './rpc-errors.ts';

/**
 * Largest request body `/mcp` reads. A tool call is a few hundred bytes (a search query is at
 * most 512 characters); this leaves room for a batch of them and nothing more.
 */
export const MCP_MAX_BODY_BYTES = 64 * 1024;

/** What a browser-based MCP client may send on `/mcp`, answered to its CORS preflight. */
const ALLOWED_REQUEST_HEADERS = 'Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID';

/** The methods `/mcp` answers: a stateless server has no stream to GET and no session to DELETE. */
const ALLOWED_METHODS = 'POST, OPTIONS';

const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

export interface McpEndpoint {
  /** True for the path the MCP server answers. */
  owns(pathname: string): boolean;
  /** Answers one request to {@link MCP_PATH}; the front handler has counted it and set the common headers. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface McpEndpointDeps {
  sources: DocsSources;
  logger: Logger;
  /**
   * Host names (without port) a request may name in its Host header; undefined accepts any.
   * See {@link rebindingGuardHostnames}.
   */
  allowedHostnames?: readonly string[];
  /** Default {@link MCP_MAX_BODY_BYTES}. */
  maxBodyBytes?: number;
}

/**
 * The Host names `/mcp` accepts on a server listening on `listenHost`. A server on a loopback
 * address can be reached by a page in the local browser through DNS rebinding (a name of the
 * attacker's that resolves to 127.0.0.1), which the Host header gives away: such a server accepts
 * only the loopback names and the host of its SITE_URL. A server on a public interface is reached
 * under whatever name its proxy or DNS gives it, which it cannot know, so it accepts any.
 */
export function rebindingGuardHostnames(listenHost: string, site: string): string[] | undefined {
  const bracketed = listenHost.includes(':') && !listenHost.startsWith('[') ? `[${listenHost}]` : listenHost;
  const loopback = LOOPBACK_HOSTNAMES.includes(bracketed.toLowerCase()) || /^127\./.test(listenHost);
  if (!loopback) return undefined;
  return [...new Set([...LOOPBACK_HOSTNAMES, new URL(site).hostname.toLowerCase()])];
}

/** The host name a Host header names, lower case, without the port; undefined when it names none. */
function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * A JSON-RPC error answer without an id, as the SDK's transport writes its own refusals: what
 * `/mcp` answers itself is JSON-RPC, whatever went wrong. (The front server's checks that come
 * before it, the rate limit and a missing Host, answer problem documents as on every path.)
 */
function sendRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Cache-Control', 'no-store');
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * `POST /mcp`: the docs MCP server over Streamable HTTP, stateless. Each request gets a server
 * and a transport of its own (a stateless transport must not serve two requests), answers in
 * plain JSON rather than an event stream, and is gone when its response is.
 */
export function createMcpEndpoint(deps: McpEndpointDeps): McpEndpoint {
  const maxBodyBytes = deps.maxBodyBytes ?? MCP_MAX_BODY_BYTES;
  return {
    owns: (pathname) => pathname === MCP_PATH,
    async handle(req, res) {
      const method = req.method ?? 'GET';
      if (method === 'OPTIONS') {
        res.statusCode = 204;
        res.setHeader('Allow', ALLOWED_METHODS);
        res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
        res.setHeader('Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS);
        res.setHeader('Access-Control-Max-Age', '600');
        res.end();
        req.resume();
        return;
      }
      if (method !== 'POST') {
        req.resume();
        sendRpcError(
          res,
          405,
          RPC_ERROR.serverError,
          `Method not allowed: ${MCP_PATH} answers POST (and OPTIONS).`,
          {
            Allow: ALLOWED_METHODS,
          },
        );
        return;
      }
      if (deps.allowedHostnames) {
        const hostname = hostnameOf(req.headers.host);
        if (!hostname || !deps.allowedHostnames.includes(hostname)) {
          req.resume();
          sendRpcError(
            res,
            403,
            RPC_ERROR.serverError,
            `Invalid Host header: ${String(req.headers.host).slice(0, 200)}`,
          );
          return;
        }
      }

      let body: unknown;
      try {
        const raw = await readBody(req, maxBodyBytes);
        body = JSON.parse(raw.toString('utf8'));
      } catch (error) {
        if (error instanceof ProblemError && error.code === 'payload_too_large') {
          sendRpcError(
            res,
            413,
            RPC_ERROR.serverError,
            `Payload Too Large: Request body must not exceed ${maxBodyBytes} bytes`,
            error.headers,
          );
          return;
        }
        if (error instanceof SyntaxError) {
          sendRpcError(res, 400, RPC_ERROR.parseError, 'Parse error: Invalid JSON');
          return;
        }
        throw error;
      }

      const server = createDocsMcpServer(deps.sources, deps.logger);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      // Refusals of the transport (406 without the Accept it requires, 415, a body that is not
      // JSON-RPC) are answered to the client; they are not faults of this server.
      transport.onerror = (error) =>
        deps.logger.debug({ err: error }, 'MCP request refused by the transport');
      res.once('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
  };
}
