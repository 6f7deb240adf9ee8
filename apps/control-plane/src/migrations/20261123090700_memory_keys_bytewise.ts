import type { Migration } from '@switchyard/shared/db';

/**
 * Memory keys compare bytewise (`collate "C"`): lists page in that order on every database, and
 * with the column in that collation the primary key gives a page in order, instead of every key
 * of the scope after `after` being read and sorted for each page.
 */
export const memoryKeysBytewise: Migration = {
  name: '20261123090700_memory_keys_bytewise',
  async up(db) {
    await db.raw('alter table memory_entries alter column key type text collate "C"');
  },
  async down(db) {
    await db.raw('alter table memory_entries alter column key type text collate "default"');
  },
};
