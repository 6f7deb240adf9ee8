import { createHmac } from 'node:crypto';
import { type components, unwrap } from '@switchyard/client';
import type { Command } from 'commander';
import { statusColour } from '../colours.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../failures.ts';
import { ago, table } from '../format.ts';
import { examples } from '../help.ts';
import { integerIn, oneOf } from '../values.ts';

const APPROVAL_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'request_changes',
  'expired',
  'cancelled',
] as const satisfies readonly components['schemas']['ApprovalRequest']['status'][];

/** When an ISO time comes, from now: `in 23 h`, or `-`. */
function until(iso: string | null): string {
  if (!iso) return '-';
  const seconds = Math.round((Date.parse(iso) - Date.now()) / 1000);
  if (seconds <= 0) return 'now';
  if (seconds < 3600) return `in ${Math.ceil(seconds / 60)} m`;
  // Hours up to two days: a request that expires in 24 h says so, not `in 1 d`.
  if (seconds < 172_800) return `in ${Math.round(seconds / 3600)} h`;
  return `in ${Math.round(seconds / 86_400)} d`;
}

export function registerApprovalCommands(program: Command, ctx: Context): void {
  examples(
    program
      .command('approvals')
      .description('List approval requests: the pending ones unless --status says otherwise, newest first.')
      .option(
        '--status <status>',
        `requests in this status (${APPROVAL_STATUSES.join(', ')})`,
        oneOf(APPROVAL_STATUSES),
        'pending',
      )
      .option('--node <id>', "only requests of this node's executions")
      .option('--limit <n>', 'at most this many (1 to 200)', integerIn(1, 200), 50),
    'switchyard approvals',
    'switchyard approvals --status approved --json',
  ).action(async (options: { status: (typeof APPROVAL_STATUSES)[number]; node?: string; limit: number }) => {
    const answer = await unwrap(
      ctx.client.GET('/api/v1/approvals', {
        params: {
          query: {
            status: options.status,
            limit: String(options.limit),
            ...(options.node ? { node_id: options.node } : {}),
          },
        },
      }),
    );
    if (ctx.json) return ctx.printJson(answer);
    const { approvals } = answer;
    if (approvals.length === 0) return ctx.print(`No ${options.status} approval requests.`);
    ctx.print(
      table(
        ['APPROVAL REQUEST', 'TARGET', 'STATUS', 'REQUESTED', 'EXPIRES', 'EXECUTION', 'REVIEW URL'],
        approvals.map((a) => [
          a.approval_request_id,
          a.target,
          statusColour(ctx.colours, a.status),
          ago(a.requested_at),
          a.status === 'pending' ? until(a.expires_at) : '-',
          a.execution_id,
          a.approval_request_url ?? '-',
        ]),
      ),
    );
  });

  for (const [name, decision, description] of [
    ['approve', 'approved', 'Approve a pending request: the execution resumes and its agent is told.'],
    [
      'reject',
      'rejected',
      'Reject a pending request: the execution resumes and its agent is told (it decides what that means).',
    ],
  ] as const) {
    examples(
      program
        .command(name)
        .description(description)
        .argument('<approval-request-id>', 'the request id, as `approvals` lists it')
        .option('--feedback <text>', 'passed to the agent with the decision (at most 10000 characters)')
        .option(
          '--webhook-secret <secret>',
          'sign the decision with the approval webhook secret (else SERVICE_APPROVAL_WEBHOOK_SECRET); needed when the control plane has one',
        ),
      `switchyard ${name} post-7-exec_8m2k4q7w1x3v5b9n0r6t2c1d4f --feedback "Fine by legal."`,
    ).action(async (id: string, options: { feedback?: string; webhookSecret?: string }) => {
      if (options.feedback !== undefined && options.feedback.length > 10_000) {
        throw new UsageError('--feedback is at most 10000 characters.');
      }
      const body = JSON.stringify({
        approval_request_id: id,
        decision,
        ...(options.feedback !== undefined ? { feedback: options.feedback } : {}),
      });
      const secret = options.webhookSecret || ctx.env.SERVICE_APPROVAL_WEBHOOK_SECRET || undefined;
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (secret) {
        // A signed decision: HMAC-SHA256 of "<unix seconds>.<raw body>", keyed with the secret.
        const timestamp = String(Math.floor(Date.now() / 1000));
        const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
        headers['X-Service-Timestamp'] = timestamp;
        headers['X-Service-Signature'] = `sha256=${signature}`;
      }
      const answer = await unwrap(
        ctx.client.POST('/api/v1/webhooks/approval', {
          body: JSON.parse(body),
          bodySerializer: () => body,
          headers,
        }),
      );
      if (ctx.json) return ctx.printJson(answer);
      const resumed = answer.execution_status
        ? `; execution ${answer.execution_id} is ${answer.execution_status}`
        : '';
      ctx.print(`${answer.approval_request_id} ${statusColour(ctx.colours, answer.status)}${resumed}.`);
    });
  }
}
