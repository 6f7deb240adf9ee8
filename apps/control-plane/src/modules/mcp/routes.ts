import Router from '@koa/router';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { jsonTextDepth, MAX_JSON_DEPTH } from '@switchyard/shared';
import type { Context } from 'koa';
import { readBodyText } from '../../platform/http/request-body.ts';
import { EXECUTE_BODY_LIMIT } from '../executions/index.ts';
import type { McpSessions } from './sessions.ts';

/** JSON-RPC error codes the transport itself answers with before any MCP method runs. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** The code the SDK's transport answers its own HTTP-level refusals with. */
const SERVER_ERROR = -32000;
/** The code MCP's reference servers answer an unknown session with (HTTP 404). */
const SESSION_NOT_FOUND = -32001;

/** Host names a loopback listener is reached by; any other is a name someone pointed at it. */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether the server at `listenHost` only ever hears this machine (127.0.0.0/8, ::1, localhost).
 * Such a server can still be reached by a web page in the local browser through DNS rebinding (a
 * name of the page's own that resolves to 127.0.0.1), which MCP servers must refuse; the Host
 * header gives it away. A server on another interface is reached under names it cannot know.
 */
export function listensOnLoopback(listenHost: string): boolean {
  return /^127\./.test(listenHost) || ['::1', '[::1]', 'localhost'].includes(listenHost.toLowerCase());
}

function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** A JSON-RPC error answered over HTTP, for what never reaches a session. */
function rpcError(ctx: Context, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = { jsonrpc: '2.0', id: null, error: { code, message } };
}

/** Parses a JSON-RPC body, answering the parse error itself; undefined when it did. */
function parseMessage(ctx: Context, text: string): { message: unknown } | undefined {
  const depth = jsonTextDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    rpcError(
      ctx,
      400,
      INVALID_REQUEST,
      `The JSON body is nested ${depth} levels deep; the limit is ${MAX_JSON_DEPTH}.`,
    );
    return undefined;
  }
  try {
    return { message: JSON.parse(text) };
  } catch (error) {
    rpcError(ctx, 400, PARSE_ERROR, `Parse error: ${(error as Error).message}`);
    return undefined;
  }
}

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP (content/api/mcp.md). POST carries
 * JSON-RPC messages (an initialize without a session opens one), GET opens a session's stream of
 * notifications, DELETE ends a session. Behind the API key like the rest of the API. The body
 * limit is the execute API's: a tool call carries a function's input.
 */
export function mcpRouter(deps: { sessions: McpSessions; listenHost: string }): Router {
  const { sessions } = deps;
  const guardHost = listensOnLoopback(deps.listenHost);
  const router = new Router();

  // Before any MCP handling: a loopback server answers loopback names only (DNS rebinding).
  router.use('/mcp', async (ctx, next) => {
    const hostname = hostnameOf(ctx.get('host'));
    if (guardHost && !(hostname && (LOOPBACK_NAMES.has(hostname) || hostname.startsWith('127.')))) {
      ctx.req.resume();
      rpcError(
        ctx,
        403,
        SERVER_ERROR,
        `Invalid Host header "${ctx.get('host').slice(0, 200)}": this server answers /mcp on loopback names only.`,
      );
      return;
    }
    await next();
  });

  /** The session a request names, or undefined after answering 400 (none named) or 404 (unknown). */
  function sessionOf(ctx: Context) {
    const id = ctx.get('mcp-session-id');
    if (!id) {
      rpcError(ctx, 400, INVALID_REQUEST, 'Bad Request: no Mcp-Session-Id header; send initialize first.');
      return undefined;
    }
    const session = sessions.get(id);
    if (!session) {
      rpcError(
        ctx,
        404,
        SESSION_NOT_FOUND,
        'Session not found: it ended or lives on another server; initialize a new one.',
      );
      return undefined;
    }
    return session;
  }

  router.post('/mcp', async (ctx) => {
    const parsed = parseMessage(ctx, await readBodyText(ctx, EXECUTE_BODY_LIMIT));
    if (!parsed) return;
    if (!ctx.get('mcp-session-id') && isInitializeRequest(parsed.message)) {
      ctx.respond = false;
      await sessions.open(ctx.req, ctx.res, parsed.message);
      return;
    }
    const session = sessionOf(ctx);
    if (!session) return;
    ctx.respond = false;
    await session.transport.handleRequest(ctx.req, ctx.res, parsed.message);
  });

  for (const method of ['get', 'delete'] as const) {
    router[method]('/mcp', async (ctx) => {
      const session = sessionOf(ctx);
      if (!session) return;
      ctx.respond = false;
      await session.transport.handleRequest(ctx.req, ctx.res);
    });
  }

  return router;
}
