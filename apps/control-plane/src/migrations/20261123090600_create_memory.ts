import type { Migration } from '@switchyard/shared/db';

/**
 * Key-value memory and vector memory. An entry is identified by its scope (workflow, session,
 * actor, global), the scope's id and its key. Embeddings are `real[]` so the same table works with
 * and without pgvector: where the extension exists, HNSW indexes are built per dimension on the
 * expression `embedding::vector(n)` (created when a dimension is first stored); where it does not,
 * search computes cosine similarity with `memory_vector_dot` and the stored norm.
 */
export const createMemory: Migration = {
  name: '20261123090600_create_memory',
  async up(db) {
    await db.schema.createTable('memory_entries', (table) => {
      table.text('scope').notNullable();
      table.text('scope_id').notNullable();
      table.text('key').notNullable();
      table.jsonb('data').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.timestamp('updated_at', { useTz: true }).notNullable();
      table.primary(['scope', 'scope_id', 'key']);
    });
    await db.schema.createTable('memory_vectors', (table) => {
      table.text('scope').notNullable();
      table.text('scope_id').notNullable();
      table.text('key').notNullable();
      table.integer('dimensions').notNullable();
      table.specificType('embedding', 'real[]').notNullable();
      table.double('norm').notNullable();
      table.jsonb('metadata').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable();
      table.timestamp('updated_at', { useTz: true }).notNullable();
      table.primary(['scope', 'scope_id', 'key']);
      table.index(['scope', 'scope_id', 'dimensions'], 'memory_vectors_scope_dimensions_idx');
    });
    // Exact search without pgvector: cosine similarity is this dot product over the stored norms.
    await db.raw(`
      create function memory_vector_dot(a real[], b real[]) returns double precision
      language sql immutable parallel safe
      as $$ select sum(x::double precision * y) from unnest(a, b) as t(x, y) $$`);
  },
  async down(db) {
    await db.raw('drop function if exists memory_vector_dot(real[], real[])');
    await db.schema.dropTable('memory_vectors');
    await db.schema.dropTable('memory_entries');
  },
};
