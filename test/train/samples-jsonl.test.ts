import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildSamples } from '../../src/train/samples.ts';
import { readSamplesJsonl, samplesFromJsonl, samplesToJsonl, writeSamplesJsonl } from '../../src/train/samples-jsonl.ts';
import type { TrainingSample } from '../../src/train/samples-types.ts';
import { call, EOT, stablePrompts as P, trajectory } from './samples-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

function someSamples(): TrainingSample[] {
  const a = trajectory('a', [
    [call({ prompt: P.p0, ids: P.c0, logprobs: [-0.1234567890123, -1e-9, -17.5] })],
    [call({ prompt: P.p1, ids: P.c1, finishReason: 'length' })],
  ], { reward: 0.3 });
  const b = trajectory('b', [[call({ prompt: [1, 2], ids: [9, EOT], exact: false })]], { reward: -1, status: 'truncated' });
  return buildSamples([a, b], [
    { trajectoryId: 'a', groupId: 'g1', turnAdvantages: [1 / 3, -0.1] },
    { trajectoryId: 'b', groupId: 'g1', turnAdvantages: [-2 / 3] },
  ], { truncated: 'penalize', allowApproximateIds: true }).samples;
}

test('JSONL round trip: one sample per line, every field and number comes back exactly', () => {
  const samples = someSamples();
  assert.equal(samples.length, 2);
  const text = samplesToJsonl(samples);
  assert.equal(text.split('\n').filter(Boolean).length, 2);
  assert.ok(text.endsWith('\n'));
  assert.deepEqual(samplesFromJsonl(text), samples);
});

test('files: writeSamplesJsonl then readSamplesJsonl', async () => {
  const dir = tempDir('spindle-samples-');
  const file = join(dir, 'samples.jsonl');
  const samples = someSamples();
  await writeSamplesJsonl(file, samples);
  assert.equal(await readFile(file, 'utf8'), samplesToJsonl(samples));
  assert.deepEqual(await readSamplesJsonl(file), samples);
});

test('a line whose arrays do not line up with its tokens or spans is refused, naming the line and field', () => {
  const [first, second] = someSamples();
  const lines = [first, second].map((s) => JSON.stringify(s));
  const broken = (s: TrainingSample) => [lines[0], JSON.stringify(s)].join('\n');

  assert.throws(() => samplesFromJsonl(broken({ ...second, lossMask: second.lossMask.slice(1) })), /samples line 2: lossMask: has \d+ entries for \d+ tokens/);
  const maskOutside = [...second.lossMask];
  maskOutside[0] = 1;
  assert.throws(() => samplesFromJsonl(broken({ ...second, lossMask: maskOutside })), /samples line 2: lossMask\.0: must be 0: position 0 is outside a span/);
  // b is a truncated episode under 'penalize': its span's advantage is the penalty, −1.
  const wrongAdvantage = [...second.advantages];
  wrongAdvantage[second.spans[0].start] = 5;
  assert.throws(() => samplesFromJsonl(broken({ ...second, advantages: wrongAdvantage })), /samples line 2: advantages\.2: must be -1, got 5/);
  assert.throws(() => samplesFromJsonl(broken({ ...second, spans: [{ ...second.spans[0], end: 999 }] })), /spans\.0\.end: 999 is past the last token/);
  assert.throws(() => samplesFromJsonl(`${lines[0]}\n{not json`), /samples line 2: not valid JSON/);
  assert.throws(() => samplesFromJsonl(broken({ ...second, policyVersion: 99 })), /policyVersion: must be the oldest span's version/);
});

test('writing refuses a malformed sample instead of writing it', () => {
  const [first] = someSamples();
  assert.throws(() => samplesToJsonl([first, { ...first, logprobs: [] }]), /samples: 1\.logprobs: has 0 entries/);
});
