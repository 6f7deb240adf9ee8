import { choiceSetting, integerSetting } from '@switchyard/shared/settings';
import { setting } from '../../platform/config/setting.ts';

/** Memory (config `memory:`). */
export const memorySettings = {
  maxValueBytes: setting({
    key: 'memory.max_value_bytes',
    env: 'SWITCHYARD_MEMORY_MAX_VALUE_BYTES',
    schema: integerSetting(1, 64 * 1024 * 1024),
    default: 1024 * 1024,
    fromDatabase: true,
    meaning: 'Largest memory value (its JSON text, in bytes) a set accepts; larger answers 413.',
  }),
  scopeMaxEntries: setting({
    key: 'memory.scope_max_entries',
    env: 'SWITCHYARD_MEMORY_SCOPE_MAX_ENTRIES',
    schema: integerSetting(1, 1_000_000_000),
    default: 1_000_000,
    fromDatabase: true,
    meaning:
      'Most entries (keys and vectors together) one scope may hold (one workflow, session, actor, or global); a write that adds one more answers 409 quota_exceeded.',
  }),
  scopeMaxBytes: setting({
    key: 'memory.scope_max_bytes',
    env: 'SWITCHYARD_MEMORY_SCOPE_MAX_BYTES',
    schema: integerSetting(1, 2 ** 40),
    default: 256 * 1024 * 1024,
    fromDatabase: true,
    meaning:
      'Most bytes of keys, values and vectors one scope may hold; a write that would pass it answers 409 quota_exceeded.',
  }),
  maxVectorDimensions: setting({
    key: 'memory.max_vector_dimensions',
    env: 'SWITCHYARD_MEMORY_MAX_VECTOR_DIMENSIONS',
    schema: integerSetting(1, 16_000),
    default: 4096,
    fromDatabase: true,
    meaning: 'Most numbers an embedding may have.',
  }),
  vectorSearch: setting({
    key: 'memory.vector_search',
    env: 'SWITCHYARD_MEMORY_VECTOR_SEARCH',
    schema: choiceSetting(['auto', 'exact'] as const),
    default: 'auto',
    fromDatabase: true,
    meaning:
      'Vector search engine: `auto` uses pgvector HNSW indexes where the extension exists, `exact` always compares every vector.',
  }),
  vectorEfSearch: setting({
    key: 'memory.vector_ef_search',
    env: 'SWITCHYARD_MEMORY_VECTOR_EF_SEARCH',
    schema: integerSetting(1, 1000),
    default: 100,
    fromDatabase: true,
    meaning:
      'Candidates an HNSW search keeps (pgvector `hnsw.ef_search`): higher finds more true neighbours, slower.',
  }),
  vectorSearchResponse: setting({
    key: 'memory.vector_search_response',
    env: 'SWITCHYARD_MEMORY_VECTOR_SEARCH_RESPONSE',
    schema: choiceSetting(['results', 'array'] as const),
    default: 'results',
    fromDatabase: true,
    meaning:
      'Shape of a vector search answer: `results` is `{ results: [...] }`; `array` is the bare array of the same results, as the agent SDKs expect.',
  }),
};
