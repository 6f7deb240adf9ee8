/**
 * Secrets the dashboard is given (the API key, the connector token) live in sessionStorage only:
 * they survive a reload of the tab but not the tab itself, and are never written anywhere
 * longer-lived.
 */
export interface SessionSecret {
  read(): string | undefined;
  /** Stores the value, or forgets it when given undefined or ''. */
  write(value: string | undefined): void;
}

function sessionSecret(storageKey: string): SessionSecret {
  return {
    read() {
      try {
        return sessionStorage.getItem(storageKey) || undefined;
      } catch {
        return undefined;
      }
    },
    write(value) {
      try {
        if (value) sessionStorage.setItem(storageKey, value);
        else sessionStorage.removeItem(storageKey);
      } catch {
        // Storage refused (private mode quota): the value still works for this page's lifetime.
      }
    },
  };
}

/** SERVICE_API_KEY, sent on every call and stream. */
export const apiKeySecret = sessionSecret('switchyard.apiKey');

/** SERVICE_CONNECTOR_TOKEN, sent only to the connector API (changing a version's weight). */
export const connectorTokenSecret = sessionSecret('switchyard.connectorToken');
