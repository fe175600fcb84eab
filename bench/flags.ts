/** A benchmark's `--name value` flag, or the fallback when it is absent. */
export function flag(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = args[i + 1];
  if (value === undefined) throw new Error(`--${name} needs a value`);
  return value;
}

/** A benchmark's `--name N` flag that must be a positive integer, or the fallback when it is absent. */
export function positiveIntFlag(args: string[], name: string, fallback: number): number {
  const text = flag(args, name, String(fallback));
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${text}`);
  return value;
}
