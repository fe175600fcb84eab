/**
 * A tiny training run on hmm with report questions and `report.mode` 'supervised': the oracle's
 * report answers are trained by likelihood beside RL (the step logs the supervised loss and its
 * sample counts), and the `forecast` part is recorded but left out of the RL reward (weight 0).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { newId, nowIso } from '../../src/core/ids.ts';
import { hmmSpec } from '../../src/envs/hmm/spec.ts';
import { initEngine } from '../../src/model/engine.ts';
import { openStore } from '../../src/store/open.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainRun } from '../../src/train/trainer.ts';
import { tinyTrainConfig } from './trainer-fixtures.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

test('report.mode supervised on hmm report=true: the supervised loss is logged and forecast has weight 0', async () => {
  await initEngine({ threads: 1 });
  const options = hmmSpec.options.parse({ report: true, horizon: 1 });
  const settings = parseTrainConfig(
    tinyTrainConfig({
      steps: 2,
      warmStart: { maxSteps: 60, minSteps: 60, batchSize: 16, demoEpisodes: 60, checkEvery: 60, checkEpisodes: 8, optimizer: { lr: 2e-2, warmupSteps: 5 } },
      // hmm's episodes are longer than the default 128-token rows: measured from the demonstrations.
      update: { rows: 8, rowLength: null },
      report: { mode: 'supervised', weight: 0.5 },
      saveTrajectoriesPerStep: 16,
    }),
  );
  const store = await openStore(join(tempDir('spindle-report-sft-'), 'spindle.db'));
  const runId = newId('run');
  await store.createRun({ id: runId, kind: 'train', env: 'hmm', envOptions: options, policy: 'default-model', config: {}, status: 'running', createdAt: nowIso(), finishedAt: null, summary: null });
  const outcome = await trainRun({ spec: hmmSpec, options, settings, store, runId, resume: null });
  try {
    const metrics = await store.getMetrics(runId);
    const at = (name: string) => metrics.filter((m) => m.name === name && m.step > 0).map((m) => m.value);
    const sft = at('samples/report_sft');
    assert.equal(sft.length, 2, 'every step logs its supervised sample count');
    assert.ok(sft.some((n) => n > 0), `some decision recorded a report: ${sft}`);
    const loss = at('train/sft_loss');
    assert.ok(loss.length > 0 && loss.every((v) => Number.isFinite(v) && v > 0), `the supervised loss is logged: ${loss}`);
    assert.ok(at('train/sft_tokens').every((v) => v > 0));
    assert.ok(at('tokens/report_sft_targets').some((v) => v > 0));

    // The forecast part is scored and recorded, but the turn's reward leaves it out.
    const { items } = await store.listTrajectories(runId);
    const scored = items.flatMap((t) => t.turns).filter((turn) => turn.rewardParts.forecast !== undefined && turn.rewardParts.forecast !== 0);
    assert.ok(scored.length > 0, 'some turn has a non-zero forecast part');
    for (const turn of scored) {
      const others = Object.entries(turn.rewardParts).filter(([name]) => name !== 'forecast').reduce((sum, [, v]) => sum + v, 0);
      assert.ok(Math.abs(turn.reward - others) < 1e-12, `reward ${turn.reward} = the parts other than forecast (${JSON.stringify(turn.rewardParts)})`);
    }
    assert.equal(at('reward/forecast').length, 2, 'reward/forecast is still logged');
    assert.deepEqual(at('samples/report_sft_without_exact_ids'), [0, 0]);
  } finally {
    await outcome.policy.close();
    await store.close();
  }
});
