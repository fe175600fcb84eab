import { trainPresetOf } from '../../envs/env.ts';
import { listEnvs } from '../../envs/registry.ts';
import { makeOutput, table } from '../output.ts';

export function envsCommand(opts: { json?: boolean }): void {
  const out = makeOutput(!!opts.json);
  const envs = listEnvs().map((spec) => {
    const defaults = spec.options.safeParse({});
    return {
      name: spec.name,
      kind: spec.kind,
      description: spec.description,
      defaultOptions: defaults.success ? defaults.data : null,
      exact: { optimalReturn: !!spec.exact?.optimalReturn, policyReturn: !!spec.exact?.policyReturn },
      baselines: Object.fromEntries(Object.entries(spec.baselines ?? {}).map(([name, b]) => [name, b.description])),
      trainPreset: defaults.success ? trainPresetOf(spec, defaults.data) : typeof spec.train === 'function' ? null : (spec.train ?? {}),
    };
  });
  out.line(table(['env', 'kind', 'description'], envs.map((e) => [e.name, e.kind, e.description])));
  out.line();
  out.line(`Policies for every env: random, oracle. Blackjack: stick-at-N, always-stick.`);
  for (const e of envs) for (const [name, description] of Object.entries(e.baselines)) out.line(`${e.name}: ${name}: ${description}`);
  out.line();
  out.line('Options: --env-opt key=value (see each env\'s defaults and its spindle train preset with --json). A user env: --env ./path/to/my-env.ts');
  out.result({ envs });
}
