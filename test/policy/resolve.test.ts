import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { UsageError } from '../../src/core/errors.ts';
import { blackjackSpec } from '../../src/envs/blackjack/spec.ts';
import type { EnvSpec } from '../../src/envs/env.ts';
import { nimSpec } from '../../src/envs/nim/spec.ts';
import { registerPolicyResolver, resolvePolicy, validPolicyForms, type PolicyContext } from '../../src/policy/resolve.ts';
import { CounterEnv } from '../agent/counter-env.ts';

const blackjack: PolicyContext = { spec: blackjackSpec, options: blackjackSpec.options.parse({}) };
const nim: PolicyContext = { spec: nimSpec, options: nimSpec.options.parse({}) };

const usage = (pattern: RegExp) => (error: unknown) => error instanceof UsageError && pattern.test(error.message);

describe('resolvePolicy', () => {
  it('resolves the scripted baselines by name', async () => {
    for (const name of ['random', 'oracle', 'always-stick', 'stick-at-17', 'stick-at-2', 'stick-at-21']) {
      assert.equal((await resolvePolicy(name, blackjack)).name, name);
    }
    assert.equal((await resolvePolicy('random', nim)).name, 'random');
  });

  it('stick-at-N needs an integer N in 2..21, named in a UsageError about --policy', async () => {
    for (const name of ['stick-at-1', 'stick-at-22', 'stick-at-x', 'stick-at-17.5', 'stick-at-', 'stick-at--3']) {
      await assert.rejects(resolvePolicy(name, blackjack), usage(/^--policy .*N an integer from 2 to 21.*valid forms: random, oracle, stick-at-N/));
    }
  });

  it('blackjack-only policies refuse another env', async () => {
    await assert.rejects(resolvePolicy('stick-at-17', nim), usage(/plays blackjack only, not env 'nim'/));
    await assert.rejects(resolvePolicy('always-stick', nim), usage(/plays blackjack only/));
  });

  it('oracle refuses an env without one', async () => {
    const spec: EnvSpec = {
      name: 'plain',
      description: '',
      kind: 'outcome',
      options: z.object({}),
      create: () => Object.assign(new CounterEnv(), { oracle: undefined }),
      instructions: () => '',
    };
    await assert.rejects(resolvePolicy('oracle', { spec, options: {} }), usage(/env 'plain' has no oracle/));
  });

  it('unknown names and prefixes list the valid forms', async () => {
    await assert.rejects(resolvePolicy('greedy', blackjack), usage(/unknown policy; valid forms: random, oracle/));
    await assert.rejects(resolvePolicy('nope:x', blackjack), usage(/unknown policy prefix 'nope:'/));
  });

  it('registered prefixes resolve with the rest of the name and the context', async () => {
    let seen: [string, string] | null = null;
    registerPolicyResolver(
      'testing',
      (rest, context) => {
        seen = [rest, context.spec?.name ?? 'no env'];
        return { name: `testing:${rest}`, contextLength: 8, complete: async () => [] };
      },
      'testing:THING[@STEP]',
    );
    const policy = await resolvePolicy('testing:dir/x@3', blackjack);
    assert.equal(policy.name, 'testing:dir/x@3');
    assert.deepEqual(seen, ['dir/x@3', 'blackjack']);
    assert.ok(validPolicyForms().includes('testing:THING[@STEP]'));
    await assert.rejects(resolvePolicy('other:x', blackjack), usage(/testing:THING\[@STEP\]/));
    assert.throws(() => registerPolicyResolver('testing', () => policy), /already registered/);
    assert.throws(() => registerPolicyResolver('Bad Prefix', () => policy), /must be lowercase/);
  });
});
