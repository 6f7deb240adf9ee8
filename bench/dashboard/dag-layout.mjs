#!/usr/bin/env node
// How long ELK takes to lay out a workflow DAG of 500 executions, the graph the dashboard's workflow
// page builds (apps/dashboard/src/workflows/dag-layout-graph.ts, same options), against the same
// shape at 50 executions measured in the same run: the ratio says how layout grows with size
// whatever the machine's load. The page must lay out 500 executions in under a second.
// Usage: node --import tsx bench/dashboard/dag-layout.mjs [--nodes 500] [--reference 50] [--runs 5]
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const require = createRequire(path.join(root, 'apps/dashboard/package.json'));
const ELK = require('elkjs/lib/elk.bundled.js');
const { elkGraphOf } = await import(path.join(root, 'apps/dashboard/src/workflows/dag-layout-graph.ts'));

const args = process.argv.slice(2);
const option = (name, fallback) => Number(args[args.indexOf(name) + 1]) || fallback;
const size = option('--nodes', 500);
const reference = option('--reference', 50);
const runs = option('--runs', 5);

/** Shapes a workflow takes: one parent fanning out, a bushy tree, and a long chain with side calls. */
const SHAPES = {
  'fan-out': (n) => Array.from({ length: n - 1 }, (_, i) => [0, i + 1]),
  tree: (n) => Array.from({ length: n - 1 }, (_, i) => [Math.floor(i / 4), i + 1]),
  'chain with side calls': (n) =>
    Array.from({ length: n - 1 }, (_, i) => {
      const child = i + 1;
      // Every third execution continues the chain; the others hang off the chain's last step.
      const spine = Math.floor(i / 3) * 3;
      return [child % 3 === 1 ? spine : spine + 1 <= i ? spine + 1 : spine, child];
    }),
};

/** The graph the page would build: each execution at its depth (a child is created after its parent). */
function graph(shape, n) {
  const ids = Array.from({ length: n }, (_, i) => `exec_${String(i).padStart(26, '0')}`);
  const pairs = SHAPES[shape](n);
  const depth = new Array(n).fill(1);
  for (const [from, to] of pairs) depth[to] = depth[from] + 1;
  const edges = pairs.map(([from, to]) => ({ from: ids[from], to: ids[to] }));
  return elkGraphOf(
    ids.map((id, i) => ({ id, depth: depth[i] })),
    edges,
  );
}

async function time(elk, shape, n) {
  const input = graph(shape, n);
  const started = performance.now();
  const out = await elk.layout(structuredClone(input));
  const ms = performance.now() - started;
  if ((out.children ?? []).length !== n || out.children.some((c) => typeof c.x !== 'number')) {
    throw new Error(`${shape} ${n}: ELK did not place every node`);
  }
  return ms;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const elk = new ELK();
// The first layout pays for ELK's start-up (its registry of algorithms), as the page's first does.
const coldStarted = performance.now();
await time(elk, 'tree', size);
const cold = performance.now() - coldStarted;

console.log(`ELK layered layout, ${size} executions vs ${reference} (median of ${runs} runs each)`);
console.log(`first layout of ${size} in a fresh ELK (start-up included): ${cold.toFixed(0)} ms`);
console.log('');
console.log(`| shape | ${reference} (ms) | ${size} (ms) | ratio ${size}/${reference} |`);
console.log('| --- | ---: | ---: | ---: |');
let worst = 0;
for (const shape of Object.keys(SHAPES)) {
  const small = [];
  const large = [];
  for (let i = 0; i < runs; i++) {
    small.push(await time(elk, shape, reference));
    large.push(await time(elk, shape, size));
  }
  const a = median(small);
  const b = median(large);
  worst = Math.max(worst, b, cold);
  console.log(`| ${shape} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(1)}x |`);
}
console.log('');
console.log(`slowest ${size}-execution layout: ${worst.toFixed(0)} ms (budget 1000 ms)`);
if (worst >= 1000) process.exitCode = 1;
