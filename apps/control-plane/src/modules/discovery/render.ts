import type { AgentCapability, CapabilityListing, FunctionCapability } from './catalog.ts';
import type { DiscoveryFormat } from './schemas.ts';

/** A discovery answer ready to send. */
export interface RenderedDiscovery {
  contentType: string;
  /** Encoded once: the cache measures it in bytes, and a cache hit is sent without re-encoding. */
  body: Buffer;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const XML_TYPE = 'application/xml; charset=utf-8';

/** The compact format: flat function lists with just id, agent, target and tags. */
export function compactListing(listing: CapabilityListing) {
  const flatten = (pick: (agent: AgentCapability) => FunctionCapability[]) =>
    listing.capabilities.flatMap((agent) =>
      pick(agent).map((fn) => ({
        id: fn.id,
        agent_id: agent.agent_id,
        target: fn.invocation_target,
        tags: fn.tags,
      })),
    );
  return {
    discovered_at: listing.discovered_at,
    reasoners: flatten((agent) => agent.reasoners),
    skills: flatten((agent) => agent.skills),
    pagination: listing.pagination,
  };
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

/** The xml format: `<discovery>` with a `<summary>` and `<capabilities>` of `<agent>` elements. */
export function xmlListing(listing: CapabilityListing): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<discovery${attributes({ discovered_at: listing.discovered_at })}>`,
    `  <summary${attributes({
      total_agents: listing.total_agents,
      total_reasoners: listing.total_reasoners,
      total_skills: listing.total_skills,
      limit: listing.pagination.limit,
      offset: listing.pagination.offset,
      has_more: listing.pagination.has_more,
    })}/>`,
    '  <capabilities>',
  ];
  for (const agent of listing.capabilities) {
    lines.push(
      `    <agent${attributes({
        id: agent.agent_id,
        base_url: agent.base_url,
        version: agent.version,
        health_status: agent.health_status,
        deployment_type: agent.deployment_type,
        last_heartbeat: agent.last_heartbeat,
      })}>`,
    );
    for (const reasoner of agent.reasoners) lines.push(...functionElement('reasoner', reasoner));
    for (const skill of agent.skills) lines.push(...functionElement('skill', skill));
    lines.push('    </agent>');
  }
  lines.push('  </capabilities>', '</discovery>', '');
  return lines.join('\n');
}

/** Renders a listing in the requested format. */
export function renderListing(listing: CapabilityListing, format: DiscoveryFormat): RenderedDiscovery {
  switch (format) {
    case 'json':
      return { contentType: JSON_TYPE, body: Buffer.from(JSON.stringify(listing)) };
    case 'compact':
      return { contentType: JSON_TYPE, body: Buffer.from(JSON.stringify(compactListing(listing))) };
    case 'xml':
      return { contentType: XML_TYPE, body: Buffer.from(xmlListing(listing)) };
  }
}
