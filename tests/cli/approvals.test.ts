/**
 * `switchyard approvals`, `approve` and `reject`, the build run as a child process against real
 * control planes (PGlite, or PostgreSQL when DATABASE_URL is set) with the approval example agent
 * on loopback: one control plane behind the API key, and one with an approval webhook secret,
 * whose decisions the CLI must sign. Every command of content/reference/cli-approvals.md runs as
 * the page shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSession, startCliSession } from '../support/cli.ts';
import { eventually } from '../support/eventually.ts';
import { checkCliPage } from './cli-pages.ts';

const PAGE_EXECUTION = 'exec_8m2k4q7w1x3v5b9n0r6t2c1d4f';
let session: CliSession;
let signed: CliSession;

beforeAll(async () => {
  session = await startCliSession({ databasePrefix: 'sy_cli_appr' });
  await session.startExample('approval-agent/agent.mjs', 'publisher');
  signed = await startCliSession({
    databasePrefix: 'sy_cli_appr_signed',
    env: { SERVICE_APPROVAL_WEBHOOK_SECRET: 'cli-approval-secret' },
  });
  await signed.startExample('approval-agent/agent.mjs', 'publisher');
});

afterAll(async () => {
  await session?.stop();
  await signed?.stop();
});

/** Queues a post and answers its approval request id once the execution waits for it. */
async function pendingPost(on: CliSession, post: string): Promise<{ execution: string; approval: string }> {
  const { stdout } = await on.cli([
    'call',
    'publisher.publish_post',
    '--input',
    JSON.stringify({ post_id: post, title: 't' }),
    '--async',
  ]);
  const execution = stdout.trim();
  await eventually('the execution waits for approval', async () =>
    (await on.api('GET', `/api/v1/executions/${execution}`)).status === 'waiting' ? true : undefined,
  );
  return { execution, approval: `post-${post}-${execution}` };
}

describe('content/reference/cli-approvals.md', () => {
  it('every command prints what the page shows', async () => {
    let real: string | undefined;
    await checkCliPage('content/reference/cli-approvals.md', session.env, 4, async (command) => {
      if (!command.includes(PAGE_EXECUTION)) return command;
      real ??= (await session.api('GET', '/api/v1/approvals?status=pending')).approvals[0]
        .execution_id as string;
      return command.split(PAGE_EXECUTION).join(real);
    });
  });
});

describe('switchyard approvals', () => {
  it('lists pending requests, and others by --status, as a table or JSON', async () => {
    const { approval, execution } = await pendingPost(session, '11');
    const { code, stdout } = await session.cli(['approvals']);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `\\n${approval}\\s+publisher\\.publish_post\\s+pending\\s+\\d+ s ago\\s+in 24 h\\s+${execution}\\s+https://review\\.example\\.com/posts/11\\n`,
      ),
    );
    const json = JSON.parse((await session.cli(['approvals', '--json', '--node', 'publisher'])).stdout);
    expect(json.approvals.map((a: any) => a.approval_request_id)).toContain(approval);
    const none = await session.cli(['approvals', '--status', 'expired']);
    expect(none.stdout).toBe('No expired approval requests.\n');
    expect((await session.cli(['approvals', '--status', 'maybe'])).code).toBe(2);
  });

  it('reject resumes the execution, which the agent then fails; --json prints the decided request', async () => {
    const { approval, execution } = await pendingPost(session, '12');
    const { code, stdout } = await session.cli([
      'reject',
      approval,
      '--feedback',
      'Not this week.',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      approval_request_id: approval,
      status: 'rejected',
      feedback: 'Not this week.',
    });
    const run = await session.cli(['run', execution, '--wait', '--json']);
    expect(JSON.parse(run.stdout).execution.status).toBe('failed');
  });

  it('an unknown request exits 1 with the problem', async () => {
    const { code, stderr } = await session.cli(['approve', 'no-such-request']);
    expect(code).toBe(1);
    expect(stderr).toContain('error: Not found (404)');
  });

  it('signs decisions when the control plane has a webhook secret', async () => {
    const { approval } = await pendingPost(signed, '21');
    const unsigned = await signed.cli(['approve', approval]);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toContain('error: Unauthorized (401)');
    const wrong = await signed.cli(['approve', approval, '--webhook-secret', 'not-it']);
    expect(wrong.code).toBe(1);
    const ok = await signed.cli(['approve', approval], {
      env: { SERVICE_APPROVAL_WEBHOOK_SECRET: 'cli-approval-secret' },
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(
      `${approval} approved; execution ${approval.slice('post-21-'.length)} is running.\n`,
    );
  });
});
