import { MAX_JSON_DEPTH, RUN_BUNDLE_LIMITS } from '@switchyard/shared';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { jsonBodyProblems, type ProblemCase, problemResponses } from '../../platform/openapi/problem.ts';
import { WorkflowIdSchema } from '../executions/index.ts';
import { PublishedSchema, RunBundleSchema } from './responses.ts';
import { BundleQuerySchema, SHARE_BODY_LIMIT, ShareBodySchema } from './schemas.ts';

const WORKFLOW = 'wf_report_42';
const ROOT = 'exec_3v8b1n6r4t9c2d7f5k0m3q8w1x';
const CHILD = 'exec_7k2m9p4q1r8s3t6v0w5x1y4z8b';

const WorkflowPath = z.object({
  workflow_id: WorkflowIdSchema.meta({
    description: 'The workflow id, as in GET /api/v1/workflows/{workflow_id}/dag.',
    example: WORKFLOW,
  }),
});

const badWorkflow: ProblemCase = {
  code: 'invalid_request',
  when: 'The workflow id is over 256 characters or not printable ASCII.',
  detail: 'The workflow id is invalid: workflow_id: Too big: expected string to have <=256 characters',
  extensions: {
    errors: [{ field: 'workflow_id', message: 'Too big: expected string to have <=256 characters' }],
  },
};
const unknownWorkflow: ProblemCase = {
  code: 'not_found',
  when: 'No execution belongs to the workflow.',
  detail: `No execution belongs to workflow "${WORKFLOW}".`,
};
const tooLarge: ProblemCase = {
  code: 'conflict',
  when: `The workflow has more than ${RUN_BUNDLE_LIMITS.nodes} executions, the most a run bundle holds (the docs site's limit); it is refused rather than cut.`,
  detail: `Workflow "${WORKFLOW}" has 2417 executions; a run bundle holds at most ${RUN_BUNDLE_LIMITS.nodes}, the most the docs site accepts.`,
  extensions: { executions: 2417, limit: RUN_BUNDLE_LIMITS.nodes },
};

const bundleExample = {
  version: 1,
  workflow_id: WORKFLOW,
  title: 'Quarterly report',
  generated_at: '2026-11-27T10:02:11.204Z',
  totals: { agents: 2, duration_ms: 412, cost_usd: null },
  nodes: [
    {
      id: ROOT,
      agent: 'planner',
      func: 'plan_report',
      status: 'succeeded',
      started_at: '2026-11-27T10:01:02.104Z',
      ended_at: '2026-11-27T10:01:02.516Z',
      duration_ms: 412,
      cost_usd: null,
      model: null,
      input_preview: '{\n    "quarter": "Q3"\n}',
      output_preview: '{\n    "sections": 4\n}',
      error: null,
    },
    {
      id: CHILD,
      agent: 'hello-agent',
      func: 'summarize',
      status: 'failed',
      started_at: '2026-11-27T10:01:02.210Z',
      ended_at: '2026-11-27T10:01:02.224Z',
      duration_ms: 14,
      cost_usd: null,
      model: null,
      input_preview: '{\n    "text": "Revenue rose 4%"\n}',
      output_preview: '',
      error: 'model quota exceeded',
    },
  ],
  edges: [{ from: ROOT, to: CHILD }],
};

export const sharesOpenApi: ZodOpenApiPathsObject = {
  '/api/ui/v1/workflows/{workflow_id}/bundle': {
    get: {
      operationId: 'getWorkflowRunBundle',
      tags: ['Dashboard'],
      summary: "A workflow's run bundle (what sharing publishes)",
      description: `The workflow's executions as the docs site publishes them: the DAG of GET /api/v1/workflows/{workflow_id}/dag plus each execution's input, output and error previews. Inputs and outputs are redacted unless \`redact=false\`. At most ${RUN_BUNDLE_LIMITS.nodes} executions.`,
      requestParams: { path: WorkflowPath, query: BundleQuerySchema },
      responses: {
        '200': {
          description: 'The run bundle.',
          content: { 'application/json': { schema: RunBundleSchema, example: bundleExample } },
        },
        ...problemResponses(`/api/ui/v1/workflows/${WORKFLOW}/bundle`, [
          badWorkflow,
          {
            code: 'invalid_request',
            when: 'redact is not `true` or `false`, the title is too long or holds control characters, or the query has another parameter.',
            detail: 'The query is invalid: redact: Invalid option: expected one of "true"|"false"',
            extensions: {
              errors: [{ field: 'redact', message: 'Invalid option: expected one of "true"|"false"' }],
            },
          },
          unknownWorkflow,
          tooLarge,
        ]),
      },
    },
  },
  '/api/ui/v1/workflows/{workflow_id}/share': {
    post: {
      operationId: 'shareWorkflowRun',
      tags: ['Dashboard'],
      summary: 'Publish a workflow run to the docs site',
      description:
        'Builds the run bundle (as GET …/bundle) and publishes it to the docs site named by `SWITCHYARD_DOCS_URL` (`POST {docs}/api/v1/shares`), answering with the permalink it gave. The dashboard cannot post to the docs site itself (its CSP allows its own origin only). Inputs and outputs are redacted unless `redact: false`.',
      requestParams: { path: WorkflowPath },
      requestBody: {
        required: true,
        description: `A JSON object; \`{}\` for the defaults. At most ${SHARE_BODY_LIMIT} bytes, nested at most ${MAX_JSON_DEPTH} levels.`,
        content: {
          'application/json': {
            schema: ShareBodySchema,
            example: { title: 'Quarterly report', redact: false },
          },
        },
      },
      responses: {
        '201': {
          description: 'Published; Location is the permalink.',
          headers: z.object({ Location: z.string().meta({ description: 'The permalink.' }) }),
          content: {
            'application/json': {
              schema: PublishedSchema,
              example: {
                id: 'run_01jdy5z3m7q8r9s0t1v2w3x4y5',
                url: 'https://docs.example.com/s/run_01jdy5z3m7q8r9s0t1v2w3x4y5',
              },
            },
          },
        },
        ...problemResponses(`/api/ui/v1/workflows/${WORKFLOW}/share`, [
          ...jsonBodyProblems(SHARE_BODY_LIMIT, {
            code: 'invalid_request',
            when: 'The body is missing or not an object, has a member other than title and redact, redact is not a boolean, or the title is too long or holds control characters.',
            detail: 'The body is invalid: redact: Invalid input: expected boolean, received string',
            extensions: {
              errors: [{ field: 'redact', message: 'Invalid input: expected boolean, received string' }],
            },
          }),
          unknownWorkflow,
          tooLarge,
          {
            code: 'upstream_unavailable',
            when: 'The docs site could not be reached in time, refused the bundle (its answer is quoted), or answered without a permalink.',
            detail:
              'The docs site at https://docs.example.com refused the run bundle with 413: payload_too_large: The body exceeds the limit of 1048576 bytes.',
            extensions: {
              upstream: {
                url: 'https://docs.example.com/api/v1/shares',
                status: 413,
                said: 'payload_too_large: The body exceeds the limit of 1048576 bytes.',
              },
            },
          },
          {
            code: 'service_unavailable',
            when: 'No docs site is configured: set SWITCHYARD_DOCS_URL.',
            detail: 'No docs site is configured to publish shared runs to.',
          },
        ]),
      },
    },
  },
};
