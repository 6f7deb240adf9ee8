// One measurement of embedded-start.mjs in a fresh process: `open` or `steady`. Prints one JSON
// line: { ms, cpuMs }. Run through tsx (the shared package ships TypeScript).
import { openDatabase } from '../../packages/shared/src/db/open-database.ts';

const cpuMs = (since) => {
  const used = process.cpuUsage(since);
  return Math.round((used.user + used.system) / 1000);
};

const mode = process.argv[2];
const BATCHES = Number(process.env.BENCH_BATCHES ?? 8);
const started = performance.now();
const cpuAtStart = process.cpuUsage();
const db = await openDatabase();
await db.raw('select 1');
if (mode === 'open') {
  console.log(JSON.stringify({ ms: Math.round(performance.now() - started), cpuMs: cpuMs(cpuAtStart) }));
} else if (mode === 'steady') {
  await db.raw('create table bench_rows (id int primary key, label text, bucket int)');
  let cpuAfterFirst;
  let afterFirst;
  for (let batch = 0; batch < BATCHES; batch++) {
    if (batch === 1) {
      cpuAfterFirst = process.cpuUsage();
      afterFirst = performance.now();
    }
    for (let i = 0; i < 3000; i++) {
      await db.raw('insert into bench_rows values (?, ?, ?)', [batch * 3000 + i, `row ${i}`, i % 97]);
    }
    for (let i = 0; i < 200; i++) {
      await db.raw('select bucket, count(*), max(label) from bench_rows where bucket = ? group by bucket', [
        i % 97,
      ]);
    }
  }
  console.log(
    JSON.stringify({ ms: Math.round(performance.now() - afterFirst), cpuMs: cpuMs(cpuAfterFirst) }),
  );
} else {
  throw new Error(`unknown mode ${mode}: open or steady`);
}
await db.destroy();
