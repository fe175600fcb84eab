/**
 * update.shareConversations through a whole run: on a three-decision dense env each decision's
 * answers are samples of their own (a conversation is packed into one sample only when its calls are
 * trained alike), and with the option the decisions of an episode share its text in the rows, so the
 * same rollouts and samples cost fewer computed positions.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { z } from 'zod';
import type { ToolSpec } from '../../src/core/messages.ts';
import { Rng } from '../../src/core/random.ts';
import type { Action, ActionValue, Env, EnvSpec } from '../../src/envs/env.ts';
import { initEngine } from '../../src/model/engine.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import { parseTrainConfig } from '../../src/train/train-config.ts';
import { trainRun } from '../../src/train/trainer.ts';
import { tempDir } from '../fixtures/temp-dir.ts';
import { learnedWarmStart, metricsAt, newTrainRun, tinyTrainConfig } from './trainer-fixtures.ts';

const PICK: ToolSpec = {
  name: 'pick',
  description: 'Pick a number.',
  parameters: { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 3 } }, required: ['n'], additionalProperties: false },
};

/** Three picks an episode, each against a new target, every legal pick scored exactly (a dense env). */
class ThreePicksEnv implements Env {
  readonly kind = 'dense' as const;
  readonly invalidAction = { mode: 'retry' as const, penalty: -1, maxRetries: 1 };
  readonly maxTurns = 3;
  private rng = new Rng(0);
  private target = 1;
  private turn = 0;

  reset(seed: number) {
    this.rng = new Rng(seed);
    this.turn = 0;
    this.target = 1 + this.rng.int(3);
    return { observation: `Target ${this.target}.`, tools: [PICK] };
  }

  validate(action: Action): string | null {
    if (action.name !== 'pick') return `unknown tool ${action.name}`;
    const n = action.arguments.n;
    return n === 1 || n === 2 || n === 3 ? null : 'n must be 1, 2 or 3';
  }

  step(action: Action) {
    const hit = action.arguments.n === this.target;
    this.turn++;
    this.target = 1 + this.rng.int(3);
    const done = this.turn === this.maxTurns;
    return { observation: `${hit ? 'Right' : 'Wrong'}. Target ${this.target}.`, reward: hit ? 1 : 0, rewardParts: { outcome: hit ? 1 : 0 }, done, truncated: false, info: {} };
  }

  actionRewards(): ActionValue[] {
    return this.legalActions().map((action) => ({ action, expectedReward: action.arguments.n === this.target ? 1 : 0 }));
  }

  legalActions(): Action[] {
    return [1, 2, 3].map((n) => ({ name: 'pick', arguments: { n } }));
  }

  state() {
    return { target: this.target, turn: this.turn };
  }
}

const threePicks: EnvSpec<Record<string, never>> = {
  name: 'three-picks',
  description: 'pick the named number three times',
  kind: 'dense',
  options: z.strictObject({}),
  create: () => new ThreePicksEnv(),
  instructions: () => 'Pick the target number each turn.',
};

let store: Store;

before(async () => {
  await initEngine({ threads: 1 });
  store = await openStore(join(tempDir('spindle-share-'), 'spindle.db'));
});

after(async () => {
  await store?.close();
});

async function firstStep(shareConversations: boolean): Promise<Record<string, number>> {
  const settings = parseTrainConfig(
    tinyTrainConfig({
      steps: 1,
      checkpointEvery: 1,
      groupSize: 1,
      batchSeeds: 8,
      episode: { decisionSamples: 4 },
      advantage: { estimator: 'dense' },
      // A warm start long enough that most answers are legal picks (as trainer-dense.test.ts).
      warmStart: learnedWarmStart,
      update: { rows: 8, rowLength: 128, shareConversations },
    }),
  );
  const runId = await newTrainRun(store, 'three-picks');
  const outcome = await trainRun({ spec: threePicks, options: {}, settings, store, runId, resume: null });
  await outcome.policy.close();
  return metricsAt(await store.getMetrics(runId), 1);
}

test('shareConversations: the same samples, trained on fewer computed positions', async () => {
  const plain = await firstStep(false);
  const shared = await firstStep(true);
  // One thread and one seed: the same warm start and rollouts, so the same samples.
  for (const name of ['reward/mean', 'samples/count', 'tokens/trained', 'tokens/samples']) assert.equal(shared[name], plain[name], name);
  assert.ok(plain['samples/count'] > 24, `several decisions an episode, each a sample per answer: ${plain['samples/count']} samples from 8 episodes`);
  assert.ok(plain['train/layouts'] > 0 && Number.isFinite(shared['train/loss']), 'both trained');
  assert.ok(
    shared['tokens/train_computed'] < plain['tokens/train_computed'],
    `computed ${shared['tokens/train_computed']} positions shared against ${plain['tokens/train_computed']}`,
  );
  assert.ok(shared['train/layouts'] <= plain['train/layouts']);
});
