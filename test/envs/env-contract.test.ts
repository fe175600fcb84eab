import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/random.ts';
import { envResetSchema, envStepSchema } from '../../src/core/schemas.ts';
import { builtinEnvs } from '../../src/envs/builtin.ts';
import type { EnvStep } from '../../src/envs/env.ts';
import { checkEnvSpec } from '../../src/envs/registry.ts';

describe('every built-in env follows the contract', () => {
  for (const spec of builtinEnvs) {
    it(`${spec.name}: passes the registry check and random play yields valid resets and steps`, async () => {
      checkEnvSpec(spec, spec.name);
      for (let seed = 0; seed < 20; seed++) {
        const env = spec.create(spec.options.parse({}));
        assert.equal(envResetSchema.safeParse(await env.reset(seed)).success, true);
        const pick = new Rng(seed, 9);
        let done = false;
        for (let steps = 0; !done; steps++) {
          assert.ok(steps < 10_000, `${spec.name} seed ${seed}: random play did not end`);
          const legal = env.legalActions();
          assert.ok(legal.length > 0, `${spec.name}: no legal action before the end`);
          const action = legal[pick.int(legal.length)];
          assert.equal(env.validate(action), null, `${spec.name}: a legal action failed validate()`);
          const s = (await env.step(action)) as EnvStep;
          assert.equal(envStepSchema.safeParse(s).success, true);
          done = s.done || s.truncated;
        }
      }
    });
  }
});
