import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { isRoutable, type NodeInstanceRecord, type ReasonerSpec } from '../nodes/index.ts';

/** A registered function offered as an MCP tool, with the target a call of it executes. */
export interface FunctionTool {
  tool: Tool;
  /** The execution target: `<node>.<reasoner>` or `<node>.skill:<skill>`. */
  target: string;
}

/** MCP tool names: letters, digits, `_`, `-` and `.`, 1 to 128 characters. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * A function's tool name. A reasoner is `<node>.<reasoner>`, its target as written; a skill is
 * `<node>.skill.<skill>` (a target's colon is not allowed in a tool name). Node and function ids
 * carry no dots, so the two never collide, and neither collides with the built-in tools (no dot).
 */
export function functionToolName(nodeId: string, type: 'reasoner' | 'skill', functionId: string): string {
  return type === 'skill' ? `${nodeId}.skill.${functionId}` : `${nodeId}.${functionId}`;
}

/**
 * The tool's input schema: the function's `input_schema` as registered. An execution's input is
 * always a JSON object (the execute API's rule), and MCP requires an object schema, so a function
 * registered without one takes any object.
 */
function inputSchemaOf(spec: ReasonerSpec): Tool['inputSchema'] {
  const registered = spec.input_schema;
  if (registered && (registered.type === 'object' || registered.type === undefined)) {
    return { ...registered, type: 'object' } as Tool['inputSchema'];
  }
  return { type: 'object' };
}

function describe(nodeId: string, type: 'reasoner' | 'skill', spec: ReasonerSpec): string {
  const own = spec.description?.trim();
  const origin = `The ${type} "${spec.id}" of the agent node "${nodeId}", run through Switchyard as a recorded execution.`;
  return own ? `${own}\n\n${origin}` : origin;
}

/**
 * Every function a call could reach right now (on a routable instance), one tool per target.
 * When several versions of a node are routable, the most recently registered one describes the
 * tool (the listing is ordered by registration); a call still goes wherever traffic weights send it.
 */
export function functionTools(instances: readonly NodeInstanceRecord[]): FunctionTool[] {
  const byName = new Map<string, FunctionTool>();
  for (const instance of instances) {
    if (!isRoutable(instance)) continue;
    const kinds = [
      ['reasoner', instance.reasoners],
      ['skill', instance.skills],
    ] as const;
    for (const [type, specs] of kinds) {
      for (const spec of specs) {
        const name = functionToolName(instance.nodeId, type, spec.id);
        // A name MCP cannot carry (ids may be 200 characters) is left out; call_function still reaches it.
        if (!TOOL_NAME.test(name)) continue;
        byName.set(name, {
          tool: {
            name,
            title: `${instance.nodeId}: ${spec.id}`,
            description: describe(instance.nodeId, type, spec),
            inputSchema: inputSchemaOf(spec),
          },
          target: type === 'skill' ? `${instance.nodeId}.skill:${spec.id}` : `${instance.nodeId}.${spec.id}`,
        });
      }
    }
  }
  return [...byName.values()].sort((a, b) => a.tool.name.localeCompare(b.tool.name));
}

/** A digest of the tool list: a node event that changes no tool changes no fingerprint. */
export function fingerprint(tools: readonly FunctionTool[]): string {
  return createHash('sha256')
    .update(JSON.stringify(tools.map((t) => t.tool)))
    .digest('base64url');
}
