/** Checking records on their way into the store and out of it, with errors that name the record. */
import type { z } from 'zod';
import { describeZodError } from '../core/schemas.ts';
import { CorruptRecordError, StoreInputError } from './errors.ts';

/** Validates a record handed to the store; `what` names it in the error (`trajectories[2] (id t_1)`). */
export function checkInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new StoreInputError(`${what} is invalid: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * JSON text of a value whose type leaves numbers unchecked (options, config, info): JSON would
 * silently store NaN and Infinity as null, so they are refused instead.
 */
export function toJson(value: unknown, what: string): string {
  return JSON.stringify(value, (key, v: unknown) => {
    if (typeof v === 'number' && !Number.isFinite(v)) {
      throw new StoreInputError(`${what}: field ${JSON.stringify(key)} is ${v}; stored JSON cannot hold NaN or Infinity`);
    }
    if (typeof v === 'bigint') throw new StoreInputError(`${what}: field ${JSON.stringify(key)} is a bigint; use a number or a string`);
    return v;
  });
}

/** Parses a JSON column of a stored row. */
export function readJson(table: string, key: string, column: string, text: unknown): unknown {
  if (typeof text !== 'string') throw new CorruptRecordError(table, key, `column ${column} holds ${typeof text}, not JSON text`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CorruptRecordError(table, key, `column ${column} is not valid JSON (${(error as Error).message})`);
  }
}

/** Validates a record rebuilt from a stored row. */
export function readRecord<T>(schema: z.ZodType<T>, table: string, key: string, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new CorruptRecordError(table, key, describeZodError(parsed.error));
  return parsed.data;
}

/** JSON with object keys sorted, so two equal records compare equal as text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
