/** Finds an env by built-in name or loads a user's env module from a path, checking it satisfies the contract. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { UsageError } from '../core/errors.ts';
import { describeZodError } from '../core/schemas.ts';
import { isBuiltinPolicyName, POLICY_NAME } from '../policy/resolve.ts';
import { parseTrainConfig } from '../train/train-config.ts';
import { builtinEnvs } from './builtin.ts';
import { trainPresetOf, type Env, type EnvSpec } from './env.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyEnvSpec = EnvSpec<any>;

const userEnvs = new Map<string, AnyEnvSpec>();

const isFn = (v: unknown) => typeof v === 'function';

/** The shape an EnvSpec must have; checked at the edge because user modules are outside input. */
const envSpecShape = z.object({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . or -'),
  description: z.string(),
  kind: z.enum(['outcome', 'dense']),
  options: z.custom<z.ZodType>((v) => typeof (v as { safeParse?: unknown })?.safeParse === 'function', {
    message: 'must be a zod schema (import { z } from "spindle")',
  }),
  create: z.custom<() => Env>(isFn, { message: 'must be a function (options) => Env' }),
  instructions: z.custom(isFn, { message: 'must be a function (options) => string' }),
  rewards: z.custom(isFn, { message: 'must be a function' }).optional(),
  exact: z
    .object({
      optimalReturn: z.custom(isFn, { message: 'must be a function' }).optional(),
      policyReturn: z.custom(isFn, { message: 'must be a function' }).optional(),
    })
    .optional(),
  train: z.union([z.record(z.string(), z.unknown()), z.custom(isFn)], { message: 'must be a partial train config or a function (options) => one' }).optional(),
  // Names a policy takes (`--policy NAME`): not a built-in one, no prefix form.
  baselines: z
    .record(z.string(), z.object({ description: z.string(), choose: z.custom(isFn, { message: 'must be a function (view) => Action' }) }))
    .superRefine((baselines, ctx) => {
      for (const name of Object.keys(baselines)) {
        if (!POLICY_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'a baseline name is lowercase letters, digits and -' });
        else if (isBuiltinPolicyName(name)) {
          ctx.addIssue({ code: 'custom', path: [name], message: 'a baseline may not take a built-in policy name' });
        }
      }
    })
    .optional(),
});

const envShape = z.object({
  kind: z.enum(['outcome', 'dense']),
  invalidAction: z.object({
    mode: z.enum(['end', 'retry']),
    penalty: z.number().refine(Number.isFinite, 'must be finite'),
    maxRetries: z.number().int().min(0),
  }),
  reset: z.custom(isFn, { message: 'must be a function (seed) => EnvReset' }),
  step: z.custom(isFn, { message: 'must be a function (action) => EnvStep' }),
  validate: z.custom(isFn, { message: 'must be a function (action) => string | null' }),
  legalActions: z.custom(isFn, { message: 'must be a function () => Action[]' }),
  state: z.custom(isFn, { message: 'must be a function () => object' }),
});

/** Throws a UsageError naming the field when `spec` (and an env it creates) does not satisfy the contract. */
export function checkEnvSpec(spec: unknown, source: string): AnyEnvSpec {
  const parsed = envSpecShape.safeParse(spec);
  if (!parsed.success) throw new UsageError(`${source} does not export a valid EnvSpec: ${describeZodError(parsed.error)}`);
  const checked = spec as AnyEnvSpec;
  const defaults = checked.options.safeParse({});
  // A preset that depends on the options is checked for the default ones (and for the run's own by spindle train).
  if (checked.train !== undefined && (typeof checked.train !== 'function' || defaults.success)) {
    try {
      parseTrainConfig(trainPresetOf(checked, defaults.data ?? {}));
    } catch (err) {
      throw new UsageError(`${source}: its train preset is not a valid train config: ${(err as Error).message}`);
    }
  }
  if (defaults.success) {
    let env: unknown;
    try {
      env = checked.create(defaults.data);
    } catch (err) {
      throw new UsageError(`${source}: create(defaultOptions) threw: ${(err as Error).message}`);
    }
    const envParsed = envShape.safeParse(env);
    if (!envParsed.success) throw new UsageError(`${source}: create() returned an invalid Env: ${describeZodError(envParsed.error, 'env')}`);
  }
  return checked;
}

/** Registers a user env in code, so `--env NAME` finds it. */
export function registerEnv(spec: AnyEnvSpec): void {
  const checked = checkEnvSpec(spec, `env '${(spec as { name?: string })?.name}'`);
  if (builtinEnvs.some((e) => e.name === checked.name)) throw new UsageError(`env name '${checked.name}' is a built-in env`);
  userEnvs.set(checked.name, checked);
}

export function listEnvs(): AnyEnvSpec[] {
  return [...builtinEnvs, ...userEnvs.values()];
}

export function isEnvPath(nameOrPath: string): boolean {
  return /^(\.{1,2}[\\/]|\/)/.test(nameOrPath) || /\.(m?[jt]s|cjs)$/.test(nameOrPath);
}

/**
 * `--env NAME` (built-in or registered) or `--env ./path/to/my-env.ts`. A module exports its EnvSpec
 * as the default export or as a named export `env`.
 */
export async function loadEnvSpec(nameOrPath: string): Promise<AnyEnvSpec> {
  if (!isEnvPath(nameOrPath)) {
    const spec = listEnvs().find((e) => e.name === nameOrPath);
    if (!spec) {
      throw new UsageError(
        `--env: unknown env '${nameOrPath}'; built-in envs: ${listEnvs().map((e) => e.name).join(', ')}; or give a path to a module (./my-env.ts)`,
      );
    }
    return spec;
  }
  const file = resolve(nameOrPath);
  if (!existsSync(file)) throw new UsageError(`--env: no such file ${file}`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(`--env: cannot load module ${file}: ${(err as Error).message}`);
  }
  const exported = mod.default ?? mod.env;
  if (exported === undefined) throw new UsageError(`--env: ${file} has no default export and no export named 'env'`);
  return checkEnvSpec(exported, `--env ${nameOrPath}`);
}
