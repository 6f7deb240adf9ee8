import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { OPENAPI_PATH } from './document.ts';

const PROMETHEUS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The routes the platform itself mounts: the metrics scrape and this document. */
export const platformOpenApi: ZodOpenApiPathsObject = {
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      tags: ['Health and metrics'],
      summary: 'Prometheus metrics',
      description:
        "Every metric of the control plane (the spec's `service_*` series and the standard process metrics) in the Prometheus text exposition format 0.0.4. Never behind the API key.",
      security: [],
      responses: {
        '200': {
          description: 'The metrics, one series a line.',
          content: {
            [PROMETHEUS_TYPE]: {
              schema: z.string(),
              example:
                '# HELP service_queue_depth Executions waiting in the queue.\n# TYPE service_queue_depth gauge\nservice_queue_depth 0\n',
            },
          },
        },
      },
    },
  },
  [OPENAPI_PATH]: {
    get: {
      operationId: 'getOpenApiDocument',
      tags: ['OpenAPI'],
      summary: 'This OpenAPI document',
      description:
        'The OpenAPI 3.1 document of the control plane, generated from the schemas its routes validate with. Never behind the API key.',
      security: [],
      responses: {
        '200': {
          description: 'An OpenAPI 3.1 document.',
          content: {
            'application/json': {
              schema: z.looseObject({
                openapi: z.string().regex(/^3\.1\.\d+$/),
                info: z.looseObject({ title: z.string(), version: z.string() }),
                paths: z.record(z.string(), z.looseObject({})),
              }),
              example: {
                openapi: '3.1.0',
                info: { title: 'Switchyard control plane API', version: '0.1.0' },
                paths: { '/api/v1/health': { get: { operationId: 'getHealth' } } },
              },
            },
          },
        },
      },
    },
  },
};
