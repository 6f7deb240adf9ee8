import { ENVELOPE_BYTES, fitJsonEntries, fitWithin } from '../../platform/http/bounded-page.ts';
import type { ResponseBody } from '../../platform/openapi/response-body.ts';
import {
  type AgentCapability,
  type CapabilityListing,
  type FunctionCapability,
  paginationOf,
} from './catalog.ts';
import type { CompactFunctionSchema } from './responses.ts';
import type { DiscoveryFormat } from './schemas.ts';

/** A discovery answer ready to send. */
export interface RenderedDiscovery {
  contentType: string;
  /** Encoded once: the cache measures it in bytes, and a cache hit is sent without re-encoding. */
  body: Buffer;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const XML_TYPE = 'application/xml; charset=utf-8';

/**
 * The most bytes one answer holds (see platform/http/bounded-page.ts). With every include_* flag
 * an instance can render to about 2 MB (a registration body is at most 1 MiB, and targets and
 * XML escaping add to it), so 500 of them could make a gigabyte; a page ends early instead, and
 * `has_more` and `next_offset` say where to continue.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The listing's pagination once `shown` of its page's entries made it into the answer. */
function paginationFor(listing: CapabilityListing, shown: number) {
  const { limit, offset } = listing.pagination;
  return paginationOf(limit, offset, shown, listing.total_agents);
}

/** A JSON member list to splice into an object: `"key":value,...` without braces. */
function members(value: object): string {
  return JSON.stringify(value).slice(1, -1);
}

function jsonListing(listing: CapabilityListing, budget: number): string {
  const { shown, pieces } = fitJsonEntries(listing.capabilities, (entry) => entry, budget);
  // Same members in the same order as JSON.stringify(listing), entries rendered once.
  const head = members({ ...listing, pagination: paginationFor(listing, shown), capabilities: undefined });
  return `{${head},"capabilities":[${pieces.join(',')}]}`;
}

/** The compact format: flat function lists with just id, agent, target and tags. */
function compactListing(listing: CapabilityListing, budget: number): string {
  const flatten = (agent: AgentCapability, functions: FunctionCapability[]) =>
    functions.map((fn) =>
      JSON.stringify({
        id: fn.id,
        agent_id: agent.agent_id,
        target: fn.invocation_target,
        tags: fn.tags,
      } satisfies ResponseBody<typeof CompactFunctionSchema>),
    );
  const { shown, pieces } = fitWithin(
    listing.capabilities,
    (agent) => ({ reasoners: flatten(agent, agent.reasoners), skills: flatten(agent, agent.skills) }),
    ({ reasoners, skills }) =>
      [...reasoners, ...skills].reduce((sum, p) => sum + Buffer.byteLength(p) + 1, 0),
    budget,
  );
  const reasoners = pieces.flatMap((piece) => piece.reasoners).join(',');
  const skills = pieces.flatMap((piece) => piece.skills).join(',');
  return `{${members({ discovered_at: listing.discovered_at })},"reasoners":[${reasoners}],"skills":[${skills}],${members({ pagination: paginationFor(listing, shown) })}}`;
}

// XML 1.0 cannot carry most control characters or unpaired surrogates at all, not even escaped;
// registrations are JSON, which can, so they become U+FFFD instead of breaking the document.
const NOT_XML =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the characters XML forbids is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Escapes character data. */
export function xmlText(value: string): string {
  return value.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escapes an attribute value; tabs and line breaks become references so parsers keep them. */
export function xmlAttribute(value: string): string {
  return xmlText(value)
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;');
}

function attributes(pairs: Record<string, string | number | boolean | null>): string {
  return Object.entries(pairs)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => ` ${name}="${xmlAttribute(String(value))}"`)
    .join('');
}

function functionElement(kind: 'reasoner' | 'skill', fn: FunctionCapability): string[] {
  const lines = [`      <${kind}${attributes({ id: fn.id, target: fn.invocation_target })}>`];
  if (fn.description !== undefined)
    lines.push(`        <description>${xmlText(fn.description)}</description>`);
  if (fn.tags.length === 0) lines.push('        <tags/>');
  else {
    lines.push('        <tags>');
    for (const tag of fn.tags) lines.push(`          <tag>${xmlText(tag)}</tag>`);
    lines.push('        </tags>');
  }
  // Schemas and examples are JSON documents; XML carries them as JSON text.
  if (fn.input_schema !== undefined) {
    lines.push(`        <input_schema>${xmlText(JSON.stringify(fn.input_schema))}</input_schema>`);
  }
  if (fn.output_schema !== undefined) {
    lines.push(`        <output_schema>${xmlText(JSON.stringify(fn.output_schema))}</output_schema>`);
  }
  if (fn.examples !== undefined)
    lines.push(`        <examples>${xmlText(JSON.stringify(fn.examples))}</examples>`);
  lines.push(`      </${kind}>`);
  return lines;
}

function agentElement(agent: AgentCapability): string {
  const lines = [
    `    <agent${attributes({
      id: agent.agent_id,
      base_url: agent.base_url,
      version: agent.version,
      health_status: agent.health_status,
      deployment_type: agent.deployment_type,
      last_heartbeat: agent.last_heartbeat,
    })}>`,
  ];
  for (const reasoner of agent.reasoners) lines.push(...functionElement('reasoner', reasoner));
  for (const skill of agent.skills) lines.push(...functionElement('skill', skill));
  lines.push('    </agent>');
  return lines.join('\n');
}

/** The xml format: `<discovery>` with a `<summary>` and `<capabilities>` of `<agent>` elements. */
function xmlListing(listing: CapabilityListing, budget: number): string {
  const { shown, pieces } = fitWithin(
    listing.capabilities,
    agentElement,
    (piece) => Buffer.byteLength(piece) + 1,
    budget,
  );
  const pagination = paginationFor(listing, shown);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<discovery${attributes({ discovered_at: listing.discovered_at })}>`,
    `  <summary${attributes({
      total_agents: listing.total_agents,
      total_reasoners: listing.total_reasoners,
      total_skills: listing.total_skills,
      limit: pagination.limit,
      offset: pagination.offset,
      has_more: pagination.has_more,
      next_offset: pagination.next_offset,
    })}/>`,
    '  <capabilities>',
    ...pieces,
    '  </capabilities>',
    '</discovery>',
    '',
  ].join('\n');
}

/**
 * Renders a listing in the requested format, within `maxBytes`: the page ends before the entry
 * that would pass it (see MAX_ANSWER_BYTES).
 */
export function renderListing(
  listing: CapabilityListing,
  format: DiscoveryFormat,
  maxBytes = MAX_ANSWER_BYTES,
): RenderedDiscovery {
  const budget = Math.max(0, maxBytes - ENVELOPE_BYTES);
  switch (format) {
    case 'json':
      return { contentType: JSON_TYPE, body: Buffer.from(jsonListing(listing, budget)) };
    case 'compact':
      return { contentType: JSON_TYPE, body: Buffer.from(compactListing(listing, budget)) };
    case 'xml':
      return { contentType: XML_TYPE, body: Buffer.from(xmlListing(listing, budget)) };
  }
}
