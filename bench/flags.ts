/** A benchmark's `--name value` flag, or the fallback when it is absent. */
export function flag(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = args[i + 1];
  if (value === undefined) throw new Error(`--${name} needs a value`);
  return value;
}

/** The value of flag `--name` as an integer ≥ min, or an error naming the flag. */
export function integerFlagValue(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${text}`);
  return value;
}

/** A benchmark's `--name N` flag that must be a positive integer, or the fallback when it is absent. */
export function positiveIntFlag(args: string[], name: string, fallback: number): number {
  return integerFlagValue(name, flag(args, name, String(fallback)), 1);
}
