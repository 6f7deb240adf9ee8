import type { Migration } from '@switchyard/shared/db';

/** One function document list with every boolean `accepts_webhook` rewritten as its string. */
function functionsWithStrings(column: 'reasoners' | 'skills'): string {
  return `(select coalesce(jsonb_agg(
              case when jsonb_typeof(f->'accepts_webhook') = 'boolean'
                   then jsonb_set(f, '{accepts_webhook}', to_jsonb(f->>'accepts_webhook'))
                   else f end
              order by position), '[]'::jsonb)
       from jsonb_array_elements(${column}) with ordinality as fs(f, position))`;
}

/**
 * `accepts_webhook` is one of "true", "false" and "warn", as the platform's SDKs send it (the
 * strings are what they mean; "warn" has no boolean). The agent's own flag was a boolean column
 * and functions kept whatever was sent: both now hold the strings.
 */
export const acceptsWebhookStrings: Migration = {
  name: '20261126090000_accepts_webhook_strings',
  async up(db) {
    await db.raw(`alter table node_instances
      alter column accepts_webhook drop default,
      alter column accepts_webhook type text
        using case when accepts_webhook then 'true' else 'false' end,
      alter column accepts_webhook set default 'false',
      add constraint node_instances_accepts_webhook_check
        check (accepts_webhook in ('true', 'false', 'warn'))`);
    await db.raw(
      `update node_instances set reasoners = ${functionsWithStrings('reasoners')}, skills = ${functionsWithStrings('skills')}`,
    );
  },
  async down(db) {
    // "warn" has no boolean; it was the SDKs' default, which lets webhooks through.
    await db.raw(`alter table node_instances
      drop constraint node_instances_accepts_webhook_check,
      alter column accepts_webhook drop default,
      alter column accepts_webhook type boolean using accepts_webhook <> 'false',
      alter column accepts_webhook set default false`);
  },
};
