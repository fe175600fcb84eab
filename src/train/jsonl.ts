/** JSON Lines: one JSON value per line, each checked against a schema on the way out and on the way in. */
import type { z } from 'zod';
import { describeZodError } from '../core/schemas.ts';

/** One line per record; throws naming `${what}.${index}.field` when a record does not fit the schema. */
export function encodeJsonl<S extends z.ZodType>(records: readonly unknown[], schema: S, what: string): string {
  return records
    .map((record, i) => {
      const parsed = schema.safeParse(record);
      if (!parsed.success) throw new Error(`${what}: ${describeZodError(parsed.error, String(i))}`);
      return `${JSON.stringify(record)}\n`;
    })
    .join('');
}

/** Parses every non-blank line; throws naming the line (1-based) and the field when one is not valid. */
export function decodeJsonl<S extends z.ZodType>(text: string, schema: S, what: string): z.output<S>[] {
  const records: z.output<S>[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new Error(`${what} line ${i + 1}: not valid JSON (${(error as Error).message})`, { cause: error });
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new Error(`${what} line ${i + 1}: ${describeZodError(parsed.error)}`);
    records.push(parsed.data);
  });
  return records;
}
