/** Errors the store raises, each naming the file, table or record at fault. */
import { UsageError } from '../core/errors.ts';

export type RefusalReason = 'not_sqlite' | 'corrupt' | 'newer_schema' | 'foreign';

/**
 * The database file cannot be used and was left exactly as it was. A UsageError, because the fix is
 * the user's: point Spindle at another file, restore a backup, or upgrade Spindle.
 */
export class DatabaseRefusedError extends UsageError {
  readonly reason: RefusalReason;
  readonly path: string;

  constructor(path: string, reason: RefusalReason, message: string) {
    super(`${message} The file ${path} was left unchanged.`);
    this.name = 'DatabaseRefusedError';
    this.reason = reason;
    this.path = path;
  }
}

/** A stored row does not hold a valid record (damaged file, or written by something else). */
export class CorruptRecordError extends Error {
  readonly table: string;
  readonly key: string;

  constructor(table: string, key: string, problem: string) {
    super(`stored row ${key} in table ${table} is unreadable: ${problem}`);
    this.name = 'CorruptRecordError';
    this.table = table;
    this.key = key;
  }
}

/** A record handed to the store is invalid, refers to a missing record, or conflicts with a stored one. */
export class StoreInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreInputError';
  }
}
