/** The learning-curve SVG and the training report's pieces. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { learningCurveSvg, niceTicks } from '../../src/report/learning-curve.ts';
import { metricSeries, smooth, trainReportMarkdown } from '../../src/report/train-report.ts';

test('nice ticks are round and cover the range', () => {
  assert.deepEqual(niceTicks(0, 10), [0, 2, 4, 6, 8, 10]);
  assert.deepEqual(niceTicks(-0.4, 0), [-0.4, -0.3, -0.2, -0.1, 0]);
  assert.deepEqual(niceTicks(3, 3), [3]);
});

test('the SVG has one polyline per series, a line per reference, escaped legend text', () => {
  const svg = learningCurveSvg({
    title: 'a <b> & c',
    xLabel: 'step',
    yLabel: 'return',
    series: [
      { name: 'eval', points: [{ x: 0, y: -0.4 }, { x: 10, y: -0.1 }, { x: 20, y: NaN }], color: '#123456', dots: true },
      { name: 'empty', points: [], color: '#000000' },
    ],
    lines: [{ name: 'optimal', y: -0.0466, color: '#00ff00', dashed: false }, { name: 'random', y: -0.396, color: '#ff0000' }],
  });
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.equal((svg.match(/<polyline /g) ?? []).length, 1);
  assert.equal((svg.match(/<circle /g) ?? []).length, 2);
  assert.match(svg, /a &lt;b&gt; &amp; c/);
  assert.match(svg, /optimal \(-0\.047\)/);
  assert.match(svg, /stroke="#ff0000" stroke-width="1\.5" stroke-dasharray="6 4"/);
  assert.ok(svg.trim().endsWith('</svg>'));
});

test('metric series, smoothing and the report markdown', () => {
  const metrics = [
    { runId: 'r', step: 2, name: 'eval/mean_return', value: -0.2 },
    { runId: 'r', step: 0, name: 'eval/mean_return', value: -0.4 },
    { runId: 'r', step: 1, name: 'time/rollout_s', value: 3 },
    { runId: 'r', step: 2, name: 'time/rollout_s', value: 5 },
    { runId: 'r', step: 2, name: 'episodes/total', value: 256 },
  ];
  assert.deepEqual(metricSeries(metrics, 'eval/mean_return'), [{ x: 0, y: -0.4 }, { x: 2, y: -0.2 }]);
  assert.deepEqual(smooth([{ x: 1, y: 1 }, { x: 2, y: 3 }, { x: 3, y: 5 }], 2).map((p) => p.y), [1, 2, 4]);
  const md = trainReportMarkdown({
    runId: 'r',
    env: 'blackjack',
    envOptions: {},
    config: { steps: 2 },
    steps: 2,
    episodes: 256,
    wallSeconds: 20,
    metrics,
    warmStart: { steps: 50, answerSteps: 0, reached: true, invalidRate: 0.01, seconds: 4 },
    finalEval: null,
    trainedPolicy: 'run:r',
    weightAverage: null,
    handOver: null,
    finalEvalSeconds: 2,
  });
  assert.match(md, /\| rollouts \| 8\.0 \| 40\.0% \|/);
  assert.match(md, /\| warm start \| 4\.0 \| 20\.0% \|/);
  assert.match(md, /\| 2 \| 256 \| -0\.2000 \|/);
  assert.match(md, /50 supervised steps/);
});
