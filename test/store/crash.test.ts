import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { Rng } from '../../src/core/random.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { makeGroup, makeTrajectory } from './fixtures/records.ts';
import { tempDir } from './fixtures/tmp.ts';

const WRITER = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
const KILLS = 20;
const RUN = 'run_crash';

interface Reported {
  trajectories: Set<string>;
  groups: Set<string>;
}

const indexOf = (id: string) => Number(id.slice(id.lastIndexOf('_') + 1));

/**
 * Starts the writer at `start` and SIGKILLs it: `fromSpawn` kills at a random moment of its life
 * (starting up, opening or migrating the database, writing); otherwise a random moment after its
 * first commit, when it is writing as fast as it can.
 */
function runAndKill(path: string, start: number, delayMs: number, fromSpawn: boolean, reported: Reported): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, path, RUN, String(start)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let pending = '';
    let timer: NodeJS.Timeout | undefined;
    const kill = () => {
      timer ??= setTimeout(() => child.kill('SIGKILL'), delayMs);
    };
    if (fromSpawn) kill();
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const [kind, id] = line.split(' ');
        (kind === 'T' ? reported.trajectories : reported.groups).add(id);
      }
      if (!fromSpawn) kill();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve();
      else reject(new Error(`the writer exited on its own (code ${code}, signal ${signal}): ${stderr}`));
    });
  });
}

async function readAll<T>(list: (cursor?: string) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor);
    out.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

async function checkStoreHolds(store: Store, reported: Reported, kills: number): Promise<void> {
  // Listing parses every row fully: a half-written one would throw here.
  const trajectories = await readAll((cursor) => store.listTrajectories(RUN, { limit: 200, cursor }));
  const stored = new Set(trajectories.map((t) => t.id));
  for (const id of reported.trajectories) assert.ok(stored.has(id), `reported trajectory ${id} was lost`);
  for (const t of trajectories) assert.deepEqual(t, makeTrajectory(RUN, indexOf(t.id)), `trajectory ${t.id} differs from what was written`);
  // Each kill can cut between a commit and its report at most once.
  assert.ok(stored.size - reported.trajectories.size <= kills, `${stored.size - reported.trajectories.size} unreported rows`);

  const groups = await readAll((cursor) => store.listGroups(RUN, { limit: 200, cursor }));
  const storedGroups = new Set(groups.map((g) => g.id));
  for (const id of reported.groups) assert.ok(storedGroups.has(id), `reported group ${id} was lost`);
  for (const g of groups) assert.deepEqual(g, makeGroup(RUN, indexOf(g.id)));
}

test('a writer killed with SIGKILL at random points loses nothing it reported committed', { timeout: 90_000 }, async (t) => {
  const path = join(tempDir(t), 'spindle.db');
  const seed = Math.floor(Math.random() * 2 ** 31);
  t.diagnostic(`random seed ${seed}`);
  const rng = new Rng(seed);
  const reported: Reported = { trajectories: new Set(), groups: new Set() };

  for (let kill = 0; kill < KILLS; kill++) {
    const fromSpawn = kill % 4 === 0;
    const delay = fromSpawn ? rng.int(600) : rng.int(80);
    // Restart at the first unreported index: a committed but unreported row is upserted again.
    const start = reported.trajectories.size === 0 ? 0 : Math.max(...[...reported.trajectories].map(indexOf)) + 1;
    await runAndKill(path, start, delay, fromSpawn, reported);
  }
  // Every kill that waited for a first commit followed one (a kill from spawn may come first, on a loaded machine at every try).
  const afterCommit = KILLS - Math.ceil(KILLS / 4);
  assert.ok(reported.trajectories.size >= afterCommit, `the writer got to write (${reported.trajectories.size} trajectories)`);
  t.diagnostic(`${KILLS} kills, ${reported.trajectories.size} trajectories and ${reported.groups.size} groups reported`);

  const checkStart = performance.now();
  const store = await openStore(path);
  t.after(() => store.close());
  const raw = new Database(path, { readonly: true });
  t.after(() => raw.close());
  assert.deepEqual(raw.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
  assert.deepEqual(raw.pragma('foreign_key_check'), []);
  await checkStoreHolds(store, reported, KILLS);
  t.diagnostic(`checking the database took ${Math.round(performance.now() - checkStart)} ms`);
});
