import { initEngine, tree } from './src/model/engine.ts';
import { toParams } from './src/model/params.ts';
import { blackjackSpec } from './src/envs/blackjack/spec.ts';
import { createDefaultModel } from './src/train/default-model.ts';
import { trainerPolicy } from './src/train/trainer-policy.ts';
import { warmStart } from './src/train/warm-start.ts';
import { parseTrainConfig } from './src/train/train-config.ts';
const threads = Number(process.argv[2] ?? 2);
await initEngine({ threads });
const s = parseTrainConfig({ warmStart: { maxSteps: Number(process.argv[3] ?? 200), checkEvery: 25 } });
const options = blackjackSpec.options.parse({});
let t = performance.now();
const model = await createDefaultModel({ spec: blackjackSpec, options, seed: 0, corpusEpisodes: 200, shape: s.model });
console.log('model', (performance.now() - t).toFixed(0), 'ms', model.assets.cfg.vocabSize, model.corpus);
const params = toParams(model.params);
const policy = trainerPolicy(model.assets, params, { name: 'p', modelId: 'm', version: 0, maxBatchRows: 256 });
t = performance.now();
const ws = await warmStart({ spec: blackjackSpec, options, assets: model.assets, params, policy, settings: s.warmStart, runSeed: 0, maxTurns: 21, maxTokens: null, temperature: 1, concurrency: 512,
  onStep: (st, l) => { if (st % 10 === 0) console.log('step', st, l.toFixed(3), ((performance.now() - t)/1000).toFixed(1)); },
  onCheck: (c) => console.log('check', JSON.stringify(c), ((performance.now() - t)/1000).toFixed(1)) });
console.log(JSON.stringify({ ...ws, params: undefined, losses: undefined }));
await policy.close();
