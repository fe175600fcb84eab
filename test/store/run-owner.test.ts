import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { recordDeadRuns } from '../../src/store/dead-runs.ts';
import { openStore } from '../../src/store/open.ts';
import { currentOwner, ownerState } from '../../src/store/run-owner.ts';
import { createdByKilledProcess } from './fixtures/created-by-killed-process.ts';
import { makeRun } from './fixtures/records.ts';
import { tempDir } from './fixtures/tmp.ts';

test('this process is alive; a changed start time, boot or host is not this process', () => {
  const me = currentOwner();
  assert.equal(me.pid, process.pid);
  assert.equal(me.host, hostname());
  assert.equal(ownerState(me), 'alive');
  if (me.startTicks !== null) assert.equal(ownerState({ ...me, startTicks: me.startTicks + 1 }), 'gone', 'the pid reused by a later process');
  if (me.bootId !== null) assert.equal(ownerState({ ...me, bootId: 'another-boot' }), 'gone', 'the pid of an earlier boot');
  assert.equal(ownerState({ ...me, host: `${me.host}-elsewhere` }), 'unknown');
});

test('a run whose process was SIGKILLed is recorded as failed, saying why and its latest checkpoint; live runs are left alone', async (t) => {
  const path = join(tempDir(t), 'spindle.db');
  createdByKilledProcess(path, 'run_killed', 'train');
  createdByKilledProcess(path, 'run_killed_eval', 'eval');
  const store = await openStore(path);
  t.after(() => store.close());
  await store.createRun(makeRun('run_live'));
  await store.createRun(makeRun('run_done'));
  const end = { status: 'finished' as const, finishedAt: '2025-01-02T05:00:00.000Z', summary: { steps: 50 } };
  await store.finishRun('run_done', end);

  const killed = await store.getRun('run_killed');
  assert.equal(killed?.status, 'running', 'the killed process recorded no end');
  assert.notEqual(killed?.owner?.pid, process.pid);
  assert.equal(ownerState(killed!.owner!), 'gone');

  const recorded = await recordDeadRuns(store);
  assert.deepEqual(recorded.map((r) => r.id).sort(), ['run_killed', 'run_killed_eval']);
  const after = await store.getRun('run_killed');
  assert.equal(after?.status, 'failed');
  assert.ok(after?.finishedAt);
  assert.match(String(after?.summary?.error), new RegExp(`^process ${killed!.owner!.pid} on ${hostname()} ended without recording the run's end \\(killed`));
  assert.equal(after?.summary?.lastCheckpointStep, 3);
  assert.deepEqual(after?.summary?.owner, killed!.owner);
  assert.equal((await store.getRun('run_killed_eval'))?.summary?.lastCheckpointStep, undefined, 'only train runs have checkpoints');
  assert.equal((await store.getRun('run_live'))?.status, 'running');
  assert.deepEqual((await store.getRun('run_done'))?.summary, end.summary, 'an ended run keeps its end');
  assert.deepEqual(await recordDeadRuns(store), [], 'nothing is recorded twice');
});

test('a dead run reopened by another process meanwhile is not abandoned', async (t) => {
  const path = join(tempDir(t), 'spindle.db');
  createdByKilledProcess(path, 'run_resumed', 'train');
  const store = await openStore(path);
  t.after(() => store.close());
  const stale = await store.getRun('run_resumed');
  // A resume (this process) takes the run over between the listing and the write.
  await store.reopenRun('run_resumed');
  assert.deepEqual((await store.getRun('run_resumed'))?.owner, currentOwner());
  const end = { finishedAt: '2025-01-02T05:00:00.000Z', summary: { error: 'dead' } };
  assert.equal(await store.abandonRun('run_resumed', stale!.owner!, end), false);
  assert.equal((await store.getRun('run_resumed'))?.status, 'running');
  assert.deepEqual(await recordDeadRuns(store), []);
});
