/**
 * Where the documentation site lives. The control plane knows it (SWITCHYARD_DOCS_URL) but no API
 * answer names it yet, so the dashboard links to the default the control plane itself falls back
 * to: the docs server `npm start` runs beside it.
 */
const DEFAULT_DOCS_URL = 'http://127.0.0.1:4321';

export function useDocsUrl(): string {
  return DEFAULT_DOCS_URL;
}
