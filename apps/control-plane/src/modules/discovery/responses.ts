import { z } from 'zod';
import { DISCOVERY_HEALTH_STATUSES } from './schemas.ts';

/*
 * What discovery answers (format json and compact; xml is rendered from the same listing), as the
 * OpenAPI document describes it. catalog.ts builds the listing with the types inferred here.
 */

export const PaginationSchema = z
  .object({
    limit: z.int(),
    offset: z.int(),
    has_more: z.boolean(),
    next_offset: z.int().nullable().meta({ description: 'The offset of the next page; null on the last.' }),
  })
  .meta({ id: 'DiscoveryPagination' });

export const FunctionCapabilitySchema = z
  .object({
    id: z.string(),
    description: z.string().optional().meta({ description: 'With include_descriptions=true.' }),
    tags: z.array(z.string()),
    input_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'With include_input_schema=true.' }),
    output_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'With include_output_schema=true.' }),
    examples: z.array(z.unknown()).optional().meta({ description: 'With include_examples=true.' }),
    invocation_target: z
      .string()
      .meta({ description: '`<agent_id>.<id>`, or `<agent_id>.skill:<id>` for skills.' }),
  })
  .meta({ id: 'FunctionCapability' });

export const AgentCapabilitySchema = z
  .object({
    agent_id: z.string(),
    base_url: z.string(),
    version: z.string(),
    health_status: z.enum(DISCOVERY_HEALTH_STATUSES),
    deployment_type: z.enum(['long_running', 'serverless']),
    last_heartbeat: z.iso.datetime().nullable().meta({ description: 'Null until the first heartbeat.' }),
    reasoners: z.array(FunctionCapabilitySchema),
    skills: z.array(FunctionCapabilitySchema),
  })
  .meta({ id: 'AgentCapability' });

export const CapabilityListingSchema = z
  .object({
    discovered_at: z.iso.datetime(),
    total_agents: z.int(),
    total_reasoners: z.int(),
    total_skills: z.int(),
    pagination: PaginationSchema,
    capabilities: z.array(AgentCapabilitySchema),
  })
  .meta({ id: 'CapabilityListing', description: 'format=json (the default).' });

export const CompactFunctionSchema = z.object({
  id: z.string(),
  agent_id: z.string(),
  target: z.string(),
  tags: z.array(z.string()),
});

export const CompactListingSchema = z
  .object({
    discovered_at: z.iso.datetime(),
    reasoners: z.array(CompactFunctionSchema),
    skills: z.array(CompactFunctionSchema),
    pagination: PaginationSchema,
  })
  .meta({ id: 'CompactCapabilityListing', description: 'format=compact.' });
