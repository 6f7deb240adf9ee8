import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GENERATE_COMMAND, generateSchema, SCHEMA_FILE } from '../scripts/schema-source.ts';

describe(SCHEMA_FILE, () => {
  it("matches what the control plane's OpenAPI document generates now", async () => {
    const committed = await readFile(new URL(`../${SCHEMA_FILE}`, import.meta.url), 'utf8');
    const current = await generateSchema();
    // A failing comparison prints a diff of 14,000 lines; the command is what the reader needs.
    expect(
      committed === current,
      `${SCHEMA_FILE} is out of date with the control plane's routes: run \`${GENERATE_COMMAND}\` and commit the result`,
    ).toBe(true);
  });
});
