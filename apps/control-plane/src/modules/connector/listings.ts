import { createAnswerCache } from '../../platform/answer-cache.ts';
import { ENVELOPE_BYTES, fitJsonEntries } from '../../platform/http/bounded-page.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import type { NodeInstanceRecord } from '../nodes/index.ts';
import type { GroupPageSchema, ReasonerPageSchema } from './responses.ts';
import {
  encodeFunctionCursor,
  encodeGroupCursor,
  type FunctionRef,
  type GroupListQuery,
  type ReasonerListQuery,
} from './schemas.ts';
import { functionsOfNode, groupView, reasonerView } from './views.ts';

/**
 * The most bytes one list answer holds (see platform/http/bounded-page.ts). A function record is
 * a few hundred bytes, but its description may be 4,000 characters and its `versions` list as
 * long as the node's versions, and a group lists every function id twice (the node's and each
 * version's): 1,000 functions make a 60 KB group. 1 MiB keeps what one request builds small,
 * so a crawl of a large fleet by several clients at once cannot take the replica's memory.
 */
export const CONNECTOR_ANSWER_BYTES = 1024 * 1024;
/** Bytes of rendered pages the cache keeps (keys included), the oldest evicted first. */
export const CONNECTOR_CACHE_MAX_BYTES = 16 * 1024 * 1024;

/** A list answer ready to send: encoded once, so a cache hit is sent without re-encoding. */
export interface ListAnswer {
  body: Buffer;
  cached: boolean;
}

interface FunctionEntry {
  /** Sorts as the list does: node id, reasoners before skills, name (see functionKey). */
  key: string;
  fn: FunctionRef;
  serving: NodeInstanceRecord[];
}

/** The fleet as the lists page it: functions and groups in list order. */
interface FleetIndex {
  functions: FunctionEntry[];
  groups: NodeInstanceRecord[][];
}

/**
 * The sort key of a function. Node ids and function names hold only letters, digits, `_` and `-`,
 * so joining the parts with U+0001 (below all of them) orders keys exactly as comparing node id,
 * then kind, then name would. Keys compare by UTF-16 code unit, the same on every replica and
 * whatever the database's collation: a cursor means the same position everywhere.
 */
function functionKey(fn: Pick<FunctionRef, 'nodeId' | 'type' | 'name'>): string {
  return `${fn.nodeId}\u0001${fn.type === 'reasoner' ? 0 : 1}\u0001${fn.name}`;
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function indexFleet(instances: readonly NodeInstanceRecord[]): FleetIndex {
  const byNode = new Map<string, NodeInstanceRecord[]>();
  for (const instance of instances) {
    const group = byNode.get(instance.nodeId);
    if (group) group.push(instance);
    else byNode.set(instance.nodeId, [instance]);
  }
  const groups = [...byNode.entries()].sort(([a], [b]) => byCodeUnits(a, b)).map(([, group]) => group);
  const functions = groups
    .flatMap((group) =>
      functionsOfNode(group).map(({ fn, serving }) => ({ key: functionKey(fn), fn, serving })),
    )
    .sort((a, b) => byCodeUnits(a.key, b.key));
  return { functions, groups };
}

/** The index of the first entry whose key sorts after `after` (binary search; 0 without one). */
function startAfter<E>(sorted: readonly E[], keyOf: (entry: E) => string, after: string | undefined): number {
  if (after === undefined) return 0;
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keyOf(sorted[middle] as E) <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The members of a list page besides its entries. */
interface PageEnvelope {
  total: number;
  next_cursor: string | null;
}

/** The member of a documented page that holds its entries (`reasoners`, `groups`). */
type EntriesMember<Page> = Exclude<keyof Page, keyof PageEnvelope> & string;

/** One entry of that member, as the page's schema documents it. */
type EntryOf<Page> = Page[EntriesMember<Page>] extends readonly (infer Entry)[] ? Entry : never;

/**
 * One page of a sorted list as a JSON answer: `{ total, <member>: [...], next_cursor }`, written
 * as text so each entry is encoded once (the byte bound measures it, and the page cache keeps the
 * bytes). `Page` is the documented page (ResponseBody of its schema): the member name and what
 * `view` builds are checked against it, as a view's return type would be. The page is the `limit`
 * entries after the cursor, ended early before the entry that would pass `maxBytes`;
 * `next_cursor` names its last entry when more follow.
 */
function renderPage<Page extends PageEnvelope, E>(options: {
  member: EntriesMember<Page>;
  sorted: readonly E[];
  start: number;
  limit: number;
  view: (entry: E) => EntryOf<Page>;
  cursorOf: (entry: E) => string;
  maxBytes: number;
}): Buffer {
  const { sorted, start, limit } = options;
  const page = sorted.slice(start, start + limit);
  const budget = Math.max(0, options.maxBytes - ENVELOPE_BYTES);
  const { shown, pieces } = fitJsonEntries(page, options.view, budget);
  const last = page[shown - 1];
  const envelope: PageEnvelope = {
    total: sorted.length,
    next_cursor: start + shown < sorted.length && last !== undefined ? options.cursorOf(last) : null,
  };
  return Buffer.from(
    `{"total":${envelope.total},${JSON.stringify(options.member)}:[${pieces.join(',')}],"next_cursor":${JSON.stringify(envelope.next_cursor)}}`,
  );
}

export interface ConnectorListingsDeps {
  /** Every registered instance, functions as summaries (no schemas). */
  listInstances: () => Promise<NodeInstanceRecord[]>;
  /** How long the fleet and rendered pages are served from cache; 0 disables the cache. */
  cacheTtlMs: number;
  clock?: { now(): number };
  /** The byte bound of one answer; CONNECTOR_ANSWER_BYTES unless a test shrinks it. */
  maxAnswerBytes?: number;
}

/**
 * `GET /connector/reasoners` and `GET /connector/groups`: paged with a keyset cursor, bounded in
 * bytes, and cached like discovery. The fleet is read and indexed once per TTL (and again after
 * any node event, which `invalidate` receives on every replica), shared by concurrent requests;
 * rendered pages are cached per (list, limit, cursor) under the same rules.
 */
export function createConnectorListings(deps: ConnectorListingsDeps) {
  const now = () => (deps.clock ?? Date).now();
  const maxBytes = deps.maxAnswerBytes ?? CONNECTOR_ANSWER_BYTES;
  const fleet = createAnswerCache<FleetIndex>({ ttlMs: deps.cacheTtlMs, now, maxEntries: 1 });
  const pages = createAnswerCache<Buffer>({
    ttlMs: deps.cacheTtlMs,
    now,
    sizeOf: (body) => body.byteLength,
    maxBytes: CONNECTOR_CACHE_MAX_BYTES,
  });

  async function index(): Promise<FleetIndex> {
    const { value } = await fleet.remember('fleet', async () => indexFleet(await deps.listInstances()));
    return value;
  }

  function cachedPage(key: string, render: (fleet: FleetIndex) => Buffer): Promise<ListAnswer> {
    return pages
      .remember(key, async () => render(await index()))
      .then(({ value, cached }) => ({ body: value, cached }));
  }

  return {
    /** One page of every function of every node: node id, reasoners before skills, then name. */
    reasoners(query: ReasonerListQuery): Promise<ListAnswer> {
      const after = query.cursor === undefined ? undefined : functionKey(query.cursor.after);
      return cachedPage(`reasoners\u0000${query.limit}\u0000${after ?? ''}`, ({ functions }) =>
        renderPage<ResponseBody<typeof ReasonerPageSchema>, FunctionEntry>({
          member: 'reasoners',
          sorted: functions,
          start: startAfter(functions, (entry) => entry.key, after),
          limit: query.limit,
          view: ({ fn, serving }) => reasonerView(fn, serving, false),
          cursorOf: ({ fn }) => encodeFunctionCursor(fn),
          maxBytes,
        }),
      );
    },

    /** One page of groups (one per node id), by node id. */
    groups(query: GroupListQuery): Promise<ListAnswer> {
      const after = query.cursor?.after;
      return cachedPage(`groups\u0000${query.limit}\u0000${after ?? ''}`, ({ groups }) =>
        renderPage<ResponseBody<typeof GroupPageSchema>, NodeInstanceRecord[]>({
          member: 'groups',
          sorted: groups,
          start: startAfter(groups, (group) => (group[0] as NodeInstanceRecord).nodeId, after),
          limit: query.limit,
          view: groupView,
          cursorOf: (group) => encodeGroupCursor((group[0] as NodeInstanceRecord).nodeId),
          maxBytes,
        }),
      );
    },

    /** Drops the fleet and every page; called for each event on the `nodes` topic. */
    invalidate(): void {
      fleet.invalidate();
      pages.invalidate();
    },
  };
}

export type ConnectorListings = ReturnType<typeof createConnectorListings>;
