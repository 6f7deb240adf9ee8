import { ProblemError } from '@switchyard/shared';

/** What a target names: one function of one node. */
export interface Target {
  nodeId: string;
  functionName: string;
  type: 'reasoner' | 'skill';
  /** The canonical spelling: `<node>.<fn>` or `<node>.skill:<id>`. */
  text: string;
}

// Node ids carry no dots (nodes/schemas.ts), so the first dot ends the node id. Function ids are
// letters, digits, `_` and `-`; router prefixes arrive already joined as `<prefix>_<name>`.
const TARGET =
  /^([A-Za-z0-9][A-Za-z0-9_-]{0,199})\.(?:(skill|reasoner):)?([A-Za-z0-9_][A-Za-z0-9_-]{0,199})$/;

/**
 * Parses `<agent>.<function>` (a reasoner), `<agent>.skill:<id>` (a skill) and, for symmetry,
 * `<agent>.reasoner:<id>`. Anything else is refused with 400 naming the accepted shapes.
 */
export function parseTarget(text: string): Target {
  const match = TARGET.exec(text);
  if (!match) {
    throw new ProblemError(
      'invalid_request',
      `"${text.slice(0, 200)}" is not a target: use <node_id>.<reasoner_id> or <node_id>.skill:<skill_id>`,
      {
        extensions: {
          errors: [{ field: 'target', message: 'use <node_id>.<reasoner_id> or <node_id>.skill:<skill_id>' }],
        },
      },
    );
  }
  const [, nodeId = '', kind, functionName = ''] = match;
  const type = kind === 'skill' ? 'skill' : 'reasoner';
  return {
    nodeId,
    functionName,
    type,
    text: type === 'skill' ? `${nodeId}.skill:${functionName}` : `${nodeId}.${functionName}`,
  };
}
