/** A toy env and tiny settings for trainer tests: one decision, pick the number the observation names. */
import { z } from 'zod';
import { newId, nowIso } from '../../src/core/ids.ts';
import type { MetricPoint } from '../../src/core/trajectory.ts';
import type { Store } from '../../src/store/store.ts';
import { isTimingMetric } from '../../src/train/trainer-metrics.ts';
import { Rng } from '../../src/core/random.ts';
import type { ToolSpec } from '../../src/core/messages.ts';
import type { Action, ActionValue, Env, EnvKind, EnvSpec } from '../../src/envs/env.ts';
import type { TrainConfig } from '../../src/train/train-config.ts';

const PICK: ToolSpec = {
  name: 'pick',
  description: 'Pick a number.',
  parameters: { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 3 } }, required: ['n'], additionalProperties: false },
};
const TOOLS = [PICK];

class PickEnv implements Env {
  readonly actionRewards?: () => ActionValue[];
  constructor(readonly kind: EnvKind = 'outcome') {
    // Dense: every legal pick scored exactly (1 for the target, 0 otherwise).
    if (kind === 'dense') this.actionRewards = () => this.legalActions().map((action) => ({ action, expectedReward: action.arguments.n === this.target ? 1 : 0 }));
  }
  readonly invalidAction = { mode: 'end' as const, penalty: -1, maxRetries: 0 };
  readonly maxTurns = 1;
  private target = 1;
  private done = true;

  reset(seed: number) {
    this.target = 1 + new Rng(seed).int(3);
    this.done = false;
    return { observation: `Target ${this.target}.`, tools: TOOLS };
  }

  validate(action: Action): string | null {
    if (this.done) return 'the episode is over';
    if (action.name !== 'pick') return `unknown tool ${action.name}`;
    const n = action.arguments.n;
    return n === 1 || n === 2 || n === 3 ? null : 'n must be 1, 2 or 3';
  }

  step(action: Action) {
    this.done = true;
    const hit = action.arguments.n === this.target;
    return { observation: hit ? 'Right.' : 'Wrong.', reward: hit ? 1 : 0, rewardParts: { outcome: hit ? 1 : 0 }, done: true, truncated: false, info: { outcome: hit ? 'win' : 'loss' } };
  }

  legalActions(): Action[] {
    return this.done ? [] : [1, 2, 3].map((n) => ({ name: 'pick', arguments: { n } }));
  }

  state() {
    return { target: this.target };
  }
}

export const pickSpec: EnvSpec<Record<string, never>> = {
  name: 'pick',
  description: 'pick the number the observation names',
  kind: 'outcome',
  options: z.strictObject({}),
  create: () => new PickEnv(),
  instructions: () => 'Pick the target number.',
};

/** The pick env as a dense env: it scores every legal pick (actionRewards). */
export const densePickSpec: EnvSpec<Record<string, never>> = { ...pickSpec, name: 'pick-dense', kind: 'dense', create: () => new PickEnv('dense') };

/** A warm start long enough for the tiny model to learn the pick env's answer format (it passes its format check). */
export const learnedWarmStart = { maxSteps: 40, batchSize: 16, demoEpisodes: 60, checkEvery: 20, checkEpisodes: 16, optimizer: { lr: 2e-2, warmupSteps: 5 } };

/** A tiny model and budgets small enough for a unit test (threads 1). */
export function tinyTrainConfig(extra: TrainConfig = {}): TrainConfig {
  return {
    steps: 3,
    batchSeeds: 4,
    groupSize: 4,
    evalEvery: 100,
    evalEpisodes: 8,
    finalEvalEpisodes: 8,
    checkpointEvery: 2,
    threads: 1,
    model: { hiddenSize: 32, intermediateSize: 64, numLayers: 1, numHeads: 2, numKvHeads: 1, headDim: 16, corpusEpisodes: 30 },
    warmStart: { maxSteps: 4, answerSteps: 2, batchSize: 8, demoEpisodes: 30, checkEvery: 2, checkEpisodes: 4 },
    update: { rows: 8, rowLength: 64 },
    // No KL unless a test asks: a run resumed into another store has no warm-start folder to load as the reference.
    loss: { klBeta: 0 },
    rollout: { concurrency: 64, maxBatchRows: 64 },
    ...extra,
  };
}

/** A new train run in `store` (its record only), for trainRun to fill. */
export async function newTrainRun(store: Store, env = 'pick'): Promise<string> {
  const id = newId('run');
  await store.createRun({ id, kind: 'train', env, envOptions: {}, policy: 'default-model', config: {}, status: 'running', createdAt: nowIso(), finishedAt: null, summary: null });
  return id;
}

/** A step's metrics by name, timings left out (they differ between otherwise equal runs). */
export function metricsAt(points: readonly MetricPoint[], step: number): Record<string, number> {
  return Object.fromEntries(points.filter((p) => p.step === step && !isTimingMetric(p.name)).map((p) => [p.name, p.value]));
}
