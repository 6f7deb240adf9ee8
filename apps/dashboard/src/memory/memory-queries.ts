import { type SwitchyardClient, unwrap } from '@switchyard/client';
import { queryOptions } from '@tanstack/react-query';

export const MEMORY_SCOPES = ['global', 'workflow', 'session', 'actor'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

/** One memory namespace: a scope and, except for global, its id. */
export interface ScopeChoice {
  scope: MemoryScope;
  scopeId: string;
}

/** Every memory query starts with this key, so a change refreshes all of them. */
export const MEMORY_KEY = ['memory'] as const;

/** The most entries one list call returns (the server's page size). */
export const MEMORY_PAGE_SIZE = 1000;

/** `scope` and `scope_id` as the memory API's bodies and queries take them. */
export function scopeFields(choice: ScopeChoice) {
  return choice.scope === 'global'
    ? { scope: 'global' as const }
    : { scope: choice.scope, scope_id: choice.scopeId.trim() };
}

/** Whether the choice names a scope the API can read (every scope but global needs an id). */
export function scopeReady(choice: ScopeChoice): boolean {
  return choice.scope === 'global' || choice.scopeId.trim() !== '';
}

/** The keys and values of one scope, one page of up to 1000 after `after` (GET /api/v1/memory/list). */
export function memoryListQuery(client: SwitchyardClient, choice: ScopeChoice, after: string | undefined) {
  return queryOptions({
    queryKey: [...MEMORY_KEY, 'list', choice.scope, choice.scopeId.trim(), after ?? ''],
    queryFn: () =>
      unwrap(
        client.GET('/api/v1/memory/list', {
          params: {
            query: {
              ...scopeFields(choice),
              limit: MEMORY_PAGE_SIZE,
              ...(after ? { after } : {}),
            },
          },
        }),
      ),
    enabled: scopeReady(choice),
  });
}
