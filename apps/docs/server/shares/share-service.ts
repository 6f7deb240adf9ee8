import { ProblemError } from '@switchyard/shared';
import type { RunBundle } from './run-bundle.ts';
import type { ShareStore, StoredShare } from './share-store.ts';
import { checkWriteBudget, type WriteBudget, windowStart } from './write-budget.ts';

export interface ShareService {
  /** Stores a validated bundle published by `client` (its address), within its write budget. */
  publish(bundle: RunBundle, client: string): Promise<StoredShare>;
  find(id: string): Promise<StoredShare | undefined>;
}

function kibibytes(bytes: number): string {
  return `${Math.ceil(bytes / 1024).toLocaleString('en')} KiB`;
}

export function createShareService(deps: {
  store: ShareStore;
  budget: WriteBudget;
  /** Milliseconds since the epoch; tests move it instead of waiting for windows to pass. */
  now?: () => number;
}): ShareService {
  const { store, budget } = deps;
  const now = deps.now ?? Date.now;
  return {
    async publish(bundle, client) {
      const at = new Date(now());
      const json = JSON.stringify(bundle);
      const bytes = Buffer.byteLength(json);
      if (bytes > budget.bytes) {
        throw new ProblemError(
          'payload_too_large',
          `The run bundle needs ${bytes} bytes of storage, more than the write budget of ${budget.bytes} bytes per ${budget.windowSeconds} seconds.`,
        );
      }
      return store.asWriter(client, async (writer) => {
        const since = windowStart(budget, at);
        await writer.forgetWritesBefore(since);
        const verdict = checkWriteBudget(budget, await writer.recentWrites(since), bytes, at);
        if (!verdict.allowed) {
          throw new ProblemError(
            'rate_limited',
            `This client stored ${kibibytes(verdict.usedBytes)} of run bundles in the last ${budget.windowSeconds} seconds; the write budget is ${kibibytes(budget.bytes)} per ${budget.windowSeconds} seconds and this bundle needs ${kibibytes(bytes)}.`,
            {
              headers: { 'Retry-After': String(verdict.retryAfterSeconds) },
              resolution:
                'Wait for the number of seconds in Retry-After, then publish again; nothing was stored.',
            },
          );
        }
        return writer.insert(bundle, json, at);
      });
    },
    find: (id) => store.find(id),
  };
}
