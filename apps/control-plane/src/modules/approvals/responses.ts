import { z } from 'zod';
import { APPROVAL_STATUSES, CALLBACK_STATUSES, DECISIONS } from './schemas.ts';

/*
 * What the approvals API answers: the shapes views.ts builds, as the OpenAPI document describes
 * them. Objects list the members clients rely on and allow more.
 */

const Timestamp = z.iso.datetime();

export const WaitingSchema = z
  .looseObject({
    execution_id: z.string(),
    status: z.literal('waiting'),
    approval_request_id: z.string(),
    approval_request_url: z.string().nullable(),
    expires_at: Timestamp,
  })
  .meta({ id: 'ApprovalWaiting', description: 'The execution now waits for this approval request.' });

export const CallbackSchema = z
  .looseObject({
    url: z.string(),
    status: z.enum(CALLBACK_STATUSES).nullable().meta({
      description:
        'null until there is something to deliver; `pending`: waiting for its next attempt; `delivering`: an attempt is in flight; `delivered`: the agent answered 2xx; `abandoned`: the execution ended before the agent took it, or asked for approval again (so the agent had it).',
    }),
    attempts: z.int().min(0),
    last_status_code: z.int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: Timestamp.nullable(),
    delivered_at: Timestamp.nullable(),
  })
  .meta({ id: 'ApprovalCallback', description: "The decision's delivery to the agent's callback_url." });

export const ApprovalSchema = z
  .looseObject({
    approval_request_id: z.string(),
    execution_id: z.string(),
    node_id: z.string(),
    target: z.string(),
    status: z.enum(APPROVAL_STATUSES).meta({
      description:
        '`pending` until a decision; then the decision, `expired` (no decision by expires_at: the execution ended as `timeout`) or `cancelled` (the execution ended otherwise first).',
    }),
    decision: z
      .enum([...DECISIONS, 'expired'])
      .nullable()
      .meta({ description: 'What the agent is told; null while pending or when cancelled.' }),
    feedback: z.string().nullable(),
    approval_request_url: z.string().nullable(),
    requested_at: Timestamp,
    expires_at: Timestamp,
    decided_at: Timestamp.nullable().meta({ description: 'When it was decided, expired or cancelled.' }),
    callback: CallbackSchema.nullable().meta({
      description: 'null when the agent gave no callback_url (it polls).',
    }),
  })
  .meta({ id: 'ApprovalRequest', description: 'One approval request and where it stands.' });

export const DecidedSchema = ApprovalSchema.extend({
  execution_status: z
    .string()
    .meta({ description: "The execution's status now: `running` after a decision." }),
}).meta({ id: 'ApprovalDecided' });

export const ListSchema = z
  .object({
    approvals: z.array(ApprovalSchema).meta({ description: 'Newest request first.' }),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'ApprovalList' });

export const AwaiterAnswerSchema = z
  .looseObject({
    execution_id: z.string(),
    status: z.enum(['waiting', 'running']),
    reason: z.string().nullable(),
    execution_status: z.string().meta({
      description:
        "The execution's status after the report: `waiting` while it awaits a child (or its own approval), `running` once it goes on, or the status it ended with.",
    }),
    recorded: z.boolean().meta({
      description:
        "Whether it was kept in the execution's log (false once the log holds its 10,000 entries).",
    }),
    received_at: Timestamp,
  })
  .meta({ id: 'AwaiterStatus' });
