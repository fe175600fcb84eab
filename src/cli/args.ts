/** Flag parsers that turn a bad value into a UsageError naming the flag and what would be valid. */
import { UsageError } from '../core/errors.ts';

export function intFlag(flag: string, min: number, max: number) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new UsageError(`${flag}: expected an integer in [${min}, ${max}], got ${JSON.stringify(raw)}`);
    }
    return value;
  };
}

export function numberFlag(flag: string, min: number, max: number) {
  return (raw: string): number => {
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
      throw new UsageError(`${flag}: expected a number in [${min}, ${max}], got ${JSON.stringify(raw)}`);
    }
    return value;
  };
}

/** Accumulates a repeatable flag (`--env-opt a=1 --env-opt b=2`). */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
