import { type components, type SwitchyardClient, unwrap } from '@switchyard/client';
import { infiniteQueryOptions } from '@tanstack/react-query';

export type Approval = components['schemas']['ApprovalList']['approvals'][number];
export type ApprovalStatus = Approval['status'];
export type Decision = 'approved' | 'rejected' | 'request_changes';

export const APPROVAL_STATUSES: ApprovalStatus[] = [
  'pending',
  'approved',
  'rejected',
  'request_changes',
  'expired',
  'cancelled',
];

export const APPROVALS_KEY = ['approvals'] as const;

/** Requests per page (the server allows up to 200). */
const PAGE = 50;

/** Approval requests in one status (or all), newest first, one cursor page at a time. */
export function approvalListQuery(client: SwitchyardClient, status: ApprovalStatus | '') {
  return infiniteQueryOptions({
    queryKey: [...APPROVALS_KEY, 'list', status],
    queryFn: ({ pageParam }) =>
      unwrap(
        client.GET('/api/v1/approvals', {
          params: {
            query: {
              ...(status ? { status } : {}),
              limit: String(PAGE),
              ...(pageParam ? { cursor: pageParam } : {}),
            },
          },
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
}

/**
 * `POST /api/v1/webhooks/approval`: records the reviewer's decision and resumes the execution;
 * the control plane then delivers the decision to the agent, which decides what it means.
 */
export function submitDecision(
  client: SwitchyardClient,
  approvalRequestId: string,
  decision: Decision,
  feedback: string,
) {
  return unwrap(
    client.POST('/api/v1/webhooks/approval', {
      body: {
        approval_request_id: approvalRequestId,
        decision,
        ...(feedback.trim() ? { feedback: feedback.trim() } : {}),
      },
    }),
  );
}
