import { RUN_BUNDLE_LIMITS } from '@switchyard/shared';
import { z } from 'zod';

/** A share request's body is small: a title and a flag. */
export const SHARE_BODY_LIMIT = 16 * 1024;

/** Control characters (C0, DEL, C1) and lone surrogates: nothing a title shows or stores. */
function unprintable(text: string): boolean {
  if (!text.isWellFormed()) return true;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** The title the permalink shows; blank means none (the docs site then names the workflow). */
export const ShareTitleSchema = z
  .string()
  .trim()
  .max(RUN_BUNDLE_LIMITS.text)
  .refine((title) => !unprintable(title), 'a title may not contain control characters or lone surrogates')
  .meta({
    description: `Shown as the run's title on its page; at most ${RUN_BUNDLE_LIMITS.text} characters, trimmed. Blank or absent: the page names the workflow.`,
    example: 'Refund triage for ticket 42',
  });

const REDACT =
  'Replace every input, output and error text by `"[redacted]"`, keeping the graph, statuses and times. Default `true`: a share is public, so inputs and outputs leave only when asked for.';
const RedactSchema = z.boolean().meta({ description: REDACT });

/** POST /api/ui/v1/workflows/{workflow_id}/share: a JSON object, `{}` for the defaults. */
export const ShareBodySchema = z
  .strictObject({
    title: ShareTitleSchema.optional(),
    redact: RedactSchema.optional(),
  })
  .meta({ id: 'ShareRequest' });

/** GET /api/ui/v1/workflows/{workflow_id}/bundle?redact=…&title=… */
export const BundleQuerySchema = z.strictObject({
  redact: z.enum(['true', 'false']).optional().meta({ description: REDACT }),
  title: ShareTitleSchema.optional(),
});
