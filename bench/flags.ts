/** A benchmark's `--name value` flag, or the fallback when it is absent. */
export function flag(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = args[i + 1];
  if (value === undefined) throw new Error(`--${name} needs a value`);
  return value;
}
