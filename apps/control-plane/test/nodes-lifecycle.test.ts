import { describe, expect, it } from 'vitest';
import { moveAfterClaim, moveAfterProbe, stateAtRegistration } from '../src/modules/nodes/lifecycle.ts';
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
    acceptsWebhook: false,
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
