/** Report questions in hmm, kelly and newsvendor: off by default, then asked, accepted, recorded with the oracle's target and the outcome. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Env, EnvReset, EnvStep, ReportRecord } from '../../src/envs/env.ts';
import { hmmSpec } from '../../src/envs/hmm/spec.ts';
import { kellySpec } from '../../src/envs/kelly/spec.ts';
import { newsvendorSpec } from '../../src/envs/newsvendor/spec.ts';
import { criticalRatio } from '../../src/envs/newsvendor/profit.ts';
import { withoutReportAnswers } from '../../src/envs/report-arguments.ts';
import { oraclePolicy, randomPolicy } from '../../src/policy/scripted.ts';
import { parseCompletion } from '../../src/agent/parse-tool-calls.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const make = (spec: any, raw: Record<string, unknown>): Env => spec.create(spec.options.parse(raw));

test('off by default: no questions, no extra arguments, no forecast part', () => {
  for (const spec of [hmmSpec, kellySpec, newsvendorSpec]) {
    const env = make(spec, {});
    const reset = env.reset(1) as EnvReset;
    assert.deepEqual(env.reportQuestions?.(), [], spec.name);
    assert.equal(Object.keys(reset.tools[0].parameters.properties as object).length, 1, spec.name);
    const action = env.oracle!().action;
    assert.match(String(env.validate({ ...action, arguments: { ...action.arguments, p_win: 0.5 } })), /takes only/);
    const step = env.step(action) as EnvStep;
    assert.equal(step.info?.report, undefined);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    assert.deepEqual((spec as any).rewards(spec.options.parse({})), { fns: [], weights: {} });
  }
});

test('bad report options are refused naming the field', () => {
  const bad = hmmSpec.options.safeParse({ report: 'yes' });
  assert.ok(!bad.success && bad.error.issues[0].path[0] === 'report');
  const rule = kellySpec.options.safeParse({ reportRule: 'spherical' });
  assert.ok(!rule.success && rule.error.issues[0].path[0] === 'reportRule');
  const unknown = newsvendorSpec.options.safeParse({ reprot: true });
  assert.ok(!unknown.success && JSON.stringify(unknown.error.issues).includes('reprot'));
  const rewards = kellySpec.rewards!(kellySpec.options.parse({ report: true, reportWeight: 0.5 }));
  assert.deepEqual(rewards.weights, { forecast: 0.5 });
  assert.equal(rewards.fns[0].name, 'forecast');
});

test('hmm: the posterior over states is asked, answered beside the guess, recorded with the true state', () => {
  const env = make(hmmSpec, { report: true, states: 3 });
  const reset = env.reset(7) as EnvReset;
  assert.ok('p_state' in (reset.tools[0].parameters.properties as object));
  const [q] = env.reportQuestions!();
  assert.equal(q.kind, 'choice');
  const f = env.oracle!().forecasts!;
  const posterior = { A: f.p_state_A, B: f.p_state_B, C: f.p_state_C };
  assert.ok(Math.abs(posterior.A + posterior.B + posterior.C - 1) < 1e-12);
  const action = { name: 'guess_state', arguments: { state: 'B', p_state: { A: 0.2, B: 0.5, C: 0.3 } } };
  assert.equal(env.validate(action), null);
  assert.deepEqual(withoutReportAnswers(action, [q]), { name: 'guess_state', arguments: { state: 'B' } });
  const step = env.step(action) as EnvStep;
  const record = step.info!.report as ReportRecord;
  assert.deepEqual(record.targets, { p_state: posterior });
  assert.deepEqual(record.outcomes, { p_state: step.info!.state });
  assert.equal(step.reward, step.info!.state === 'B' ? 1 : 0);
});

test('kelly: P(win) is asked; the target is p and the outcome the bet', () => {
  const env = make(kellySpec, { report: true });
  env.reset(3);
  const p = env.state().p as number;
  assert.equal(env.oracle!().forecasts!.p_win, p);
  const step = env.step({ name: 'bet', arguments: { fraction: 0.1, p_win: 0.55 } }) as EnvStep;
  const record = step.info!.report as ReportRecord;
  assert.deepEqual(record.targets, { p_win: p });
  assert.deepEqual(record.outcomes, { p_win: step.info!.won ? 1 : 0 });
});

test('newsvendor: the demand quantile at the critical ratio; the target is the critical fractile', () => {
  const env = make(newsvendorSpec, { report: true });
  env.reset(5);
  const [q] = env.reportQuestions!();
  assert.ok(q.kind === 'quantile');
  const s = env.state() as { price: number; cost: number; salvage: number };
  assert.equal(q.level, criticalRatio(s));
  assert.deepEqual(q.range, [0, 30]);
  const order = env.oracle!().action;
  const step = env.step({ ...order, arguments: { ...order.arguments, demand_quantile: 8.5 } }) as EnvStep;
  const record = step.info!.report as ReportRecord;
  assert.deepEqual(record.targets, { demand_quantile: order.arguments.quantity });
  assert.deepEqual(record.outcomes, { demand_quantile: step.info!.demand });
});

test('scripted policies answer: the oracle with its targets, random with valid random forecasts', async () => {
  const env = make(hmmSpec, { report: true });
  const reset = env.reset(11) as EnvReset;
  const ask = async (policy: ReturnType<typeof oraclePolicy>) => {
    const [completion] = await policy.complete({ messages: [], tools: reset.tools, maxTokens: 64, temperature: 0, seed: 5, view: env });
    const parsed = parseCompletion(completion, reset.tools);
    assert.equal(parsed.error, null);
    return parsed.calls[0].arguments;
  };
  const f = env.oracle!().forecasts!;
  const oracle = await ask(oraclePolicy());
  assert.deepEqual(oracle.p_state, { A: f.p_state_A, B: f.p_state_B });
  const random = (await ask(randomPolicy())).p_state as Record<string, number>;
  assert.ok(Math.abs(random.A + random.B - 1) < 1e-12 && random.A !== f.p_state_A);
  // the exact action distribution stays over plain actions
  assert.deepEqual(oraclePolicy().distribution!(env), [{ action: env.oracle!().action, p: 1 }]);
});
