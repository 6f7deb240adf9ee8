import { describe, expect, it } from 'vitest';
import {
  leaseTtlMs,
  moveAfterClaim,
  moveAfterProbe,
  nextObservedInterval,
  stateAtRegistration,
} from '../src/modules/nodes/lifecycle.ts';
import { chooseWeighted } from '../src/modules/nodes/routing.ts';
import type { NodeInstanceRecord } from '../src/modules/nodes/schemas.ts';

const RULES = { consecutiveFailures: 3, recoveryDebounceMs: 60_000 };

function instance(overrides: Partial<NodeInstanceRecord> = {}): NodeInstanceRecord {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    nodeId: 'n',
    version: '1.0.0',
    baseUrl: 'http://127.0.0.1:1',
    publicUrl: null,
    deploymentType: 'long_running',
    tags: [],
    proposedTags: [],
    acceptsWebhook: 'false',
    metadata: {},
    reasoners: [],
    skills: [],
    lifecycleStatus: 'ready',
    trafficWeight: 100,
    lastHeartbeat: at,
    registeredAt: at,
    updatedAt: at,
    statusReason: 'agent_reported',
    statusChangedAt: at,
    reportedStatus: 'ready',
    adminState: 'active',
    lastSeenAt: at,
    observedHeartbeatIntervalMs: null,
    leaseExpiresAt: at,
    health: {
      consecutiveFailures: 0,
      healthySince: null,
      lastCheckAt: null,
      lastCheckOk: null,
      lastCheckStatusCode: null,
      lastCheckError: null,
      lastCheckDurationMs: null,
    },
    customHealth: null,
    revision: 0,
    evictedAt: null,
    ...overrides,
  };
}

describe('stateAtRegistration', () => {
  it('starts a new or replaced instance in starting', () => {
    expect(stateAtRegistration(undefined)).toEqual({
      status: 'starting',
      reason: 'registered',
      adminState: 'active',
    });
    expect(stateAtRegistration(instance({ adminState: 'shutdown', lifecycleStatus: 'offline' })).status).toBe(
      'starting',
    );
  });

  it('keeps an operator stop across re-registration', () => {
    expect(stateAtRegistration(instance({ adminState: 'stopped', lifecycleStatus: 'offline' }))).toEqual({
      status: 'offline',
      reason: 'stopped',
      adminState: 'stopped',
    });
  });
});

describe('moveAfterClaim', () => {
  it('readies a starting instance that says ready', () => {
    expect(moveAfterClaim(instance({ lifecycleStatus: 'starting' }), 'ready', 3)).toEqual({
      status: 'ready',
      reason: 'agent_reported',
    });
  });

  it('brings an offline instance back, naming the resumed heartbeat', () => {
    expect(moveAfterClaim(instance({ lifecycleStatus: 'offline' }), 'ready', 3)).toEqual({
      status: 'ready',
      reason: 'heartbeat_resumed',
    });
  });

  it('never overrides the operator', () => {
    for (const adminState of ['stopped', 'shutdown'] as const) {
      expect(moveAfterClaim(instance({ adminState, lifecycleStatus: 'offline' }), 'ready', 3)).toBeNull();
    }
  });

  it('never overrides the health monitor', () => {
    const degraded = instance({ lifecycleStatus: 'degraded', statusReason: 'health_check_failed' });
    expect(moveAfterClaim(degraded, 'ready', 3)).toBeNull();
    const failing = instance({
      lifecycleStatus: 'starting',
      health: { ...instance().health, consecutiveFailures: 3 },
    });
    expect(moveAfterClaim(failing, 'ready', 3)).toEqual({
      status: 'degraded',
      reason: 'health_check_failed',
    });
  });

  it('does not flap an instance the max transition time degraded back to starting', () => {
    expect(
      moveAfterClaim(
        instance({ lifecycleStatus: 'degraded', statusReason: 'transition_timeout' }),
        'starting',
        3,
      ),
    ).toBeNull();
  });

  it('leaves an unchanged status alone', () => {
    expect(moveAfterClaim(instance(), 'ready', 3)).toBeNull();
    expect(moveAfterClaim(instance({ lifecycleStatus: 'starting' }), 'starting', 3)).toBeNull();
  });

  it('accepts an agent saying it is degraded or going offline', () => {
    expect(moveAfterClaim(instance(), 'degraded', 3)).toEqual({
      status: 'degraded',
      reason: 'agent_reported',
    });
    expect(moveAfterClaim(instance(), 'offline', 3)).toEqual({ status: 'offline', reason: 'agent_reported' });
  });
});

describe('moveAfterProbe', () => {
  const now = Date.parse('2026-01-01T00:10:00.000Z');

  it('degrades a ready instance at the failure threshold, not before', () => {
    const two = instance({ health: { ...instance().health, consecutiveFailures: 1 } });
    expect(moveAfterProbe(two, false, now, RULES)).toEqual({
      move: null,
      consecutiveFailures: 2,
      healthySince: null,
    });
    const three = instance({ health: { ...instance().health, consecutiveFailures: 2 } });
    expect(moveAfterProbe(three, false, now, RULES).move).toEqual({
      status: 'degraded',
      reason: 'health_check_failed',
    });
  });

  it('recovers only after the debounce', () => {
    const since = (ms: number) =>
      instance({
        lifecycleStatus: 'degraded',
        statusReason: 'health_check_failed',
        health: { ...instance().health, healthySince: new Date(now - ms).toISOString() },
      });
    expect(moveAfterProbe(since(59_999), true, now, RULES).move).toBeNull();
    expect(moveAfterProbe(since(60_000), true, now, RULES).move).toEqual({
      status: 'ready',
      reason: 'health_recovered',
    });
  });

  it('does not recover an instance the agent itself reported degraded', () => {
    const selfReported = instance({
      lifecycleStatus: 'degraded',
      statusReason: 'agent_reported',
      health: { ...instance().health, healthySince: new Date(now - 600_000).toISOString() },
    });
    expect(moveAfterProbe(selfReported, true, now, RULES).move).toBeNull();
  });

  it('readies an instance an operator started on its first healthy probe', () => {
    const started = instance({ lifecycleStatus: 'starting', statusReason: 'started' });
    expect(moveAfterProbe(started, true, now, RULES).move).toEqual({
      status: 'ready',
      reason: 'health_check_passed',
    });
    const registered = instance({ lifecycleStatus: 'starting', statusReason: 'registered' });
    expect(moveAfterProbe(registered, true, now, RULES).move).toBeNull();
  });
});

describe('chooseWeighted (routing by traffic_weight)', () => {
  const v1 = instance({ version: '1', trafficWeight: 90 });
  const v2 = instance({ version: '2', trafficWeight: 10 });

  it('splits by weight', () => {
    expect(chooseWeighted([v1, v2], () => 0)?.version).toBe('1');
    expect(chooseWeighted([v1, v2], () => 0.899)?.version).toBe('1');
    expect(chooseWeighted([v1, v2], () => 0.9)?.version).toBe('2');
    expect(chooseWeighted([v1, v2], () => 0.999)?.version).toBe('2');
  });

  it('routes only to ready, active instances with a positive weight', () => {
    expect(chooseWeighted([instance({ lifecycleStatus: 'degraded' }), v2], () => 0)?.version).toBe('2');
    expect(chooseWeighted([instance({ adminState: 'stopped' })], () => 0)).toBeUndefined();
    expect(chooseWeighted([instance({ trafficWeight: 0 })], () => 0)).toBeUndefined();
    expect(chooseWeighted([], () => 0)).toBeUndefined();
  });
});

describe('the rhythm rule (leaseTtlMs, nextObservedInterval)', () => {
  const settings = { heartbeatTtlMs: 15_000, maxHeartbeatTtlMs: 120_000, assumedHeartbeatIntervalMs: 30_000 };

  it('leases 3 intervals, never below the TTL nor above the cap, assuming 30 s before any is observed', () => {
    expect(leaseTtlMs(null, settings)).toBe(90_000);
    expect(leaseTtlMs(30_000, settings)).toBe(90_000);
    expect(leaseTtlMs(2_000, settings)).toBe(15_000);
    expect(leaseTtlMs(100_000, settings)).toBe(120_000);
    expect(leaseTtlMs(null, { ...settings, assumedHeartbeatIntervalMs: 0 })).toBe(15_000);
    // A cap below the TTL never undercuts the heartbeat TTL, which is the floor.
    expect(leaseTtlMs(30_000, { ...settings, maxHeartbeatTtlMs: 5_000 })).toBe(15_000);
  });

  it('keeps the longest recent gap, so an extra report between two heartbeats does not shorten the lease', () => {
    const after30 = nextObservedInterval(null, 30_000, settings)!;
    expect(after30).toBe(30_000);
    const afterBurst = nextObservedInterval(after30, 200, settings)!;
    expect(afterBurst).toBeGreaterThan(29_500);
    expect(leaseTtlMs(afterBurst, settings)).toBeGreaterThan(88_000);
    // Even 40 s of reports every 2 s after a 30 s gap leave a lease longer than the next 30 s gap.
    let interval: number | null = after30;
    for (let i = 0; i < 20; i++) interval = nextObservedInterval(interval, 2_000, settings);
    expect(leaseTtlMs(interval, settings)).toBeGreaterThan(30_000);
  });

  it('halves a long interval over 30 s of faster heartbeats', () => {
    let interval: number | null = 30_000;
    for (let i = 0; i < 6; i++) interval = nextObservedInterval(interval, 5_000, settings);
    expect(interval).toBeCloseTo(15_000, 6);
  });

  it('ignores no gap, clock skew and gaps longer than the cap', () => {
    expect(nextObservedInterval(null, null, settings)).toBeNull();
    expect(nextObservedInterval(40_000, null, settings)).toBe(40_000);
    expect(nextObservedInterval(40_000, -5, settings)).toBe(40_000);
    expect(nextObservedInterval(40_000, 0, settings)).toBe(40_000);
    expect(nextObservedInterval(40_000, 120_001, settings)).toBe(40_000);
    expect(nextObservedInterval(40_000, 120_000, settings)).toBe(120_000);
  });
});
