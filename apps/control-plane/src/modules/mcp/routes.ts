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
/** The code MCP's reference servers answer an unknown session with (HTTP 404). */
const SESSION_NOT_FOUND = -32001;

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
export function mcpRouter(deps: { sessions: McpSessions }): Router {
  const { sessions } = deps;
  const router = new Router();

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
