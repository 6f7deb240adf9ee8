/**
 * The API key lives in sessionStorage only: it survives a reload of the tab but not the tab
 * itself, and is never written anywhere longer-lived.
 */
const STORAGE_KEY = 'switchyard.apiKey';

export function readApiKey(): string | undefined {
  try {
    return sessionStorage.getItem(STORAGE_KEY) || undefined;
  } catch {
    return undefined;
  }
}

export function writeApiKey(key: string | undefined): void {
  try {
    if (key) sessionStorage.setItem(STORAGE_KEY, key);
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage refused (private mode quota): the key still works for this page's lifetime.
  }
}
