import { ApiProblem, createSwitchyardClient, type SwitchyardClient } from '@switchyard/client';
import { useQueryClient } from '@tanstack/react-query';
import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import { apiKeySecret } from './session-secret.ts';

/** What every page needs to reach the control plane. */
export interface Connection {
  /** The origin serving the dashboard, which is the control plane's. */
  baseUrl: string;
  apiKey: string | undefined;
  client: SwitchyardClient;
  /** True once a call answered 401: the header then asks for the key. */
  keyRequired: boolean;
  /** Marks that the server refused the current key (or its absence). */
  requireKey(): void;
  /** Stores the key for this tab and makes every call and stream use it. */
  setApiKey(key: string): void;
}

const ConnectionContext = createContext<Connection | null>(null);

/** Mutation meta: its 401 answers are not about the API key (see ConnectionProvider). */
export const NOT_ABOUT_THE_KEY = 'unauthorizedNotAboutTheKey';

export function isUnauthorized(error: unknown): boolean {
  return error instanceof ApiProblem && error.status === 401;
}

/**
 * Holds the client for the current API key. Any query or mutation answered 401 makes the header
 * ask for the key; a new key replaces the client, after which every query runs again with it.
 */
export function ConnectionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const baseUrl = window.location.origin;
  const [apiKey, setKey] = useState(apiKeySecret.read);
  const [keyRequired, setKeyRequired] = useState(false);
  const client = useMemo(() => createSwitchyardClient({ baseUrl, apiKey }), [baseUrl, apiKey]);
  const requireKey = useCallback(() => setKeyRequired(true), []);
  const setApiKey = useCallback((key: string) => {
    apiKeySecret.write(key);
    setKey(key);
    setKeyRequired(false);
  }, []);

  useEffect(() => {
    const fromQueries = queryClient.getQueryCache().subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'error' && isUnauthorized(event.action.error))
        requireKey();
    });
    // A mutation whose 401 is about something else than the key (a decision the control plane
    // only takes signed) says so in its meta, and shows its own problem instead.
    const fromMutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type === 'updated' && event.mutation?.state.status === 'error')
        if (isUnauthorized(event.mutation.state.error) && !event.mutation.meta?.[NOT_ABOUT_THE_KEY])
          requireKey();
    });
    return () => {
      fromQueries();
      fromMutations();
    };
  }, [queryClient, requireKey]);

  // Runs after the render that gave the pages the new client, so refetches use the new key.
  const firstClient = useRef(client);
  useEffect(() => {
    if (client !== firstClient.current) void queryClient.resetQueries();
  }, [client, queryClient]);

  const value = useMemo(
    () => ({ baseUrl, apiKey, client, keyRequired, requireKey, setApiKey }),
    [baseUrl, apiKey, client, keyRequired, requireKey, setApiKey],
  );
  return <ConnectionContext.Provider value={value}>{children}</ConnectionContext.Provider>;
}

export function useConnection(): Connection {
  const connection = useContext(ConnectionContext);
  if (!connection) throw new Error('useConnection outside ConnectionProvider');
  return connection;
}
