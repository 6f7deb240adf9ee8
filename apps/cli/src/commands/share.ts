import { ApiProblem, unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import type { Context } from '../context.ts';
import { CommandFailed } from '../failures.ts';
import { examples } from '../help.ts';
import { httpUrl } from '../local-config.ts';

interface Published {
  id: string;
  url: string;
}

/** The docs site to publish to: --docs-url, else SWITCHYARD_DOCS_URL, else the config file. */
export function docsUrlSetting(ctx: Context, flag: string | undefined) {
  return ctx.setting(flag, ['SWITCHYARD_DOCS_URL'], 'docs-url');
}

/**
 * POSTs a run bundle to the docs site's share endpoint and answers the permalink it gives. The
 * docs site is not the control plane, so this is a plain fetch; its refusals are said in full.
 */
async function publishToDocs(docsUrl: string, bundle: unknown): Promise<Published> {
  const url = `${docsUrl}/api/v1/shares`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(bundle),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw ApiProblem.fromNetworkError(url, error);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  if (!response.ok) throw ApiProblem.fromResponse(response, body);
  const published = body as Partial<Published> | null;
  if (typeof published?.id !== 'string' || typeof published.url !== 'string') {
    throw new CommandFailed(
      `The docs site at ${docsUrl} answered ${response.status} without a permalink.`,
      'Check that --docs-url names a Switchyard docs site (it serves POST /api/v1/shares).',
    );
  }
  return { id: published.id, url: published.url };
}

export function registerShareCommand(program: Command, ctx: Context): void {
  examples(
    program
      .command('share')
      .description(
        'Publish a workflow run to the docs site and print its permalink. Inputs, outputs and error texts are redacted unless --no-redact is given: a share is public.',
      )
      .argument('<workflow-id>', 'the workflow id')
      .option('--redact', 'replace every input, output and error text by "[redacted]" (the default)')
      .option('--no-redact', 'publish inputs, outputs and errors as recorded')
      .option('--title <title>', 'the title the shared page shows')
      .option(
        '--docs-url <url>',
        "the docs site to publish to (else SWITCHYARD_DOCS_URL, the config file's docs-url, else the control plane's own)",
      ),
    'switchyard share wf-report-42 --title "Quarterly report"',
    'switchyard share wf-report-42 --no-redact --docs-url https://docs.example.com --json',
  ).action(async (workflowId: string, options: { redact?: boolean; title?: string; docsUrl?: string }) => {
    // Redacted unless --no-redact: commander leaves the option unset when neither flag is given.
    const redact = options.redact !== false;
    const docs = docsUrlSetting(ctx, options.docsUrl).value;
    let published: Published;
    if (docs) {
      const docsUrl = httpUrl(docs, 'The docs site URL');
      const bundle = await unwrap(
        ctx.client.GET('/api/ui/v1/workflows/{workflow_id}/bundle', {
          params: {
            path: { workflow_id: workflowId },
            query: {
              redact: redact ? 'true' : 'false',
              ...(options.title ? { title: options.title } : {}),
            } as { redact: 'true' | 'false' },
          },
        }),
      );
      published = await publishToDocs(docsUrl, bundle);
    } else {
      try {
        published = (await unwrap(
          ctx.client.POST('/api/ui/v1/workflows/{workflow_id}/share', {
            params: { path: { workflow_id: workflowId } },
            body: { redact, ...(options.title ? { title: options.title } : {}) },
          }),
        )) as Published;
      } catch (error) {
        if (error instanceof ApiProblem && error.status === 503) {
          throw new CommandFailed(
            `Nowhere to publish: ${error.detail}`,
            'Pass --docs-url <docs site>, set SWITCHYARD_DOCS_URL, or `switchyard config set docs-url <url>`; or configure the control plane with SWITCHYARD_DOCS_URL.',
          );
        }
        throw error;
      }
    }
    if (ctx.json) return ctx.printJson(published);
    ctx.print(published.url);
  });
}
