/*
 * The stream payload types the client declares, held to the control plane's own declarations of
 * what it writes on each stream. The payload comparisons are compile-time assertions: `npm run
 * typecheck` (tsc over test/) fails when the server's payloads change and the client's do not
 * follow. The event names are compared at run time with the server's lists of streamed events.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  EXECUTION_EVENT_NAMES,
  type ExecutionEventPayloads as ServerExecutionPayloads,
} from '../../../apps/control-plane/src/modules/executions/events.ts';
import type { MemoryChange } from '../../../apps/control-plane/src/modules/memory/events.ts';
import { STREAMED_NODE_EVENTS } from '../../../apps/control-plane/src/modules/nodes/event-frames.ts';
import type { NodeEvent } from '../../../apps/control-plane/src/modules/nodes/events.ts';
import type { ExecutionEventPayloads, MemoryEventPayloads, NodeEventPayloads } from '../src/index.ts';

/** A type's members as one object type, so an intersection and an interface compare equal. */
type Flat<T> = { [K in keyof T]: T[K] };
/** A server payload as the frame carries it: `type` repeats the event name. */
type Framed<Name extends string, Payload> = Flat<{ type: Name } & Payload>;

/** The event names the client's types declare, as values (the compiler holds them to the types). */
const CLIENT_NODE_EVENTS: Record<keyof NodeEventPayloads, true> = {
  'node.registered': true,
  'node.status_changed': true,
  'node.removed': true,
};
const CLIENT_EXECUTION_EVENTS: Record<keyof ExecutionEventPayloads, true> = {
  'execution.started': true,
  'execution.waiting': true,
  'execution.approval_resolved': true,
  'execution.resumed': true,
  'execution.completed': true,
};

describe('stream payload types', () => {
  it('name the execution events the server streams, each with its payload', () => {
    expectTypeOf<keyof ExecutionEventPayloads>().toEqualTypeOf<keyof ServerExecutionPayloads>();
    expect(Object.keys(CLIENT_EXECUTION_EVENTS).sort()).toEqual([...EXECUTION_EVENT_NAMES].sort());
    expectTypeOf<Flat<ExecutionEventPayloads['execution.started']>>().toEqualTypeOf<
      Framed<'execution.started', ServerExecutionPayloads['execution.started']>
    >();
    expectTypeOf<Flat<ExecutionEventPayloads['execution.completed']>>().toEqualTypeOf<
      Framed<'execution.completed', ServerExecutionPayloads['execution.completed']>
    >();
    expectTypeOf<Flat<ExecutionEventPayloads['execution.waiting']>>().toEqualTypeOf<
      Framed<'execution.waiting', ServerExecutionPayloads['execution.waiting']>
    >();
    expectTypeOf<Flat<ExecutionEventPayloads['execution.resumed']>>().toEqualTypeOf<
      Framed<'execution.resumed', ServerExecutionPayloads['execution.resumed']>
    >();
    expectTypeOf<Flat<ExecutionEventPayloads['execution.approval_resolved']>>().toEqualTypeOf<
      Framed<'execution.approval_resolved', ServerExecutionPayloads['execution.approval_resolved']>
    >();
  });

  it('name the node events the server streams, each with its payload', () => {
    expect(Object.keys(CLIENT_NODE_EVENTS).sort()).toEqual([...STREAMED_NODE_EVENTS].sort());
    expectTypeOf<Flat<NodeEventPayloads['node.registered']>>().toEqualTypeOf<
      Flat<Extract<NodeEvent, { type: 'node.registered' }>>
    >();
    expectTypeOf<Flat<NodeEventPayloads['node.status_changed']>>().toEqualTypeOf<
      Flat<Extract<NodeEvent, { type: 'node.status_changed' }>>
    >();
    expectTypeOf<Flat<NodeEventPayloads['node.removed']>>().toEqualTypeOf<
      Flat<Extract<NodeEvent, { type: 'node.removed' }>>
    >();
  });

  it('give memory changes the payload the server streams', () => {
    expectTypeOf<Flat<MemoryEventPayloads['memory_change']>>().toEqualTypeOf<
      Framed<'memory_change', MemoryChange>
    >();
  });
});
