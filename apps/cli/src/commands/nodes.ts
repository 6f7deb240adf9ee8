import { ApiProblem, type components, type DataOf, unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import { statusColour } from '../colours.ts';
import type { Context } from '../context.ts';
import { CommandFailed, UsageError } from '../failures.ts';
import { ago, indent, table } from '../format.ts';
import { examples } from '../help.ts';
import { integerIn, oneOf } from '../values.ts';

type Schemas = components['schemas'];
/** A node as GET /api/v1/nodes/{id} answers it: its newest instance's fields and every instance. */
type NodeRecord = Schemas['Node'];
type Instance = Schemas['NodeInstance'];
/** A page of the UI's node list, and a node as it lists it. */
type NodePage = DataOf<Awaited<ReturnType<typeof listPage>>>;
type NodeSummary = NodePage['nodes'][number];

const STATES = ['starting', 'ready', 'degraded', 'offline'] as const;

function listPage(ctx: Context, query: { status?: (typeof STATES)[number]; tag?: string }, offset: number) {
  return ctx.client.GET('/api/ui/v1/nodes', {
    params: { query: { ...query, limit: '200', offset: String(offset) } },
  });
}

/** Every node the control plane knows, page after page. */
async function allNodes(
  ctx: Context,
  query: { status?: (typeof STATES)[number]; tag?: string },
): Promise<NodeSummary[]> {
  const nodes: NodeSummary[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const page: NodePage = await unwrap(listPage(ctx, query, offset));
    nodes.push(...page.nodes);
    offset = page.pagination.has_more ? (page.pagination.next_offset ?? null) : null;
  }
  return nodes;
}

function stateCell(ctx: Context, instance: Instance): string {
  const state = statusColour(ctx.colours, instance.lifecycle_status);
  return instance.admin_state === 'active' ? state : `${state} (${instance.admin_state})`;
}

/** `node.function` for a reasoner, `node.skill:function` for a skill: the name `call` takes. */
function target(nodeId: string, kind: 'reasoner' | 'skill', id: string): string {
  return kind === 'reasoner' ? `${nodeId}.${id}` : `${nodeId}.skill:${id}`;
}

export function registerNodeCommands(program: Command, ctx: Context): void {
  examples(
    program
      .command('nodes')
      .description(
        'List the agent nodes with, per instance, its state, version, traffic weight and last heartbeat.',
      )
      .option('--status <state>', `only instances in this state (${STATES.join(', ')})`, oneOf(STATES))
      .option('--tag <tag>', 'only nodes with this tag'),
    'switchyard nodes',
    'switchyard nodes --status ready --json',
  ).action(async (options: { status?: (typeof STATES)[number]; tag?: string }) => {
    const nodes = await allNodes(ctx, {
      ...(options.status ? { status: options.status } : {}),
      ...(options.tag ? { tag: options.tag } : {}),
    });
    if (ctx.json) return ctx.printJson({ nodes });
    if (nodes.length === 0) return ctx.print('No nodes are registered.');
    const rows = nodes.flatMap((node) =>
      node.instances.map((instance) => [
        instance.node_id,
        instance.version,
        stateCell(ctx, instance),
        String(instance.traffic_weight),
        ago(instance.last_heartbeat),
        String(instance.reasoners.length + instance.skills.length),
        instance.base_url,
      ]),
    );
    ctx.print(table(['NODE', 'VERSION', 'STATE', 'WEIGHT', 'LAST HEARTBEAT', 'FUNCTIONS', 'URL'], rows));
  });

  examples(
    program
      .command('node')
      .description('Show one node: its instances, and its functions with their input and output schemas.')
      .argument('<node-id>', 'the node id, as `nodes` lists it'),
    'switchyard node hello-agent',
    'switchyard node hello-agent --json',
  ).action(async (nodeId: string) => {
    const node: NodeRecord = await unwrap(
      ctx.client.GET('/api/v1/nodes/{node_id}', { params: { path: { node_id: nodeId } } }),
    );
    if (ctx.json) return ctx.printJson(node);
    const c = ctx.colours;
    ctx.print(c.bold(node.node_id));
    ctx.print();
    ctx.print(
      table(
        ['VERSION', 'STATE', 'WEIGHT', 'ROUTABLE', 'LAST HEARTBEAT', 'URL'],
        node.instances.map((instance) => [
          instance.version,
          stateCell(ctx, instance),
          String(instance.traffic_weight),
          instance.routable ? 'yes' : 'no',
          ago(instance.last_heartbeat),
          instance.base_url,
        ]),
      ),
    );
    const functions = [
      ...node.reasoners.map((fn) => ({ kind: 'reasoner' as const, fn })),
      ...node.skills.map((fn) => ({ kind: 'skill' as const, fn })),
    ];
    ctx.print();
    ctx.print(c.bold('Functions'));
    if (functions.length === 0) ctx.print('  (none)');
    for (const { kind, fn } of functions) {
      const tags = fn.tags?.length ? `  tags: ${fn.tags.join(', ')}` : '';
      ctx.print(`  ${c.cyan(target(node.node_id, kind, fn.id))}  ${kind}${tags}`);
      if (fn.description) ctx.print(`    ${fn.description}`);
      for (const [label, schema] of [
        ['input schema', fn.input_schema],
        ['output schema', fn.output_schema],
      ] as const) {
        if (schema === undefined || schema === null) ctx.print(`    ${label}: -`);
        else ctx.print(`    ${label}:\n${indent(JSON.stringify(schema, null, 2), '      ')}`);
      }
    }
  });

  examples(
    program
      .command('weight')
      .description(
        'Set the traffic weight of one version of a node (0 to 10000; 0 takes it out of rotation) through the connector.',
      )
      .argument('<node>', 'the node id (or one of its function targets)')
      .argument('<version>', 'the version the agent registered')
      .argument('<weight>', 'the new weight, 0 to 10000', integerIn(0, 10_000))
      .option(
        '--connector-token <token>',
        'the connector token (else SWITCHYARD_CONNECTOR_TOKEN, SERVICE_CONNECTOR_TOKEN or `config set connector-token`)',
      ),
    'switchyard weight hello-agent 1.1.0 25 --connector-token "$SERVICE_CONNECTOR_TOKEN"',
  ).action(async (node: string, version: string, weight: number, options: { connectorToken?: string }) => {
    const token = ctx.setting(
      options.connectorToken,
      ['SWITCHYARD_CONNECTOR_TOKEN', 'SERVICE_CONNECTOR_TOKEN'],
      'connector-token',
    ).value;
    if (!token) {
      throw new UsageError(
        'weight needs the connector token: pass --connector-token, set SWITCHYARD_CONNECTOR_TOKEN, or `switchyard config set connector-token <token>`.',
      );
    }
    const answer = await unwrap(
      ctx.client.PUT('/connector/reasoners/{id}/versions/{version}/weight', {
        params: { path: { id: node, version } },
        headers: { 'X-Connector-Token': token },
        body: { weight },
      }),
    ).catch((error: unknown) => {
      throw explainConnectorProblem(error);
    });
    if (ctx.json) return ctx.printJson(answer);
    ctx.print(
      `${answer.node_id} ${answer.version}: weight ${answer.traffic_weight}, ${Math.round(answer.traffic_share * 100)}% of its traffic.`,
    );
  });
}

/** The connector's refusals, said in terms of what to change. */
function explainConnectorProblem(error: unknown): unknown {
  if (!(error instanceof ApiProblem)) return error;
  if (error.status === 503) {
    return new CommandFailed(
      `The connector is disabled on this control plane (${error.detail})`,
      'Start the control plane with SERVICE_CONNECTOR_TOKEN set, and pass the same token with --connector-token.',
    );
  }
  if (error.status === 403) {
    return new CommandFailed(
      `The connector token may not change weights: this deployment does not grant versions:write (${error.detail})`,
      'Add versions:write to connector.capabilities (SWITCHYARD_CONNECTOR_CAPABILITIES) and restart the control plane.',
    );
  }
  if (error.status === 401) {
    return new CommandFailed(
      `The connector token was refused: ${error.detail}`,
      'Pass the token the control plane was started with (SERVICE_CONNECTOR_TOKEN); the API key does not open the connector.',
    );
  }
  return error;
}
