/**
 * Store throughput on realistic trajectories (several turns of LLM calls with token ids and
 * logprobs): saves one per transaction and 16 per transaction, then pages through them.
 * Prints figures; checks nothing. usage: npx tsx bench/store.ts [count]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import { trajectorySchema } from '../src/store/recordSchemas.ts';
import { makeRun, makeTrajectory } from '../test/store/fixtures/records.ts';

const count = Number(process.argv[2] ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'spindle-bench-store-'));
try {
  const path = join(dir, 'spindle.db');
  const store = await openStore(path);
  await store.createRun(makeRun('run_single'));
  await store.createRun(makeRun('run_batch'));
  const single = Array.from({ length: count }, (_, i) => makeTrajectory('run_single', i));
  const batch = Array.from({ length: count }, (_, i) => makeTrajectory('run_batch', i));
  const bytes = single.reduce((n, t) => n + JSON.stringify(t).length, 0);

  let start = performance.now();
  for (const t of single) trajectorySchema.parse(t);
  const validateMs = performance.now() - start;

  start = performance.now();
  for (const t of single) await store.saveTrajectories([t]);
  const singleMs = performance.now() - start;

  start = performance.now();
  for (let i = 0; i < batch.length; i += 16) await store.saveTrajectories(batch.slice(i, i + 16));
  const batchMs = performance.now() - start;

  start = performance.now();
  let read = 0;
  let cursor: string | undefined;
  do {
    const page = await store.listTrajectories('run_single', { limit: 200, cursor });
    read += page.items.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  const readMs = performance.now() - start;
  await store.close();

  const per = (ms: number) => `${((ms / count) * 1000).toFixed(0)} µs/trajectory`;
  console.log(`${count} trajectories, ${(bytes / count / 1024).toFixed(1)} KiB of JSON each`);
  console.log(`validate only:           ${per(validateMs)}`);
  console.log(`save, 1 per transaction: ${per(singleMs)} (${(count / (singleMs / 1000)).toFixed(0)}/s)`);
  console.log(`save, 16 per transaction: ${per(batchMs)} (${(count / (batchMs / 1000)).toFixed(0)}/s)`);
  console.log(`list + parse, pages of 200: ${per(readMs)} (${read} read)`);
  console.log(`database file: ${(statSync(path).size / 2 ** 20).toFixed(1)} MiB`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
