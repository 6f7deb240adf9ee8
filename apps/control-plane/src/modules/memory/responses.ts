import { z } from 'zod';
import { MEMORY_CHANGE } from './events.ts';
import { SCOPES } from './scopes.ts';

/*
 * What key-value memory and its event history answer: the shapes views.ts (and the event
 * routes) build, as the OpenAPI document describes them. Vector memory's answers are in
 * vector-responses.ts.
 */

const Timestamp = z.iso.datetime();

const ScopeOut = z.enum(SCOPES);

export const WrittenSchema = z
  .looseObject({
    key: z.string(),
    scope: ScopeOut.meta({ description: 'The scope written to.' }),
    scope_id: z.string().meta({ description: 'Its id (`global` for the global scope).' }),
    created_at: Timestamp.meta({ description: 'When the key was first written in this scope.' }),
    updated_at: Timestamp.meta({ description: 'When this write happened.' }),
  })
  .meta({ id: 'MemoryWrite' });

export const MemoryEntrySchema = z
  .looseObject({
    key: z.string(),
    data: z.unknown().meta({ description: 'The stored JSON value, as written.' }),
    scope: ScopeOut.meta({ description: 'The scope the value came from.' }),
    scope_id: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'MemoryEntry', description: 'A key-value memory entry.' });

export const DeletedSchema = z
  .looseObject({
    key: z.string(),
    scope: ScopeOut,
    scope_id: z.string(),
    deleted: z.boolean().meta({ description: 'False when the key was not there (not an error).' }),
  })
  .meta({ id: 'MemoryDelete' });

/** A memory change as history answers it and the streams send it (content/api/memory.md). */
export const MemoryEventSchema = z
  .object({
    id: z.string().meta({
      description:
        'The event id (`<tx>-<id>`): resume after it with `Last-Event-ID`, `last_event_id` or `after`, on any replica.',
    }),
    type: z.literal(MEMORY_CHANGE),
    scope: z.enum(SCOPES),
    scope_id: z.string().meta({ description: 'The scope’s id (`global` for the global scope).' }),
    key: z.string(),
    action: z.enum(['set', 'delete']),
    data: z.unknown().meta({ description: 'The value written, or for a delete the value removed.' }),
    timestamp: z.iso.datetime().meta({ description: 'When the change was applied.' }),
  })
  .meta({ id: 'MemoryEvent' });

export const MemoryHistorySchema = z.object({
  events: z.array(MemoryEventSchema).meta({ description: 'Oldest first.' }),
  has_more: z.boolean().meta({ description: 'True when more events matched after the last one here.' }),
  next_cursor: z.string().nullable().meta({
    description:
      'Pass as `after` for the next page (also when `has_more` is false, to poll later for newer events); null when the page is empty and no `after` was given.',
  }),
});

/** The list answer: the entries of one scope. */
export const MemoryEntryListSchema = z.array(MemoryEntrySchema);
