/**
 * `--policy NAME` everywhere: the scripted baselines (`random`, `oracle`, `stick-at-N`, `always-stick`,
 * and the env's own rules, EnvSpec.baselines) and prefixed forms that other modules register
 * (`model:DIR`, `run:RUN[@STEP]`, `openai:MODEL`).
 */
import { UsageError } from '../core/errors.ts';
import type { EnvSpec } from '../envs/env.ts';
import type { Policy } from './policy.ts';
import { alwaysStickPolicy, envBaselinePolicy, oraclePolicy, randomPolicy, stickAtPolicy } from './scripted.ts';

/** The env a policy is resolved for: blackjack-only and oracle policies check they can play it. */
export interface PolicyContext {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec: EnvSpec<any>;
  options: Record<string, unknown>;
  /** The store's database file, for policies found through it (`run:RUN[@STEP]`); default .spindle/spindle.db. */
  db?: string;
  /** Remote policies (`openai:MODEL`): the server's base URL and API key. */
  baseUrl?: string;
  apiKey?: string;
  /** Remote policies: a model folder whose tokenizer and chat template re-tokenise answers without server ids. */
  tokenizer?: string;
}

/** What a prefixed form is resolved with: no env when the policy plays none (an LLM judge). */
export type ResolverContext = Omit<PolicyContext, 'spec' | 'options'> & Partial<Pick<PolicyContext, 'spec' | 'options'>>;

/** Builds the policy for `NAME` in `PREFIX:NAME`; throws a UsageError for a bad NAME. */
export type PolicyResolver = (rest: string, context: ResolverContext) => Policy | Promise<Policy>;

/** The form of a policy name and of a prefix: lowercase letters, digits and -. */
export const POLICY_NAME = /^[a-z][a-z0-9-]*$/;

/** Whether `name` is a scripted policy's own (`random`, `oracle`, Blackjack's `always-stick` and `stick-at-N`), which an env's baseline may not take. */
export function isBuiltinPolicyName(name: string): boolean {
  return name === 'random' || name === 'oracle' || name === 'always-stick' || name.startsWith('stick-at-');
}

const BUILTIN_FORMS = ['random', 'oracle', 'stick-at-N (blackjack, N an integer 2..21)', 'always-stick (blackjack)', "the env's own baselines (spindle envs)"];
const resolvers = new Map<string, { form: string; resolve: PolicyResolver }>();

/** Registers `PREFIX:...` policies; `form` is how the usage message shows it (e.g. `model:DIR`). */
export function registerPolicyResolver(prefix: string, resolve: PolicyResolver, form = `${prefix}:...`): void {
  if (!POLICY_NAME.test(prefix)) throw new Error(`policy prefix '${prefix}' must be lowercase letters, digits or -`);
  if (resolvers.has(prefix)) throw new Error(`policy prefix '${prefix}' is already registered`);
  resolvers.set(prefix, { form, resolve });
}

export function validPolicyForms(): string[] {
  return [...BUILTIN_FORMS, ...[...resolvers.values()].map((r) => r.form)];
}

function unknown(name: string, why: string): UsageError {
  return new UsageError(`--policy ${JSON.stringify(name)}: ${why}; valid forms: ${validPolicyForms().join(', ')}`);
}

function requireBlackjack(name: string, context: PolicyContext): void {
  if (context.spec.name !== 'blackjack') {
    throw new UsageError(`--policy ${name} plays blackjack only, not env '${context.spec.name}'; use random or oracle`);
  }
}

export async function resolvePolicy(name: string, context: PolicyContext): Promise<Policy> {
  const colon = name.indexOf(':');
  if (colon !== -1) {
    const prefix = name.slice(0, colon);
    const resolver = resolvers.get(prefix);
    if (!resolver) throw unknown(name, `unknown policy prefix '${prefix}:'`);
    return resolver.resolve(name.slice(colon + 1), context);
  }
  if (name === 'random') return randomPolicy();
  const baseline = Object.hasOwn(context.spec.baselines ?? {}, name) ? context.spec.baselines![name] : undefined;
  if (baseline) return envBaselinePolicy(name, baseline);
  if (name === 'oracle') {
    const probe = context.spec.create(context.options);
    if (typeof probe.oracle !== 'function') throw new UsageError(`--policy oracle: env '${context.spec.name}' has no oracle`);
    return oraclePolicy();
  }
  if (name === 'always-stick') {
    requireBlackjack(name, context);
    return alwaysStickPolicy();
  }
  if (name.startsWith('stick-at-')) {
    const n = name.slice('stick-at-'.length);
    if (!/^\d+$/.test(n) || Number(n) < 2 || Number(n) > 21) {
      throw unknown(name, `stick-at-N needs N an integer from 2 to 21, got '${n}'`);
    }
    requireBlackjack(name, context);
    return stickAtPolicy(Number(n));
  }
  throw unknown(name, 'unknown policy');
}

/**
 * A policy that plays no env (an LLM judge): only the registered prefixed forms (`openai:MODEL`,
 * `model:DIR`, `run:RUN[@STEP]`); `flag` names the option in errors.
 */
export async function resolveLlmPolicy(name: string, context: ResolverContext, flag: string): Promise<Policy> {
  const colon = name.indexOf(':');
  const resolver = colon === -1 ? undefined : resolvers.get(name.slice(0, colon));
  if (!resolver) {
    throw new UsageError(`${flag} ${JSON.stringify(name)}: needs an LLM policy; valid forms: ${[...resolvers.values()].map((r) => r.form).join(', ')}`);
  }
  return resolver.resolve(name.slice(colon + 1), context);
}
