import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { problemResponses } from '../../platform/openapi/problem.ts';
import { CapabilityListingSchema, CompactListingSchema } from './responses.ts';
import {
  DISCOVERY_DEFAULT_LIMIT,
  DISCOVERY_FORMATS,
  DISCOVERY_HEALTH_STATUSES,
  DISCOVERY_MAX_LIMIT,
  DISCOVERY_MAX_OFFSET,
  type DiscoveryQuerySchema,
} from './schemas.ts';

/**
 * How each query parameter of DiscoveryQuerySchema arrives on the wire. The route's schema takes
 * every parameter as raw text and checks it in transforms (wildcards, lists, `true`/`1`/`yes`),
 * which JSON Schema cannot express, so the wire form is written here; `satisfies` keeps its
 * parameter names exactly those of the route's schema.
 */
const pattern = (description: string) =>
  z
    .string()
    .max(200)
    .optional()
    .meta({
      description: `${description} Wildcards: \`*abc*\` contains, \`abc*\` starts with, \`*abc\` ends with, \`abc\` exact; case is ignored.`,
    });
const patternList = (description: string) =>
  z
    .string()
    .optional()
    .meta({
      description: `${description} Comma-separated, at most 50 values, each a pattern of at most 200 characters.`,
    });
const flag = (description: string) =>
  z
    .boolean()
    .default(false)
    .meta({ description: `${description} Also \`1\`/\`0\` and \`yes\`/\`no\`.` });

const DiscoveryQueryParameters = z.object({
  agent: pattern('One agent (node) id.'),
  node_id: pattern('Same as `agent`.'),
  agent_ids: patternList('Agent ids, any of which matches.'),
  node_ids: patternList('Same as `agent_ids`.'),
  reasoner: pattern('Keep reasoners whose id matches (and leave skills out unless `skill` is given).'),
  skill: pattern('Keep skills whose id matches (and leave reasoners out unless `reasoner` is given).'),
  tags: patternList('Keep functions (or agents) with at least one matching tag.'),
  health_status: z
    .enum([...DISCOVERY_HEALTH_STATUSES, 'healthy', 'ready', 'offline', 'starting'])
    .optional()
    .meta({
      description:
        'active (ready), inactive (offline), degraded, unknown (starting); `healthy`, `ready`, `offline` and `starting` are accepted for the same states.',
    }),
  format: z.enum(DISCOVERY_FORMATS).default('json').meta({ description: 'Answer format.' }),
  include_input_schema: flag("Add each function's `input_schema`."),
  include_output_schema: flag("Add each function's `output_schema`."),
  include_descriptions: flag("Add each function's `description`."),
  include_examples: flag("Add each function's `examples`."),
  limit: z.int().min(1).max(DISCOVERY_MAX_LIMIT).default(DISCOVERY_DEFAULT_LIMIT).meta({
    description: 'Agent instances per page.',
  }),
  offset: z.int().min(0).max(DISCOVERY_MAX_OFFSET).default(0).meta({
    description: 'Instances to skip (use `pagination.next_offset`).',
  }),
} satisfies Record<keyof typeof DiscoveryQuerySchema.in.shape, z.ZodType>);

const jsonExample = {
  discovered_at: '2026-11-22T10:15:00.000Z',
  total_agents: 1,
  total_reasoners: 1,
  total_skills: 1,
  pagination: { limit: 100, offset: 0, has_more: false, next_offset: null },
  capabilities: [
    {
      agent_id: 'hello-agent',
      base_url: 'http://127.0.0.1:9001',
      version: '1.0.0',
      health_status: 'active',
      deployment_type: 'long_running',
      last_heartbeat: '2026-11-22T10:14:58.120Z',
      reasoners: [{ id: 'summarize', tags: ['nlp'], invocation_target: 'hello-agent.summarize' }],
      skills: [{ id: 'word_count', tags: ['text'], invocation_target: 'hello-agent.skill:word_count' }],
    },
  ],
};

const xmlExample = `<?xml version="1.0" encoding="UTF-8"?>
<discovery discovered_at="2026-11-22T10:15:00.000Z">
  <summary total_agents="1" total_reasoners="1" total_skills="0" limit="100" offset="0" has_more="false"/>
  <capabilities>
    <agent id="hello-agent" base_url="http://127.0.0.1:9001" version="1.0.0" health_status="active" deployment_type="long_running" last_heartbeat="2026-11-22T10:14:58.120Z">
      <reasoner id="summarize" target="hello-agent.summarize">
        <tags>
          <tag>nlp</tag>
        </tags>
      </reasoner>
    </agent>
  </capabilities>
</discovery>
`;

const INSTANCE = '/api/v1/discovery/capabilities';

/** The discovery feature's one route. */
export const discoveryOpenApi: ZodOpenApiPathsObject = {
  [INSTANCE]: {
    get: {
      operationId: 'discoverCapabilities',
      tags: ['Discovery'],
      summary: 'List agents with their reasoners and skills',
      description:
        'One entry per registered node instance, filtered (filters combine with AND), paginated over instances and cached for `discovery.cache_ttl`. Unknown parameters are ignored.',
      requestParams: { query: DiscoveryQueryParameters },
      responses: {
        '200': {
          description: 'The capability listing in the requested format.',
          headers: z.object({
            'X-Discovery-Cache': z.enum(['hit', 'miss']).meta({ description: 'Whether the cache answered.' }),
          }),
          content: {
            'application/json': {
              schema: z.union([CapabilityListingSchema, CompactListingSchema]),
              examples: {
                json: { summary: 'format=json', value: jsonExample },
                compact: {
                  summary: 'format=compact',
                  value: {
                    discovered_at: jsonExample.discovered_at,
                    reasoners: [
                      {
                        id: 'summarize',
                        agent_id: 'hello-agent',
                        target: 'hello-agent.summarize',
                        tags: ['nlp'],
                      },
                    ],
                    skills: [
                      {
                        id: 'word_count',
                        agent_id: 'hello-agent',
                        target: 'hello-agent.skill:word_count',
                        tags: ['text'],
                      },
                    ],
                    pagination: jsonExample.pagination,
                  },
                },
              },
            },
            'application/xml': {
              schema: z.string().meta({ description: 'format=xml: a `<discovery>` document.' }),
              example: xmlExample,
            },
          },
        },
        ...problemResponses(INSTANCE, [
          {
            code: 'invalid_request',
            when: 'A parameter is invalid: an unknown format or health_status, limit or offset out of range, a non-boolean flag, a parameter given twice, a pattern over 200 characters, more than 50 list items.',
            detail: 'The query is invalid: limit: must be a whole number from 1 to 500 (got "0")',
            extensions: {
              errors: [{ field: 'limit', message: 'must be a whole number from 1 to 500 (got "0")' }],
            },
          },
        ]),
      },
    },
  },
};
