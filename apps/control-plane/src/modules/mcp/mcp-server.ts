import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fieldErrors } from '@switchyard/shared';
import { readCallerContext } from '../../platform/http/context-headers.ts';
import type { Logger } from '../../platform/logger.ts';
import { syncResult } from '../executions/index.ts';
import { type BuiltinToolDeps, builtinTools, describeTool } from './builtin-tools.ts';
import type { FunctionTool } from './function-tools.ts';
import { RpcError, toolAnswer, toolFailure } from './tool-results.ts';

export interface McpServerDeps extends BuiltinToolDeps {
  /** The registered functions offered as tools right now. */
  functionTools: () => Promise<FunctionTool[]>;
  log: Logger;
  version: string;
}

const INSTRUCTIONS = [
  'Switchyard runs AI agents as services. Each agent node serves functions (reasoners and skills).',
  'Every registered function is also a tool of its own, named <node>.<function> (skills: <node>.skill.<function>); calling it runs the function and answers its result.',
  'Use discover_capabilities to see the fleet, call_function for quick work, start_function plus get_execution (wait_seconds) for long work, and list_approvals / decide_approval for executions waiting for a person.',
  'Every call is a recorded execution; send X-Workflow-ID or X-Run-ID headers on the connection to group calls into one workflow.',
].join(' ');

/**
 * The target a function tool's name names: `<node>.<fn>` a reasoner, `<node>.skill.<fn>` a skill
 * (function-tools.ts). Read from the name rather than from the listing, so a call made just after
 * a node registered, or a moment after it left, is answered by the execution path like any other.
 */
function targetOfToolName(name: string): string | undefined {
  const skill = /^([^.]+)\.skill\.([^.]+)$/.exec(name);
  if (skill) return `${skill[1]}.skill:${skill[2]}`;
  return /^[^.]+\.[^.]+$/.test(name) ? name : undefined;
}

function headerReader(headers: Record<string, string | string[] | undefined> | undefined) {
  return (name: string) => {
    const value = headers?.[name];
    return Array.isArray(value) ? value.join(', ') : (value ?? '');
  };
}

/** Builds the tool set once; each session gets a `Server` sharing it (see createMcpServer). */
export function createMcpToolbox(deps: McpServerDeps) {
  const builtins = builtinTools(deps);
  const byName = new Map(builtins.map((spec) => [spec.name, spec]));
  const described = builtins.map(describeTool);

  /** One MCP session's server: the tool list and tool calls, answered by the control plane's services. */
  function createMcpServer(): Server {
    const server = new Server(
      { name: 'switchyard', title: 'Switchyard control plane', version: deps.version },
      { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [...described, ...(await deps.functionTools()).map((fn) => fn.tool)],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name } = request.params;
      const args = request.params.arguments ?? {};
      try {
        const context = readCallerContext(headerReader(extra.requestInfo?.headers));
        const builtin = byName.get(name);
        if (builtin) {
          const parsed = builtin.input.safeParse(args);
          if (!parsed.success) {
            const errors = fieldErrors(parsed.error);
            throw new RpcError(
              ErrorCode.InvalidParams,
              `Invalid arguments for ${name}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
              { code: 'invalid_request', errors },
            );
          }
          // Each tool's schema fixes its own argument type; the union of them is what `run` takes.
          return await builtin.run({ args: parsed.data as never, context, signal: extra.signal });
        }
        const target = targetOfToolName(name);
        if (!target) {
          throw new RpcError(
            ErrorCode.InvalidParams,
            `Unknown tool "${name.slice(0, 200)}"; see tools/list.`,
          );
        }
        const { row } = await deps.executions.executeSync(target, args, context);
        return toolAnswer(syncResult(row));
      } catch (error) {
        return toolFailure(error, deps.log, name);
      }
    });
    return server;
  }

  return { createMcpServer };
}
