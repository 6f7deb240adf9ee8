// The generated documentation pages the docs benches measure large sites with: words drawn from
// a made-up vocabulary with a skewed frequency, as in real text, five sections a page, an
// identifier and a curl block in each.
export const CATEGORIES = [
  ['getting-started', 'Getting started'],
  ['concepts', 'Concepts'],
  ['api-reference', 'API reference'],
  ['operations', 'Operations'],
  ['reference', 'Reference'],
];
const SYLLABLES = 'ka lo mi ne ru sa ti vo xe zu ba de fi go hu ja ke li mo nu pa qi re su to'.split(' ');
export const VOCABULARY = Array.from({ length: 2000 }, (_, i) => {
  let word = '';
  for (let n = i + 7; word.length < 6; n = Math.floor(n / SYLLABLES.length) + 3)
    word += SYLLABLES[n % SYLLABLES.length];
  return word;
});
const IDENTIFIERS = [
  'X-API-Key',
  'workflow_id',
  'execution_id',
  'SERVICE_API_KEY',
  'X-Workflow-ID',
  'duration_ms',
  'traffic_weight',
];

function words(seed, count) {
  const out = [];
  // A skewed draw: low-numbered words are common, high-numbered ones rare, as in real text.
  for (let i = 0; i < count; i++) {
    const r = ((seed * 7919 + i * 104729) % 1000003) / 1000003;
    out.push(VOCABULARY[Math.floor(r * r * VOCABULARY.length)]);
  }
  return out.join(' ');
}

export function generatedPage(i) {
  const [, category] = CATEGORIES[i % CATEGORIES.length];
  const sections = [1, 2, 3, 4, 5]
    .map(
      (s) => `## ${words(i * 5 + s, 3)}

${words(i * 11 + s, 70)}. Send \`${IDENTIFIERS[(i + s) % IDENTIFIERS.length]}\` with every call.

\`\`\`bash
curl -H 'X-API-Key: $KEY' http://127.0.0.1:8080/api/v1/execute/${VOCABULARY[(i + s) % 300]}.run
\`\`\``,
    )
    .join('\n\n');
  return `---
title: ${words(i * 3, 2)} guide ${i}
description: ${words(i * 13, 12)}.
category: ${category}
keywords: [${VOCABULARY[i % 500]}, ${VOCABULARY[(i * 7) % 500]}]
order: ${i}
---

${words(i * 17, 40)}.

${sections}
`;
}
