/** `--env-opt` pairs: parsed into typed values, and given back as flags for the options that differ from an env's defaults. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hmmSpec } from '../../src/envs/hmm/spec.ts';
import { envOptionFlags, parseEnvOptionPairs, resolveEnvOptions } from '../../src/envs/options.ts';

test('the flags of non-default options parse back to the same options', () => {
  const pairs = ['ownSignals=fixed', 'stayPercent=[70,80]', 'horizon=12', 'reveal=true', 'states=2'];
  const options = resolveEnvOptions(hmmSpec, parseEnvOptionPairs(pairs));
  const flags = envOptionFlags(hmmSpec, options);
  // states=2 is the default, so it is left out; the rest sorted by name.
  assert.deepEqual(flags, ['--env-opt horizon=12', '--env-opt ownSignals=fixed', '--env-opt reveal=true', '--env-opt stayPercent=[70,80]']);
  const again = resolveEnvOptions(hmmSpec, parseEnvOptionPairs(flags.map((f) => f.slice('--env-opt '.length))));
  assert.deepEqual(again, options);
  assert.deepEqual(envOptionFlags(hmmSpec, resolveEnvOptions(hmmSpec, {})), []);
});
