import { toIso, toIsoOrNull } from '@switchyard/shared';
import type { Knex } from 'knex';
import { RHYTHM_FACTOR, RHYTHM_HALF_LIFE_MS, type RhythmSettings } from './lifecycle.ts';
import type {
  AcceptsWebhook,
  AdminState,
  LifecycleStatus,
  NodeInstanceRecord,
  ReasonerSpec,
  SkillSpec,
  StatusReason,
} from './schemas.ts';

/** A database handle or an open transaction: every function here works inside either. */
export type Executor = Knex | Knex.Transaction;

/** Identifies one instance: a node id has one instance per registered version. */
export interface InstanceKey {
  nodeId: string;
  version: string;
}

const TABLE = 'node_instances';

interface InstanceRow {
  node_id: string;
  version: string;
  base_url: string;
  public_url: string | null;
  deployment_type: 'long_running' | 'serverless';
  tags: string[];
  proposed_tags: string[];
  accepts_webhook: AcceptsWebhook;
  metadata: Record<string, unknown>;
  reasoners: ReasonerSpec[];
  skills: SkillSpec[];
  traffic_weight: number;
  lifecycle_status: LifecycleStatus;
  status_reason: StatusReason;
  status_changed_at: Date | string;
  reported_status: LifecycleStatus | null;
  admin_state: AdminState;
  last_heartbeat: Date | string | null;
  heartbeat_interval_ms: number | null;
  last_seen_at: Date | string;
  lease_expires_at: Date | string | null;
  health_failures: number;
  healthy_since: Date | string | null;
  last_check_at: Date | string | null;
  last_check_ok: boolean | null;
  last_check_status_code: number | null;
  last_check_error: string | null;
  last_check_duration_ms: number | null;
  next_check_at: Date | string | null;
  custom_health: Record<string, unknown> | null;
  revision: number;
  evicted_at: Date | string | null;
  registered_at: Date | string;
  updated_at: Date | string;
}

function toRecord(row: InstanceRow): NodeInstanceRecord {
  return {
    nodeId: row.node_id,
    version: row.version,
    baseUrl: row.base_url,
    publicUrl: row.public_url,
    deploymentType: row.deployment_type,
    tags: row.tags,
    proposedTags: row.proposed_tags,
    acceptsWebhook: row.accepts_webhook,
    metadata: row.metadata,
    reasoners: row.reasoners,
    skills: row.skills,
    lifecycleStatus: row.lifecycle_status,
    trafficWeight: row.traffic_weight,
    lastHeartbeat: toIsoOrNull(row.last_heartbeat),
    registeredAt: toIso(row.registered_at),
    updatedAt: toIso(row.updated_at),
    statusReason: row.status_reason,
    statusChangedAt: toIso(row.status_changed_at),
    reportedStatus: row.reported_status,
    adminState: row.admin_state,
    lastSeenAt: toIso(row.last_seen_at),
    observedHeartbeatIntervalMs: row.heartbeat_interval_ms,
    leaseExpiresAt: toIsoOrNull(row.lease_expires_at),
    health: {
      consecutiveFailures: row.health_failures,
      healthySince: toIsoOrNull(row.healthy_since),
      lastCheckAt: toIsoOrNull(row.last_check_at),
      lastCheckOk: row.last_check_ok,
      lastCheckStatusCode: row.last_check_status_code,
      lastCheckError: row.last_check_error,
      lastCheckDurationMs: row.last_check_duration_ms,
    },
    customHealth: row.custom_health,
    revision: row.revision,
    evictedAt: toIsoOrNull(row.evicted_at),
  };
}

/** What a registration writes: the agent's description of itself. */
export type RegistrationValues = Pick<
  NodeInstanceRecord,
  | 'nodeId'
  | 'version'
  | 'baseUrl'
  | 'publicUrl'
  | 'deploymentType'
  | 'tags'
  | 'proposedTags'
  | 'acceptsWebhook'
  | 'metadata'
  | 'reasoners'
  | 'skills'
>;

/** Columns a transition may change; absent members stay as they are. */
export interface InstancePatch {
  lifecycleStatus?: LifecycleStatus;
  statusReason?: StatusReason;
  statusChangedAt?: Date;
  reportedStatus?: LifecycleStatus | null;
  adminState?: AdminState;
  lastHeartbeat?: Date | null;
  observedHeartbeatIntervalMs?: number | null;
  lastSeenAt?: Date;
  leaseExpiresAt?: Date | null;
  healthFailures?: number;
  healthySince?: Date | null;
  lastCheckAt?: Date | null;
  lastCheckOk?: boolean | null;
  lastCheckStatusCode?: number | null;
  lastCheckError?: string | null;
  lastCheckDurationMs?: number | null;
  nextCheckAt?: Date | null;
  customHealth?: Record<string, unknown> | null;
  trafficWeight?: number;
}

const PATCH_COLUMNS: Record<keyof InstancePatch, string> = {
  lifecycleStatus: 'lifecycle_status',
  statusReason: 'status_reason',
  statusChangedAt: 'status_changed_at',
  reportedStatus: 'reported_status',
  adminState: 'admin_state',
  lastHeartbeat: 'last_heartbeat',
  observedHeartbeatIntervalMs: 'heartbeat_interval_ms',
  lastSeenAt: 'last_seen_at',
  leaseExpiresAt: 'lease_expires_at',
  healthFailures: 'health_failures',
  healthySince: 'healthy_since',
  lastCheckAt: 'last_check_at',
  lastCheckOk: 'last_check_ok',
  lastCheckStatusCode: 'last_check_status_code',
  lastCheckError: 'last_check_error',
  lastCheckDurationMs: 'last_check_duration_ms',
  nextCheckAt: 'next_check_at',
  customHealth: 'custom_health',
  trafficWeight: 'traffic_weight',
};

function patchColumns(patch: InstancePatch): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const column = PATCH_COLUMNS[key as keyof InstancePatch];
    // jsonb columns take JSON text: `pg` would otherwise send an array as a PostgreSQL array.
    columns[column] = key === 'customHealth' && value !== null ? JSON.stringify(value) : value;
  }
  return columns;
}

function registrationColumns(values: RegistrationValues): Record<string, unknown> {
  return {
    base_url: values.baseUrl,
    public_url: values.publicUrl,
    deployment_type: values.deploymentType,
    tags: JSON.stringify(values.tags),
    proposed_tags: JSON.stringify(values.proposedTags),
    accepts_webhook: values.acceptsWebhook,
    metadata: JSON.stringify(values.metadata),
    reasoners: JSON.stringify(values.reasoners),
    skills: JSON.stringify(values.skills),
  };
}

function byKey(key: InstanceKey) {
  return { node_id: key.nodeId, version: key.version };
}

/** Filters of {@link listNodeInstances}; all optional, combined with AND. */
export interface InstanceFilter {
  nodeId?: string;
  nodeIds?: string[];
  status?: LifecycleStatus;
  tag?: string;
}

/** The registered (not evicted) instances a filter selects, as a query to build on. */
function selected(db: Executor, filter: InstanceFilter) {
  const query = db<InstanceRow>(TABLE).whereNull('evicted_at');
  if (filter.nodeId !== undefined) query.where('node_id', filter.nodeId);
  if (filter.nodeIds !== undefined) query.whereIn('node_id', filter.nodeIds);
  if (filter.status !== undefined) query.where('lifecycle_status', filter.status);
  if (filter.tag !== undefined) query.whereRaw('tags @> ?::jsonb', [JSON.stringify([filter.tag])]);
  return query;
}

/**
 * How much of each reasoner and skill a read carries: `full` is the function as registered;
 * `summary` keeps only the members of {@link SUMMARY_MEMBERS}, leaving out schemas, examples and
 * memory_config, which are most of a large registration's bytes.
 */
export type FunctionDetail = 'full' | 'summary';

const SUMMARY_MEMBERS = ['id', 'description', 'tags', 'proposed_tags', 'accepts_webhook'] as const;

/** Every column but the function documents, checked at compile time to miss none. */
const STATE_COLUMNS = [
  'node_id',
  'version',
  'base_url',
  'public_url',
  'deployment_type',
  'tags',
  'proposed_tags',
  'accepts_webhook',
  'metadata',
  'traffic_weight',
  'lifecycle_status',
  'status_reason',
  'status_changed_at',
  'reported_status',
  'admin_state',
  'last_heartbeat',
  'heartbeat_interval_ms',
  'last_seen_at',
  'lease_expires_at',
  'health_failures',
  'healthy_since',
  'last_check_at',
  'last_check_ok',
  'last_check_status_code',
  'last_check_error',
  'last_check_duration_ms',
  'next_check_at',
  'custom_health',
  'revision',
  'evicted_at',
  'registered_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof InstanceRow>;
type Unlisted = Exclude<keyof InstanceRow, (typeof STATE_COLUMNS)[number] | 'reasoners' | 'skills'>;
const everyColumnListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyColumnListed;

/**
 * The summaries of one function column, built in SQL: a summary read never moves the schemas
 * out of the database, so listing a fleet of large registrations costs what the list shows.
 */
function summaries(column: 'reasoners' | 'skills'): string {
  const members = SUMMARY_MEMBERS.map((m) => `'${m}', f -> '${m}'`).join(', ');
  return `(select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(${members})) order by n), '[]'::jsonb)
             from jsonb_array_elements(${column}) with ordinality as e(f, n)) as ${column}`;
}

/**
 * Every registered instance (filtered), ordered by node id then oldest registration first.
 * Evicted instances are not registered as far as any reader is concerned and are left out.
 * With `functions: 'summary'` each reasoner and skill carries only its summary (see
 * {@link FunctionDetail}). Discovery reads the fleet through this.
 */
export async function listNodeInstances(
  db: Executor,
  filter: InstanceFilter = {},
  functions: FunctionDetail = 'full',
): Promise<NodeInstanceRecord[]> {
  const query = selected(db, filter).orderBy([
    { column: 'node_id' },
    { column: 'registered_at' },
    { column: 'version' },
  ]);
  if (functions === 'full') query.select('*');
  else query.select([...STATE_COLUMNS, db.raw(summaries('reasoners')), db.raw(summaries('skills'))]);
  return ((await query) as InstanceRow[]).map(toRecord);
}

/** How many nodes (distinct node ids) have instances the filter selects. */
export async function countNodes(db: Executor, filter: InstanceFilter = {}): Promise<number> {
  const [row] = (await selected(db, filter).countDistinct({ count: 'node_id' })) as Array<{
    count: number | string;
  }>;
  return Number(row?.count ?? 0);
}

/** One page of the node ids the filter selects, in node id order. */
export async function listNodeIds(
  db: Executor,
  filter: InstanceFilter,
  page: { limit: number; offset: number },
): Promise<string[]> {
  const rows = (await selected(db, filter)
    .distinct('node_id')
    .orderBy('node_id')
    .limit(page.limit)
    .offset(page.offset)) as Array<{ node_id: string }>;
  return rows.map((row) => row.node_id);
}

/** One instance, or undefined (also when it is evicted). */
export async function findInstance(db: Executor, key: InstanceKey): Promise<NodeInstanceRecord | undefined> {
  const row = await db<InstanceRow>(TABLE).where(byKey(key)).whereNull('evicted_at').first();
  return row ? toRecord(row) : undefined;
}

/** Locks one instance row for the rest of the transaction, evicted or not (registration decides). */
export async function lockInstance(
  trx: Knex.Transaction,
  key: InstanceKey,
): Promise<NodeInstanceRecord | undefined> {
  const row = await trx<InstanceRow>(TABLE).where(byKey(key)).forUpdate().first();
  return row ? toRecord(row) : undefined;
}

/** Initial state of a newly registered instance. */
export interface InitialState {
  lifecycleStatus: LifecycleStatus;
  statusReason: StatusReason;
  adminState: AdminState;
  at: Date;
  leaseExpiresAt: Date;
}

/**
 * Inserts an instance, or, when a concurrent registration of the same id and version won the
 * race, overwrites it: both callers then hold a row that says what was just registered.
 */
export async function insertInstance(
  db: Executor,
  values: RegistrationValues,
  state: InitialState,
): Promise<NodeInstanceRecord> {
  const columns = {
    ...registrationColumns(values),
    lifecycle_status: state.lifecycleStatus,
    status_reason: state.statusReason,
    status_changed_at: state.at,
    admin_state: state.adminState,
    last_seen_at: state.at,
    heartbeat_interval_ms: null,
    lease_expires_at: state.leaseExpiresAt,
    last_registered_at: state.at,
    updated_at: state.at,
  };
  const [row] = await db<InstanceRow>(TABLE)
    .insert({ ...byKey(values), ...columns, registered_at: state.at } as never)
    .onConflict(['node_id', 'version'])
    .merge(columns as never)
    .returning('*');
  return toRecord(row as InstanceRow);
}

/** Deletes one instance row (registration clears an evicted one before inserting afresh). */
export async function deleteInstance(db: Executor, key: InstanceKey): Promise<void> {
  await db(TABLE).where(byKey(key)).delete();
}

/** Replaces the description of an existing instance and applies a state patch in one update. */
export async function replaceInstance(
  db: Executor,
  values: RegistrationValues,
  patch: InstancePatch,
  at: Date,
): Promise<NodeInstanceRecord> {
  const [row] = await db<InstanceRow>(TABLE)
    .where(byKey(values))
    .update({
      ...registrationColumns(values),
      ...patchColumns(patch),
      revision: db.raw('revision + 1'),
      last_registered_at: at,
      updated_at: at,
    } as never)
    .returning('*');
  return toRecord(row as InstanceRow);
}

/** A recorded sign of life: the instance as it now is, and whether this brought it back from eviction. */
export interface RecordedHeartbeat {
  record: NodeInstanceRecord;
  revived: boolean;
}

/**
 * One sign-of-life UPDATE of the live (or, with `evicted`, the evicted) instance the heartbeat
 * names. Every expression on the right of SET reads the row as it was before this statement, so
 * the gap since the previous heartbeat, the new observed interval
 * (lifecycle.nextObservedInterval in SQL) and the lease it earns (lifecycle.leaseTtlMs) are all
 * computed from one locked row in one statement.
 */
async function touchInstance(
  db: Executor,
  nodeId: string,
  version: string | undefined,
  at: Date,
  rhythm: RhythmSettings,
  evicted: boolean,
): Promise<NodeInstanceRecord | undefined> {
  const state = evicted ? 'evicted_at is not null' : 'evicted_at is null';
  const target =
    version !== undefined
      ? db.raw('node_id = ? and version = ?', [nodeId, version])
      : db.raw(
          `(node_id, version) = (select node_id, version from ${TABLE} where node_id = ? and ${state}
             order by registered_at desc, version desc limit 1)`,
          [nodeId],
        );
  const gap = `(extract(epoch from (:at::timestamptz - last_heartbeat)) * 1000)`;
  const observed = `(case when last_heartbeat is null or ${gap} <= 0 or ${gap} > :cap then heartbeat_interval_ms
      else greatest(${gap}, coalesce(heartbeat_interval_ms, :assumed) * power(0.5, ${gap} / :halfLife)) end)`;
  const result = await db.raw(
    `update ${TABLE}
        set last_heartbeat = :at, last_seen_at = :at, heartbeat_interval_ms = ${observed},
            evicted_at = null,
            -- A revived instance is probed at the monitor's next round.
            next_check_at = case when evicted_at is null then next_check_at else null end,
            -- Stopped and shut-down instances keep their released lease: start renews it.
            lease_expires_at = case when admin_state = 'active'
              then :at::timestamptz
                   + greatest(:floor, least(:cap, :factor * coalesce(${observed}, :assumed)))
                     * interval '1 millisecond'
              else lease_expires_at end
      where :target and ${state}
  returning *`,
    {
      at,
      floor: rhythm.heartbeatTtlMs,
      cap: rhythm.maxHeartbeatTtlMs,
      assumed: rhythm.assumedHeartbeatIntervalMs,
      factor: RHYTHM_FACTOR,
      halfLife: RHYTHM_HALF_LIFE_MS,
      target,
    },
  );
  const row = (result.rows as InstanceRow[])[0];
  return row ? toRecord(row) : undefined;
}

/**
 * Records a sign of life: last heartbeat, last seen, the observed heartbeat interval and a lease
 * renewed for what that interval earns, in one UPDATE. With no version it applies to the node's
 * most recently registered live instance. Because the common case is a single statement, a sweep
 * running at the same moment on any replica either sees the renewed lease or ran entirely
 * before it, so a live agent is never left marked offline by a race.
 *
 * Only when no live instance matches does a second statement look among evicted ones (the most
 * recently registered, or the named version) and revive it: `evicted_at` is cleared, and its
 * registration is all still there. A revival that a concurrent heartbeat of the same instance
 * won finds nothing evicted any more; the live statement then applies, so neither heartbeat is
 * answered 404.
 */
export async function recordHeartbeat(
  db: Executor,
  nodeId: string,
  version: string | undefined,
  at: Date,
  rhythm: RhythmSettings,
): Promise<RecordedHeartbeat | undefined> {
  const live = await touchInstance(db, nodeId, version, at, rhythm, false);
  if (live) return { record: live, revived: false };
  const revived = await touchInstance(db, nodeId, version, at, rhythm, true);
  if (revived) return { record: revived, revived: true };
  const raced = await touchInstance(db, nodeId, version, at, rhythm, false);
  return raced ? { record: raced, revived: false } : undefined;
}

/**
 * Applies a patch only if the instance still has the revision the caller decided on, bumping the
 * revision. Undefined means someone else changed it first: read again and decide again.
 */
export async function updateInstanceIfRevision(
  db: Executor,
  key: InstanceKey,
  revision: number,
  patch: InstancePatch,
  at: Date,
): Promise<NodeInstanceRecord | undefined> {
  const rows = (await db<InstanceRow>(TABLE)
    .where({ ...byKey(key), revision })
    .update({ ...patchColumns(patch), revision: revision + 1, updated_at: at } as never)
    .returning('*')) as InstanceRow[];
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * How the sweeps below pick their rows: locked in the order of their key, whatever plan reads
 * them, so sweeps that meet on the same instances wait for each other instead of deadlocking
 * (PostgreSQL would break that only after `deadlock_timeout`, failing one of them). A row that
 * changed while a sweep waited for it is tested again against the sweep's conditions.
 */
const SWEPT_IN_KEY_ORDER = 'order by node_id, version for update';

/** One instance moved by a sweep, with the status it had before. */
export interface SweptInstance {
  record: NodeInstanceRecord;
  oldStatus: LifecycleStatus;
}

/**
 * Marks offline every instance whose lease ran out (or was released) and that is not offline
 * yet. The conditional UPDATE ... RETURNING makes this safe on every replica at once: the row
 * lock serialises them and only the replica whose update matched reports the transition. The
 * sweeps lock their rows in key order (SWEPT_IN_KEY_ORDER), so two of them over some of the same
 * instances (this one on one replica, degradeStuckStarting on another) wait rather than deadlock.
 */
export async function expireLeases(db: Executor, now: Date): Promise<SweptInstance[]> {
  const result = await db.raw(
    `update ${TABLE} as t
        set lifecycle_status = 'offline', status_reason = 'heartbeat_expired', status_changed_at = ?,
            revision = t.revision + 1, updated_at = ?
       from (select node_id, version, lifecycle_status
               from ${TABLE}
              where lifecycle_status <> 'offline' and (lease_expires_at is null or lease_expires_at < ?)
              ${SWEPT_IN_KEY_ORDER}) as old
      where t.node_id = old.node_id and t.version = old.version
        and t.lifecycle_status <> 'offline' and (t.lease_expires_at is null or t.lease_expires_at < ?)
  returning t.*, old.lifecycle_status as old_status`,
    [now, now, now, now],
  );
  return (result.rows as Array<InstanceRow & { old_status: LifecycleStatus }>).map((row) => ({
    record: toRecord(row),
    oldStatus: row.old_status,
  }));
}

/**
 * Evicts offline instances not seen since `seenBefore` (the hard-evict rule) and returns their
 * keys. The row stays, marked `evicted_at`, so a later heartbeat can revive its registration
 * (see {@link purgeEvicted}). Conditional like {@link expireLeases}: on several replicas each
 * eviction is reported once.
 */
export async function evictOffline(db: Executor, seenBefore: Date, now: Date): Promise<InstanceKey[]> {
  const result = await db.raw(
    `update ${TABLE} as t set evicted_at = ?, revision = t.revision + 1, updated_at = ?
       from (select node_id, version from ${TABLE}
              where lifecycle_status = 'offline' and last_seen_at < ? and evicted_at is null
              ${SWEPT_IN_KEY_ORDER}) as due
      where t.node_id = due.node_id and t.version = due.version
  returning t.node_id, t.version`,
    [now, now, seenBefore],
  );
  return (result.rows as Array<{ node_id: string; version: string }>).map((row) => ({
    nodeId: row.node_id,
    version: row.version,
  }));
}

/** Deletes instances evicted at or before `evictedBefore` (the end of their retention). */
export async function purgeEvicted(db: Executor, evictedBefore: Date): Promise<InstanceKey[]> {
  const rows = (await db(TABLE)
    .where('evicted_at', '<=', evictedBefore)
    .delete()
    .returning(['node_id', 'version'])) as Array<{ node_id: string; version: string }>;
  return rows.map((row) => ({ nodeId: row.node_id, version: row.version }));
}

/**
 * Moves instances stuck in `starting` since before `changedBefore` to `degraded` (reason
 * transition_timeout), conditionally like {@link expireLeases}.
 */
export async function degradeStuckStarting(
  db: Executor,
  changedBefore: Date,
  now: Date,
): Promise<NodeInstanceRecord[]> {
  const result = await db.raw(
    `update ${TABLE} as t
        set lifecycle_status = 'degraded', status_reason = 'transition_timeout', status_changed_at = ?,
            revision = t.revision + 1, updated_at = ?
       from (select node_id, version from ${TABLE}
              where lifecycle_status = 'starting' and status_changed_at < ?
              ${SWEPT_IN_KEY_ORDER}) as stuck
      where t.node_id = stuck.node_id and t.version = stuck.version
  returning t.*`,
    [now, now, changedBefore],
  );
  return (result.rows as InstanceRow[]).map(toRecord);
}

/**
 * Claims the instances due for a health probe and pushes their next check to `nextCheckAt`, so
 * that replicas sharing the database split the probing instead of each probing everyone.
 * Offline and operator-stopped instances are not probed.
 */
export async function claimHealthChecks(
  db: Executor,
  now: Date,
  nextCheckAt: Date,
  limit: number,
): Promise<NodeInstanceRecord[]> {
  const result = await db.raw(
    `update ${TABLE} as t set next_check_at = ?
       from (select node_id, version from ${TABLE}
              where lifecycle_status <> 'offline' and admin_state = 'active'
                and (next_check_at is null or next_check_at <= ?)
              order by next_check_at nulls first
              limit ?
              for update skip locked) as due
      where t.node_id = due.node_id and t.version = due.version
  returning t.*`,
    [nextCheckAt, now, limit],
  );
  return (result.rows as InstanceRow[]).map(toRecord);
}
