import { RUN_BUNDLE_LIMITS, RUN_PREVIEW_CHARS } from '@switchyard/shared';
import { z } from 'zod';

/*
 * What the shares API answers, as the OpenAPI document describes it: the run bundle that
 * run-bundle.ts builds (its types are inferred here), and the docs site's answer to a publish.
 */

const Timestamp = z.iso.datetime();

const TimeOrEmpty = z.union([z.literal(''), Timestamp]);

const Preview = z.string().meta({
  description: `Pretty JSON cut at ${RUN_PREVIEW_CHARS} characters plus "\\n… [truncated]", \`"[redacted]"\` when redacted, \`""\` when there is none.`,
});

export const RunBundleSchema = z
  .object({
    version: z.literal(1),
    workflow_id: z.string(),
    title: z.string().optional().meta({ description: 'Left out when none was given.' }),
    generated_at: Timestamp,
    totals: z.object({
      agents: z.int().min(0).meta({ description: 'Distinct agents (node ids) that ran an execution.' }),
      duration_ms: z.number().min(0).nullable().meta({
        description: 'First start to last end; null while an execution has not ended.',
      }),
      cost_usd: z.null(),
    }),
    nodes: z
      .array(
        z.object({
          id: z.string().meta({ description: 'The execution id.' }),
          agent: z.string().meta({ description: 'The node id that ran it.' }),
          func: z.string().meta({ description: 'The function name.' }),
          status: z.string(),
          started_at: TimeOrEmpty.meta({ description: 'Empty before the execution started.' }),
          ended_at: TimeOrEmpty.meta({ description: 'Empty while the execution has not ended.' }),
          duration_ms: z.int().min(0).nullable(),
          cost_usd: z.null(),
          model: z.null(),
          input_preview: Preview,
          output_preview: Preview,
          error: z.string().nullable().meta({
            description:
              'The error message (cut like a preview, `"[redacted]"` when redacted); null without one.',
          }),
        }),
      )
      .max(RUN_BUNDLE_LIMITS.nodes)
      .meta({ description: 'Every execution of the workflow, oldest first.' }),
    edges: z
      .array(z.object({ from: z.string(), to: z.string() }))
      .meta({ description: 'Parent → child execution ids.' }),
  })
  .meta({
    id: 'RunBundle',
    description:
      'A workflow run as the docs site publishes it (run bundle schema version 1: what the platform CLI sends to POST /api/v1/shares).',
  });

export const PublishedSchema = z
  .object({
    id: z.string().meta({ description: "The docs site's share id." }),
    url: z.string().meta({ description: 'The permalink the docs site gave.' }),
  })
  .meta({ id: 'PublishedShare' });
