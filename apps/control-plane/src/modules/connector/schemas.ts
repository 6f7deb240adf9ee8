import { ProblemError } from '@switchyard/shared';
import { z } from 'zod';
import { pageCursorQuery, pageLimitQuery } from '../../platform/http/paging.ts';
import { MAX_TRAFFIC_WEIGHT } from '../nodes/index.ts';

/*
 * What the connector reads from requests, and the records it answers with. Node ids carry no dots
 * (nodes/schemas.ts), so in an id the first dot ends the node id: `<node>` names a node,
 * `<node>.<name>` a reasoner and `<node>.skill:<name>` a skill, exactly as execution targets do.
 */

const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$/;
const TARGET =
  /^([A-Za-z0-9][A-Za-z0-9_-]{0,199})\.(?:(skill|reasoner):)?([A-Za-z0-9_][A-Za-z0-9_-]{0,199})$/;
/** Versions are free text of at most 100 characters (registration's limit). */
export const MAX_VERSION_LENGTH = 100;

export type FunctionType = 'reasoner' | 'skill';

/** A function of a node, by its execution target. */
export interface FunctionRef {
  nodeId: string;
  type: FunctionType;
  name: string;
  /** The canonical target: `<node>.<name>` or `<node>.skill:<name>`. */
  id: string;
}

/** What an `:id` of a versions path names: a whole node, or one function of it. */
export type VersionScope = { nodeId: string; fn: FunctionRef | null };

export function functionId(nodeId: string, type: FunctionType, name: string): string {
  return type === 'skill' ? `${nodeId}.skill:${name}` : `${nodeId}.${name}`;
}

/**
 * 404 for an id or version that could never exist, as the node and execution paths answer; the
 * detail says what one looks like, and no query is made.
 */
function impossible(what: string, value: string, shape: string): ProblemError {
  const shown = value.length > 100 ? `${value.slice(0, 100)}…` : value;
  return new ProblemError('not_found', `No ${what} "${shown}" can exist: ${shape}.`);
}

const FUNCTION_SHAPE = 'use <node_id>.<reasoner_id> or <node_id>.skill:<skill_id>';

/** The function a target names, or undefined when the text is not a target. */
function matchFunctionId(text: string): FunctionRef | undefined {
  const match = TARGET.exec(text);
  if (!match) return undefined;
  const [, nodeId = '', kind, name = ''] = match;
  const type: FunctionType = kind === 'skill' ? 'skill' : 'reasoner';
  return { nodeId, type, name, id: functionId(nodeId, type, name) };
}

/** A reasoner id (`:id` of /reasoners/:id): a function target, else 404. */
export function parseFunctionId(text: string): FunctionRef {
  const fn = matchFunctionId(text);
  if (!fn) throw impossible('reasoner', text, FUNCTION_SHAPE);
  return fn;
}

/** The `:id` of a versions path: a bare node id or a function target, else 404. */
export function parseVersionScope(text: string): VersionScope {
  if (NODE_ID.test(text)) return { nodeId: text, fn: null };
  if (!TARGET.test(text)) {
    throw impossible(
      'node or reasoner',
      text,
      'use a node id, <node_id>.<reasoner_id> or <node_id>.skill:<skill_id>',
    );
  }
  const fn = parseFunctionId(text);
  return { nodeId: fn.nodeId, fn };
}

/** A group id: a node id, else 404. */
export function parseGroupId(text: string): string {
  if (!NODE_ID.test(text)) {
    throw impossible('group', text, 'a group id is a node id: letters, digits, "_" and "-", at most 200');
  }
  return text;
}

/** The `:version` of a path: any text of at most 100 characters, as registration takes it; longer is 404. */
export function parseVersion(text: string): string {
  if (text.length > MAX_VERSION_LENGTH) {
    throw impossible('version', text, `versions are at most ${MAX_VERSION_LENGTH} characters`);
  }
  return text;
}

/** Largest weight body read: `{"weight":10000}` with generous whitespace. */
export const WEIGHT_BODY_LIMIT = 1024;

/** `PUT …/weight`: exactly `{ weight }`, a whole number from 0 to MAX_TRAFFIC_WEIGHT. */
export const WeightBodySchema = z
  .strictObject({
    weight: z
      .int({ error: `must be a whole number from 0 to ${MAX_TRAFFIC_WEIGHT}` })
      .min(0, { error: `must be a whole number from 0 to ${MAX_TRAFFIC_WEIGHT}` })
      .max(MAX_TRAFFIC_WEIGHT, { error: `must be a whole number from 0 to ${MAX_TRAFFIC_WEIGHT}` })
      .meta({
        description: `The new traffic weight, 0 to ${MAX_TRAFFIC_WEIGHT}. 0 sends the version no new executions.`,
        example: 10,
      }),
  })
  .meta({ id: 'ConnectorWeightRequest' });

// ---- the paged lists ----

export const REASONER_LIST_DEFAULT_LIMIT = 500;
export const REASONER_LIST_MAX_LIMIT = 1000;
export const GROUP_LIST_DEFAULT_LIMIT = 100;
export const GROUP_LIST_MAX_LIMIT = 500;

/** Where a page of a connector list ends: the last function listed, or the last group (node id). */
export type FunctionCursor = { after: FunctionRef };
export type GroupCursor = { after: string };

/*
 * A cursor is the base64url of the last entry's id (a function target, or a node id): opaque to
 * clients, and checkable without a lookup. Node ids carry no dots and targets always one, so a
 * cursor of one list is never taken by the other.
 */
const encodeId = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

function decodeId(value: string): string | undefined {
  // The longest id is a target of 200 + 7 + 200 characters: 544 in base64url.
  if (!/^[A-Za-z0-9_-]{1,600}$/.test(value)) return undefined;
  return Buffer.from(value, 'base64url').toString('utf8');
}

export function encodeFunctionCursor(fn: FunctionRef): string {
  return encodeId(fn.id);
}

export function encodeGroupCursor(nodeId: string): string {
  return encodeId(nodeId);
}

function decodeFunctionCursor(value: string): FunctionCursor | undefined {
  const id = decodeId(value);
  const fn = id === undefined ? undefined : matchFunctionId(id);
  return fn && fn.id === id ? { after: fn } : undefined;
}

function decodeGroupCursor(value: string): GroupCursor | undefined {
  const id = decodeId(value);
  return id !== undefined && NODE_ID.test(id) ? { after: id } : undefined;
}

/** `GET /connector/reasoners`: one page of functions. */
export const ReasonerListQuerySchema = z.object({
  limit: pageLimitQuery({
    max: REASONER_LIST_MAX_LIMIT,
    fallback: REASONER_LIST_DEFAULT_LIMIT,
    items: 'functions',
  }),
  cursor: pageCursorQuery(decodeFunctionCursor),
});
export type ReasonerListQuery = z.output<typeof ReasonerListQuerySchema>;

/** `GET /connector/groups`: one page of groups. */
export const GroupListQuerySchema = z.object({
  limit: pageLimitQuery({ max: GROUP_LIST_MAX_LIMIT, fallback: GROUP_LIST_DEFAULT_LIMIT, items: 'groups' }),
  cursor: pageCursorQuery(decodeGroupCursor),
});
export type GroupListQuery = z.output<typeof GroupListQuerySchema>;
