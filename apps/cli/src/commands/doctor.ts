import { ApiProblem, unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import type { Context } from '../context.ts';
import { CommandFailed } from '../failures.ts';
import { table } from '../format.ts';
import { examples } from '../help.ts';
import { docsUrlSetting } from './share.ts';

type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

/** Skew up to this is the resolution of the Date header plus the round trip: not worth a word. */
const SKEW_OK_MS = 5_000;
/** Signed approval decisions are refused past 5 minutes of skew (approvals.webhook_tolerance). */
const SKEW_FAIL_MS = 300_000;

interface Health {
  status: string;
  version?: string;
  checks?: Record<string, { status: string; message?: string }>;
}

/** GET /api/v1/health, timed, with the server's Date header; a problem when it gives no answer. */
async function readHealth(ctx: Context): Promise<{ health: Health; skewMs: number | undefined }> {
  const sentAt = Date.now();
  const { data, error, response } = await ctx.client.GET('/api/v1/health').catch((cause: unknown) => {
    throw ApiProblem.fromNetworkError(`${ctx.baseUrl}/api/v1/health`, cause);
  });
  const receivedAt = Date.now();
  const date = Date.parse(response.headers.get('date') ?? '');
  // The Date header has whole seconds: compare it with the middle of the exchange.
  const skewMs = Number.isNaN(date) ? undefined : date - (sentAt + receivedAt) / 2;
  const health = (data ?? error) as Health | undefined;
  if (!health || typeof health.status !== 'string') throw ApiProblem.fromResponse(response, error);
  return { health, skewMs };
}

async function runChecks(ctx: Context, docsFlag: string | undefined): Promise<Check[]> {
  const checks: Check[] = [];
  const url = ctx.baseUrl;
  let reached = false;
  try {
    const { health, skewMs } = await readHealth(ctx);
    reached = true;
    checks.push({
      name: 'control plane',
      status: 'ok',
      detail: `${url} answers (version ${health.version ?? 'unknown'}, ${health.status})`,
    });
    const storage = health.checks?.storage;
    checks.push(
      !storage
        ? { name: 'database', status: 'warn', detail: 'the health report has no storage check' }
        : storage.status === 'healthy'
          ? { name: 'database', status: 'ok', detail: storage.message ?? 'healthy' }
          : {
              name: 'database',
              status: 'fail',
              detail: `${storage.status}: ${storage.message ?? 'no message'}`,
              fix: 'Check DATABASE_URL on the control plane and that the database accepts connections (see Troubleshooting in the docs).',
            },
    );
    for (const [name, check] of Object.entries(health.checks ?? {})) {
      if (name === 'storage' || check.status === 'healthy') continue;
      checks.push({ name, status: 'warn', detail: `${check.status}: ${check.message ?? ''}`.trim() });
    }
    if (skewMs === undefined) {
      checks.push({ name: 'clock', status: 'warn', detail: 'the control plane sent no Date header' });
    } else {
      const seconds = Math.round(Math.abs(skewMs) / 1000);
      const which = skewMs > 0 ? 'ahead of' : 'behind';
      checks.push(
        Math.abs(skewMs) <= SKEW_OK_MS
          ? { name: 'clock', status: 'ok', detail: `within ${SKEW_OK_MS / 1000} s of the control plane's` }
          : {
              name: 'clock',
              status: Math.abs(skewMs) >= SKEW_FAIL_MS ? 'fail' : 'warn',
              detail: `the control plane's clock is ${seconds} s ${which} this machine's`,
              fix: 'Synchronise both clocks (NTP): signed approval decisions are refused past 5 minutes of skew, and times in tables are off.',
            },
      );
    }
  } catch (error) {
    const detail = error instanceof ApiProblem ? error.detail : String(error);
    checks.push({
      name: 'control plane',
      status: 'fail',
      detail,
      fix: `Start the control plane (npm start in the checkout) or point the CLI at the right one: --url, SWITCHYARD_URL or \`switchyard config set url <url>\` (now ${url}, from ${ctx.urlSetting().source}).`,
    });
  }

  if (!reached) {
    for (const name of ['database', 'clock', 'API key']) {
      checks.push({ name, status: 'skip', detail: 'the control plane could not be reached' });
    }
  } else {
    const source = ctx.apiKeySetting();
    try {
      await unwrap(ctx.client.GET('/api/ui/v1/nodes', { params: { query: { limit: '1' } } }));
      checks.push({
        name: 'API key',
        status: 'ok',
        detail: source.value
          ? `accepted (from ${source.source})`
          : 'none given, and the control plane asks for none',
      });
    } catch (error) {
      if (!(error instanceof ApiProblem) || error.status !== 401) throw error;
      checks.push({
        name: 'API key',
        status: 'fail',
        detail: source.value
          ? `refused (from ${source.source}): ${error.detail}`
          : `none given: ${error.detail}`,
        fix: "Use the control plane's SERVICE_API_KEY: --api-key, SERVICE_API_KEY or `switchyard config set api-key <key>`.",
      });
    }
  }

  const docs = docsUrlSetting(ctx, docsFlag);
  if (!docs.value) {
    checks.push({
      name: 'docs site',
      status: 'skip',
      detail: 'none named',
      fix: 'Name it to check it and to share runs: --docs-url, SWITCHYARD_DOCS_URL or `switchyard config set docs-url <url>`.',
    });
  } else {
    const topics = `${docs.value.replace(/\/+$/, '')}/api/v1/topics`;
    try {
      const response = await fetch(topics, {
        headers: { Accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json().catch(() => undefined)) as { total?: unknown } | undefined;
      checks.push(
        response.ok && typeof body?.total === 'number'
          ? { name: 'docs site', status: 'ok', detail: `${docs.value} answers` }
          : {
              name: 'docs site',
              status: 'fail',
              detail: `${topics} answered ${response.status}, not the docs site's page index`,
              fix: 'Check that the URL names a Switchyard docs site (its base URL, without a path).',
            },
      );
    } catch (error) {
      checks.push({
        name: 'docs site',
        status: 'fail',
        detail: ApiProblem.fromNetworkError(topics, error).detail,
        fix: `Start the docs site (npm start starts it with the control plane) or fix the URL (from ${docs.source}).`,
      });
    }
  }
  return checks;
}

export function registerDoctorCommand(program: Command, ctx: Context): void {
  examples(
    program
      .command('doctor')
      .description(
        'Check the setup: the control plane answers, its database is healthy, the API key is accepted, the clocks agree, the docs site answers; says what to fix. Exit 1 when a check fails.',
      )
      .option('--docs-url <url>', 'the docs site to check (else SWITCHYARD_DOCS_URL or the config file)'),
    'switchyard doctor',
    'switchyard doctor --url http://10.0.0.5:8080 --json',
  ).action(async (options: { docsUrl?: string }) => {
    const checks = await runChecks(ctx, options.docsUrl);
    const failed = checks.filter((check) => check.status === 'fail');
    if (ctx.json) ctx.printJson({ ok: failed.length === 0, checks });
    else {
      const c = ctx.colours;
      const paint = { ok: c.green, warn: c.yellow, fail: c.red, skip: c.dim } as const;
      ctx.print(
        table(
          ['CHECK', 'STATUS', 'DETAIL'],
          checks.map((check) => [check.name, paint[check.status](check.status), check.detail]),
        ),
      );
      const fixes = checks.filter((check) => check.fix && check.status !== 'ok');
      if (fixes.length) {
        ctx.print();
        for (const check of fixes) ctx.print(`${c.bold(`${check.name}:`)} ${check.fix}`);
      }
    }
    if (failed.length) {
      throw new CommandFailed(
        `${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${failed.map((f) => f.name).join(', ')}.`,
      );
    }
  });
}
