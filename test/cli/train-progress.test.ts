import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duration, trainProgressPrinter } from '../../src/cli/train-progress.ts';
import type { TrainEvent } from '../../src/train/trainer.ts';

function harness(steps: number, isTTY = false) {
  const lines: string[] = [];
  let now = 0;
  const print = trainProgressPrinter(steps, { isTTY, write: (t: string) => lines.push(t) }, () => now);
  return { lines, print, at: (ms: number) => (now = ms) };
}

const step = (n: number, stepSeconds: number): TrainEvent => ({
  type: 'step',
  step: n,
  steps: 10,
  metrics: { 'time/step_s': stepSeconds, 'reward/mean': 0.5, 'episodes/win_rate': 0.25 },
  episodes: 256 * n,
  wallSeconds: 0,
});

test('duration: seconds under a minute, minutes and zero-padded seconds above', () => {
  assert.equal(duration(0), '0s');
  assert.equal(duration(44.6), '45s');
  assert.equal(duration(60), '1m00s');
  assert.equal(duration(785), '13m05s');
  assert.equal(duration(-3), '0s');
});

test('the first RL line already has an ETA from that step’s own time', () => {
  const h = harness(10);
  h.at(4_000);
  h.print(step(1, 4)); // the step took 4 s: 9 more steps ≈ 36 s
  assert.match(h.lines[0], /^step 1\/10 reward 0\.500 win 25\.0% .* episodes 256 ETA 36s\n$/);
  h.at(10_000);
  h.print(step(2, 6)); // (10 s) / 2 steps = 5 s a step, 8 left
  assert.match(h.lines[1], /ETA 40s\n$/);
});

test('a resumed run counts only the steps of this process', () => {
  const h = harness(100);
  h.at(50_000);
  h.print(step(51, 2)); // resumed after step 50: 49 steps left at 2 s
  assert.match(h.lines[0], /ETA 1m38s\n$/);
});

test('warm start lines give a rate and an ETA bounded by maxSteps once a step has been timed', () => {
  const h = harness(10);
  const ws = (n: number): TrainEvent => ({ type: 'warm-start-step', step: n, maxSteps: 400, loss: 1.25 });
  h.at(1_000);
  h.print(ws(1));
  assert.equal(h.lines[0], 'warm start step 1/400 loss 1.2500\n');
  h.at(3_500);
  h.print(ws(2)); // 2.5 s after the last line: printed; 1 step in 2.5 s, 398 left
  assert.equal(h.lines[1], 'warm start step 2/400 loss 1.2500 0.40 steps/s ETA ≤ 16m35s\n');
  h.at(4_000);
  h.print(ws(3)); // 0.5 s after the last line: not printed off a terminal
  assert.equal(h.lines.length, 2);
});

test('on a terminal the line is rewritten in place and the last step ends it', () => {
  const h = harness(2, true);
  h.at(1_000);
  h.print(step(1, 1));
  h.at(2_000);
  h.print(step(2, 1));
  assert.equal(h.lines.length, 3);
  assert.ok(h.lines[0].startsWith('\r\x1b[Kstep 1/2'));
  assert.ok(h.lines[1].startsWith('\r\x1b[Kstep 2/2') && h.lines[1].endsWith('ETA 0s'));
  assert.equal(h.lines[2], '\n');
});

test('off a terminal, an evaluation line does not hide the step line that follows it', () => {
  const h = harness(10);
  h.at(100_000);
  h.print(step(1, 100));
  h.at(200_000);
  h.print({ type: 'eval', step: 2, eval: { meanReturn: -1.5, ci95: [-2, -1], exactReturn: null, winRate: 0, invalidRate: 0.25 } } as TrainEvent);
  h.print(step(2, 100));
  assert.equal(h.lines.length, 3);
  assert.match(h.lines[1], /^eval at step 2: greedy return -1\.5000 \[-2\.0000, -1\.0000\], win 0\.0%, invalid 25\.0%\n$/);
  assert.match(h.lines[2], /^step 2\/10 .* ETA 13m20s\n$/);
});

test('a step whose groups nearly all tied says so: the group-relative estimator had little to train', () => {
  const h = harness(10);
  const withGroups = (n: number, count: number, tied: number): TrainEvent => {
    const e = step(n, 1) as Extract<TrainEvent, { type: 'step' }>;
    return { ...e, metrics: { ...e.metrics, 'groups/count': count, 'groups/zero_variance': tied } };
  };
  h.at(1_000);
  h.print(withGroups(1, 80, 79));
  assert.match(h.lines[0], / tied 79\/80 groups: little to train\n$/);
  h.at(10_000);
  h.print(withGroups(2, 80, 71)); // 89 %: not flagged
  h.at(20_000);
  h.print(withGroups(3, 80, 72)); // 90 %
  h.at(30_000);
  h.print(withGroups(4, 0, 0)); // a step with no groups (every episode failed) is not "tied"
  assert.doesNotMatch(h.lines[1], /tied/);
  assert.match(h.lines[2], / tied 72\/80 groups/);
  assert.doesNotMatch(h.lines[3], /tied/);
});

test('each validated candidate for the handed-over policy gets its own line, with the ETA of the rest', () => {
  const h = harness(10);
  const candidate = (weights: 'average' | number, meanReturn: number, failed: number) => ({ weights, meanReturn, ci95: [meanReturn - 0.25, meanReturn + 0.25] as [number, number], failed });
  h.print({ type: 'select', candidate: candidate('average', 6.017, 0), index: 0, count: 3, seconds: 40 });
  h.print({ type: 'select', candidate: candidate(90, 6.123, 2), index: 2, count: 3, seconds: 45 });
  assert.deepEqual(h.lines, [
    'validation 1/3: the weight average greedy return 6.0170 [5.7670, 6.2670] ETA 1m20s\n',
    "validation 3/3: step 90's weights greedy return 6.1230 [5.8730, 6.3730], 2 episodes failed\n",
  ]);
});
