/**
 * The run bundle (schema version 1): one workflow run as the control plane and the platform CLI
 * publish it to the docs site (`POST /api/v1/shares`), which shows it at a permalink. The
 * publisher and the site read their bounds from here, so a bundle the control plane builds is
 * never one the site refuses for its size.
 */

/** The only schema version of the run bundle. */
export const RUN_BUNDLE_VERSION = 1;

/** Bounds of a run bundle, enforced by the docs site's publish handler. */
export const RUN_BUNDLE_LIMITS = {
  /** Ids, names, titles and other short text. */
  text: 200,
  /** A preview or error text, in characters. */
  preview: 20_000,
  nodes: 2000,
  edges: 10_000,
  totals: 32,
  totalKey: 64,
} as const;

/** A publisher clips each input and output preview to this many characters of pretty JSON… */
export const RUN_PREVIEW_CHARS = 2048;
/** …and marks the cut with this. */
export const RUN_PREVIEW_TRUNCATED = '\n… [truncated]';
/** A preview (and an error) whose text was withheld at the publisher's request. */
export const RUN_PREVIEW_REDACTED = '[redacted]';
