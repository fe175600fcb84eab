/** Parses `--env-opt key=value` pairs and validates them against an env's options schema. */
import { canonicalJson } from '../core/canonical.ts';
import { describeZodError } from '../core/schemas.ts';
import { UsageError } from '../core/errors.ts';
import type { EnvSpec } from './env.ts';

/** `true`, `false`, numbers and JSON arrays/objects are parsed; anything else stays a string. */
function parseValue(raw: string): unknown {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw !== '' && !Number.isNaN(Number(raw))) return Number(raw);
  if (/^[[{]/.test(raw)) {
    try {
      return JSON.parse(raw);
    } catch {
      throw new UsageError(`--env-opt value ${JSON.stringify(raw)} looks like JSON but does not parse`);
    }
  }
  return raw;
}

export function parseEnvOptionPairs(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env-opt ${JSON.stringify(pair)}: expected key=value`);
    out[pair.slice(0, eq)] = parseValue(pair.slice(eq + 1));
  }
  return out;
}

/** Validates raw options against the env's schema; unknown keys and bad values are usage errors naming the field. */
export function resolveEnvOptions<O extends Record<string, unknown>>(spec: EnvSpec<O>, raw: Record<string, unknown>): O {
  const result = spec.options.safeParse(raw);
  if (!result.success) {
    throw new UsageError(`invalid options for env '${spec.name}': ${describeZodError(result.error, 'env-opt')}`);
  }
  return result.data;
}

/** The `--env-opt key=value` flags that give `options` where they differ from the env's defaults: for a command line a user can paste. */
export function envOptionFlags<O extends Record<string, unknown>>(spec: EnvSpec<O>, options: O): string[] {
  const defaults = resolveEnvOptions(spec, {});
  return Object.keys(options)
    .filter((key) => canonicalJson(options[key]) !== canonicalJson(defaults[key]))
    .sort()
    .map((key) => {
      const value = options[key];
      return `--env-opt ${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`;
    });
}
