import { useQuery } from '@tanstack/react-query';
import { useConnection } from '../connection/connection.tsx';
import { overviewQuery } from '../overview/overview-query.ts';

/**
 * Until the overview has answered, links go to the default the control plane itself falls back
 * to: the docs server `npm start` runs beside it.
 */
const DEFAULT_DOCS_URL = 'http://127.0.0.1:4321';

/** The documentation site the control plane names (SWITCHYARD_DOCS_URL), from its overview. */
export function useDocsUrl(): string {
  const { client } = useConnection();
  const overview = useQuery(overviewQuery(client));
  return (overview.data?.docs_url ?? DEFAULT_DOCS_URL).replace(/\/+$/, '');
}
