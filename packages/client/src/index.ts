export { createSwitchyardClient, type SwitchyardClient, type SwitchyardClientOptions } from './client.ts';
export {
  ApiProblem,
  type DataOf,
  type FetchResult,
  type Problem,
  problemMessage,
  unwrap,
} from './problem.ts';
export type { components, operations, paths } from './schema.d.ts';
export type * from './streams/event-types.ts';
export type { ReconnectDelayOptions } from './streams/reconnect-delay.ts';
export {
  type EventStreamHandle,
  type ReconnectInfo,
  type StreamEvent,
  type StreamEventsOptions,
  type StreamPath,
  type StreamPayloads,
  type StreamQuery,
  type StreamState,
  streamEvents,
} from './streams/stream-events.ts';
