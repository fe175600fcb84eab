import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../src/store/open.ts';
import { currentOwner } from '../../src/store/run-owner.ts';
import { createdByKilledProcess } from '../store/fixtures/created-by-killed-process.ts';
import { makeRun } from '../store/fixtures/records.ts';
import { BIN, runCli, scratchDir } from './run-cli.ts';

test('spindle runs and show record a killed run as failed; --resume refuses a run still running and takes over a dead one', async () => {
  const dir = scratchDir();
  const db = join(dir, 'spindle.db');
  createdByKilledProcess(db, 'run_killed', 'train');
  createdByKilledProcess(db, 'run_killed_early', 'train');
  // Killed before its first checkpoint after the warm start.
  const raw = new Database(db);
  raw.prepare('DELETE FROM checkpoints WHERE run_id = ?').run('run_killed_early');
  raw.close();
  const store = await openStore(db);
  await store.createRun(makeRun('run_live'));
  await store.close();

  // A live run is not resumed beside itself; nothing is written.
  const live = runCli(['train', '--resume', 'run_live', '--db', db], dir);
  assert.equal(live.code, 2, live.stderr);
  assert.match(live.stderr, new RegExp(`--resume run_live: the run is still running in process ${process.pid} on `));
  // A dead one passes that check (and here stops at the next: it has no checkpoint to resume from).
  const early = runCli(['train', '--resume', 'run_killed_early', '--db', db], dir);
  assert.equal(early.code, 2, early.stderr);
  assert.match(early.stderr, /--resume run_killed_early: the run has no checkpoint after its warm start/);

  const listed = runCli(['runs', '--db', db, '--json'], dir);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stderr, new RegExp(`run run_killed: process \\d+ on .+ ended without recording the run's end .*; recorded as failed; its latest checkpoint is step 3: continue with spindle train --resume run_killed --db ${db}`));
  assert.match(listed.stderr, /run run_killed_early: .*; recorded as failed\n/);
  const runs = listed.json().runs as { id: string; status: string; summary: Record<string, unknown> | null }[];
  const byId = new Map(runs.map((r) => [r.id, r]));
  assert.equal(byId.get('run_live')?.status, 'running');
  for (const id of ['run_killed', 'run_killed_early']) {
    assert.equal(byId.get(id)?.status, 'failed', id);
    assert.match(String(byId.get(id)?.summary?.error), /ended without recording the run's end \(killed, e\.g\. by SIGKILL or the out-of-memory killer/);
  }
  assert.equal(byId.get('run_killed')?.summary?.lastCheckpointStep, 3);
  assert.equal(byId.get('run_killed_early')?.summary?.lastCheckpointStep, null);

  const shown = runCli(['show', 'run_live', '--db', db], dir);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`running in process ${process.pid} on ${currentOwner().host}`));
});

test('spindle proxy --run refuses a proxy run that another live process still records', async () => {
  const dir = scratchDir();
  const db = join(dir, 'spindle.db');
  const upstream = 'http://127.0.0.1:9/v1';
  const store = await openStore(db);
  await store.createRun(makeRun('proxy_live', { kind: 'proxy', env: 'proxy', envOptions: {}, policy: upstream, config: { upstream } }));
  await store.close();
  // A timeout, so that a proxy wrongly started fails the test instead of serving for ever.
  const r = spawnSync(process.execPath, [BIN, 'proxy', '--upstream', upstream, '--run', 'proxy_live', '--port', '0', '--db', db], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`--run: run 'proxy_live' is still recorded by process ${process.pid} on `));
  const after = await openStore(db);
  assert.deepEqual((await after.getRun('proxy_live'))?.owner, currentOwner(), 'the run is left to its process');
  await after.close();
});
