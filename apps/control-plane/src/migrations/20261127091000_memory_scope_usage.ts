import type { Migration } from '@switchyard/shared/db';

/**
 * A quota per memory scope instance (`workflow` + `wf_9`): how many entries (key-value entries
 * and vectors together) it holds and how many bytes. `memory_scope_usage` keeps one counter row
 * per scope instance, maintained by triggers on both memory tables in the same transaction as
 * every write, so the counts are exact whoever writes (an older replica during a rolling upgrade
 * included) and cost no scan of the scope.
 *
 * A row's size is a stored generated column: its key plus its value as PostgreSQL prints the
 * jsonb, or for a vector, its key, 4 bytes a dimension and its metadata. Being stored, the old
 * size of a replaced or deleted row is read back exactly, without printing the old value again.
 *
 * The limits are not in the database: a writer that enforces them sets the transaction-local
 * settings `switchyard.memory_scope_max_entries` and `switchyard.memory_scope_max_bytes`, and a
 * write that grows a scope past either fails with SQLSTATE SYQ01 (its detail, JSON, says how
 * full the scope is). The counter row is updated with INSERT … ON CONFLICT DO UPDATE, which locks
 * it until commit and re-reads the committed count after waiting: two writers that each saw room
 * are counted one after the other, and the second one over the limit fails. A write that does
 * not grow the scope (a smaller value, a delete) always passes, so a scope over a lowered limit
 * can be emptied.
 */
export const memoryScopeUsage: Migration = {
  name: '20261127091000_memory_scope_usage',
  async up(db) {
    await db.raw(
      `alter table memory_entries add column bytes integer
         generated always as (octet_length(key) + octet_length(data::text)) stored`,
    );
    await db.raw(
      `alter table memory_vectors add column bytes integer
         generated always as (octet_length(key) + 4 * dimensions + octet_length(metadata::text)) stored`,
    );
    await db.schema.createTable('memory_scope_usage', (table) => {
      table.text('scope').notNullable();
      table.text('scope_id').notNullable();
      table.bigInteger('entries').notNullable();
      table.bigInteger('bytes').notNullable();
      table.primary(['scope', 'scope_id']);
    });
    await db.raw(
      `insert into memory_scope_usage (scope, scope_id, entries, bytes)
       select scope, scope_id, count(*), sum(bytes)
       from (select scope, scope_id, bytes from memory_entries
             union all
             select scope, scope_id, bytes from memory_vectors) as stored
       group by scope, scope_id`,
    );
    await db.raw(`
      create function memory_scope_usage_add(p_scope text, p_scope_id text, p_entries bigint, p_bytes bigint)
      returns void language plpgsql as $$
      declare
        now_entries bigint;
        now_bytes bigint;
        max_entries bigint := nullif(current_setting('switchyard.memory_scope_max_entries', true), '')::bigint;
        max_bytes bigint := nullif(current_setting('switchyard.memory_scope_max_bytes', true), '')::bigint;
      begin
        insert into memory_scope_usage as u (scope, scope_id, entries, bytes)
        values (p_scope, p_scope_id, p_entries, p_bytes)
        on conflict (scope, scope_id) do update
          set entries = u.entries + excluded.entries, bytes = u.bytes + excluded.bytes
        returning u.entries, u.bytes into now_entries, now_bytes;
        if (p_entries > 0 and now_entries > max_entries) or (p_bytes > 0 and now_bytes > max_bytes) then
          raise exception 'memory scope % "%" is over its quota', p_scope, p_scope_id
            using errcode = 'SYQ01',
                  detail = json_build_object(
                    'scope', p_scope, 'scope_id', p_scope_id,
                    'entries', now_entries - p_entries, 'bytes', now_bytes - p_bytes,
                    'added_entries', p_entries, 'added_bytes', p_bytes,
                    'max_entries', max_entries, 'max_bytes', max_bytes)::text;
        end if;
        -- An emptied scope leaves no row behind (workflow and session ids come and go).
        if now_entries = 0 and now_bytes = 0 then
          delete from memory_scope_usage where scope = p_scope and scope_id = p_scope_id;
        end if;
      end $$`);
    await db.raw(`
      create function memory_scope_usage_count() returns trigger language plpgsql as $$
      begin
        if tg_op = 'UPDATE' and new.scope = old.scope and new.scope_id = old.scope_id then
          if new.bytes <> old.bytes then
            perform memory_scope_usage_add(new.scope, new.scope_id, 0, new.bytes - old.bytes);
          end if;
        else
          if tg_op <> 'INSERT' then
            perform memory_scope_usage_add(old.scope, old.scope_id, -1, -old.bytes);
          end if;
          if tg_op <> 'DELETE' then
            perform memory_scope_usage_add(new.scope, new.scope_id, 1, new.bytes);
          end if;
        end if;
        return null;
      end $$`);
    for (const table of ['memory_entries', 'memory_vectors']) {
      await db.raw(
        `create trigger ${table}_scope_usage after insert or update or delete on ${table}
         for each row execute function memory_scope_usage_count()`,
      );
    }
  },
  async down(db) {
    for (const table of ['memory_entries', 'memory_vectors']) {
      await db.raw(`drop trigger if exists ${table}_scope_usage on ${table}`);
    }
    await db.raw('drop function if exists memory_scope_usage_count()');
    await db.raw('drop function if exists memory_scope_usage_add(text, text, bigint, bigint)');
    await db.schema.dropTable('memory_scope_usage');
    await db.schema.alterTable('memory_vectors', (table) => table.dropColumn('bytes'));
    await db.schema.alterTable('memory_entries', (table) => table.dropColumn('bytes'));
  },
};
