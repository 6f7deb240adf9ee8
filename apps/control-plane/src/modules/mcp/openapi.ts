import { MAX_JSON_DEPTH } from '@switchyard/shared';
import { z } from 'zod';
import type { ZodOpenApiPathsObject, ZodOpenApiResponseObject } from 'zod-openapi';
import { problemResponses } from '../../platform/openapi/problem.ts';
import { EXECUTE_BODY_LIMIT } from '../executions/index.ts';

const SESSION = 'c1f4d2a8-93b7-4e0a-b5d6-2f81c7e94a30';

const JsonRpcMessageSchema = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number(), z.null()]).optional(),
    method: z.string().optional(),
    params: z.unknown().optional(),
    result: z.unknown().optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
  })
  .meta({ id: 'JsonRpcMessage', description: 'A JSON-RPC 2.0 request, notification or response.' });

const SessionHeader = z.object({
  'mcp-session-id': z.string().optional().meta({
    description: 'The session, as the answer to initialize named it; required on every later request.',
    example: SESSION,
  }),
});

/** A JSON-RPC error answered over HTTP (no session, unknown session, unparsable body). */
function rpcErrorResponse(description: string, code: number, message: string): ZodOpenApiResponseObject {
  return {
    description,
    content: {
      'application/json': {
        schema: JsonRpcMessageSchema,
        example: { jsonrpc: '2.0', id: null, error: { code, message } },
      },
    },
  };
}

const wrongHost = rpcErrorResponse(
  'The server listens on a loopback address (`server.host`, 127.0.0.1 by default) and the Host header names something else: a DNS-rebinding page in a local browser (JSON-RPC -32000).',
  -32000,
  'Invalid Host header "attacker.example:8080": this server answers /mcp on loopback names only.',
);

const noSession = rpcErrorResponse(
  'No `Mcp-Session-Id` on a request other than initialize (JSON-RPC -32600); on POST also a body that is not JSON (-32700) or is nested too deep (-32600).',
  -32600,
  'Bad Request: no Mcp-Session-Id header; send initialize first.',
);
const unknownSession = rpcErrorResponse(
  'The session ended (closed, idle, evicted) or lives on another replica (JSON-RPC -32001): initialize a new one.',
  -32001,
  'Session not found: it ended or lives on another server; initialize a new one.',
);

export const mcpOpenApi: ZodOpenApiPathsObject = {
  '/mcp': {
    post: {
      operationId: 'postMcpMessage',
      tags: ['MCP'],
      summary: 'Send a Model Context Protocol message (Streamable HTTP)',
      description: `The control plane as an MCP server (content/api/mcp.md): an \`initialize\` request without a session opens one and answers its id in \`Mcp-Session-Id\`; later requests name it. Tools: discover_capabilities, call_function, start_function, get_execution, list_approvals, decide_approval, and one tool per registered function. Bad tool arguments answer a JSON-RPC error (-32602) and record nothing. Send \`Accept: application/json, text/event-stream\`. At most ${EXECUTE_BODY_LIMIT} bytes, nested at most ${MAX_JSON_DEPTH} levels.`,
      requestParams: { header: SessionHeader },
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: JsonRpcMessageSchema,
            example: {
              jsonrpc: '2.0',
              id: 2,
              method: 'tools/call',
              params: { name: 'hello-agent.greet', arguments: { name: 'Ada' } },
            },
          },
        },
      },
      responses: {
        '200': {
          description: "The JSON-RPC response; an initialize's answer carries the new session's id.",
          headers: z.object({
            'Mcp-Session-Id': z.string().optional().meta({ description: 'The session (initialize only).' }),
          }),
          content: {
            'application/json': {
              schema: JsonRpcMessageSchema,
              example: {
                jsonrpc: '2.0',
                id: 2,
                result: {
                  content: [{ type: 'text', text: '{"execution_id": "exec_…", "status": "succeeded"}' }],
                  structuredContent: { execution_id: 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x', status: 'succeeded' },
                },
              },
            },
          },
        },
        '202': { description: 'A notification or response from the client, accepted (no body).' },
        '400': noSession,
        '403': wrongHost,
        '404': unknownSession,
        '406': rpcErrorResponse(
          'Accept does not name both application/json and text/event-stream (JSON-RPC -32000).',
          -32000,
          'Not Acceptable: Client must accept both application/json and text/event-stream',
        ),
        '415': rpcErrorResponse(
          'The body is not sent as application/json (JSON-RPC -32000).',
          -32000,
          'Unsupported Media Type: Content-Type must be application/json',
        ),
        ...problemResponses('/mcp', [
          {
            code: 'payload_too_large',
            when: `The body is over ${EXECUTE_BODY_LIMIT} bytes.`,
            detail: `The body exceeds the limit of ${EXECUTE_BODY_LIMIT} bytes.`,
          },
        ]),
      },
    },
    get: {
      operationId: 'openMcpStream',
      tags: ['MCP'],
      summary: "Open a session's notification stream",
      description:
        "Server-Sent Events carrying the server's messages outside any request, such as `notifications/tools/list_changed` when agent nodes come and go. One per session; send `Accept: text/event-stream`.",
      requestParams: { header: SessionHeader },
      responses: {
        '200': {
          description: 'The stream (text/event-stream); it stays open.',
          content: {
            'text/event-stream': {
              schema: z.string(),
              example:
                'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
            },
          },
        },
        '400': noSession,
        '403': wrongHost,
        '404': unknownSession,
        '406': rpcErrorResponse(
          'Accept does not name text/event-stream (JSON-RPC -32000).',
          -32000,
          'Not Acceptable: Client must accept text/event-stream',
        ),
      },
    },
    delete: {
      operationId: 'endMcpSession',
      tags: ['MCP'],
      summary: 'End a session',
      description: 'Closes the session and its stream; its id answers 404 afterwards.',
      requestParams: { header: SessionHeader },
      responses: {
        '200': { description: 'Ended (no body).' },
        '400': noSession,
        '403': wrongHost,
        '404': unknownSession,
      },
    },
  },
};
