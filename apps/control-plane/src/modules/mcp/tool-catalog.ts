import type { Clock } from '../../platform/clock.ts';
import type { EventBus } from '../../platform/events/index.ts';
import type { Logger } from '../../platform/logger.ts';
import { NODES_TOPIC, type NodeInstanceRecord } from '../nodes/index.ts';
import { type FunctionTool, fingerprint, functionTools } from './function-tools.ts';

/** How long a listing is kept when no node event clears it first (a missed bus message heals). */
const LISTING_TTL_MS = 2_000;
/** Node events come in bursts (a deploy registers a fleet): one check after the burst. */
const CHECK_DELAY_MS = 100;

export interface ToolCatalogDeps {
  listInstances: () => Promise<NodeInstanceRecord[]>;
  events: EventBus;
  clock: Clock;
  log: Logger;
  /** True while some client could be told (an MCP session is open): no session, no checks. */
  listening: () => boolean;
  /** Called when the function tools differ from the ones last listed. */
  onChange: () => void;
}

/**
 * The registered functions as tools, read at most every two seconds and at once after a node
 * event. A node event on any replica (registration, a status change, removal) is followed by a
 * fresh listing; when it differs from the list last offered, `onChange` tells the open sessions,
 * which then ask for the list again (notifications/tools/list_changed).
 */
export function createToolCatalog(deps: ToolCatalogDeps) {
  let cached: { at: number; tools: Promise<FunctionTool[]> } | undefined;
  let offered: string | undefined;
  let checkTimer: NodeJS.Timeout | undefined;

  function list(): Promise<FunctionTool[]> {
    const now = deps.clock.now();
    if (!cached || now - cached.at >= LISTING_TTL_MS) {
      const tools = deps.listInstances().then(functionTools);
      // A failed read is not kept: the next caller reads again.
      tools.catch(() => {
        if (cached?.tools === tools) cached = undefined;
      });
      cached = { at: now, tools };
    }
    return cached.tools.then((tools) => {
      offered = fingerprint(tools);
      return tools;
    });
  }

  async function check(): Promise<void> {
    checkTimer = undefined;
    if (!deps.listening() || offered === undefined) return;
    const before = offered;
    try {
      const after = fingerprint(await list());
      if (after !== before) deps.onChange();
    } catch (error) {
      deps.log.warn({ err: error }, 'could not list function tools after a node event');
    }
  }

  deps.events.subscribe(NODES_TOPIC, () => {
    cached = undefined;
    if (!checkTimer && deps.listening()) {
      checkTimer = setTimeout(() => void check(), CHECK_DELAY_MS);
      checkTimer.unref();
    }
  });

  return { list };
}
