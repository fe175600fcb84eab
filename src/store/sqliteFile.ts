/**
 * Looks at a database file before the store opens it for writing, so a file it must refuse (not
 * SQLite, damaged, another program's, a newer schema) is refused without one byte of it changing:
 * the header is read with plain file reads, and the schema through a connection that only reads.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { DatabaseRefusedError } from './errors.ts';
import { readSchemaState, refuseUnusable } from './migrations.ts';

const SQLITE_MAGIC = 'SQLite format 3\u0000';
const HEADER_BYTES = 100;

function readHeader(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(HEADER_BYTES);
    const read = readSync(fd, header, 0, HEADER_BYTES, 0);
    return header.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

function preview(bytes: Buffer): string {
  return JSON.stringify(bytes.subarray(0, 16).toString('latin1'));
}

/** Resolves when `path` is absent, empty, or a Spindle database this code can migrate; otherwise refuses. */
export function checkDatabaseFile(path: string): void {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new DatabaseRefusedError(path, 'not_sqlite', `${path} is not a regular file.`);
    size = stat.size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  // SQLite treats an empty file as an empty database.
  if (size === 0) return;

  const header = readHeader(path);
  if (header.length < HEADER_BYTES || header.toString('latin1', 0, SQLITE_MAGIC.length) !== SQLITE_MAGIC) {
    throw new DatabaseRefusedError(
      path,
      'not_sqlite',
      `${path} is not a SQLite database (it starts with ${preview(header)}). Point Spindle at another file or move this one away.`,
    );
  }

  let db: Database.Database | undefined;
  try {
    // With no WAL file beside it, a plain connection that only reads leaves nothing behind: closing
    // it removes the empty -wal and -shm it made, and there is nothing to checkpoint. Where a WAL
    // file exists (a process has it open, or one was killed), read-only keeps that WAL out of the file.
    db = new Database(path, { readonly: existsSync(`${path}-wal`), fileMustExist: true });
    refuseUnusable(path, readSchemaState(db));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB')) {
      throw new DatabaseRefusedError(
        path,
        'corrupt',
        `${path} is a damaged SQLite database (${(error as Error).message}). Restore it from a backup or point Spindle at another file.`,
      );
    }
    throw error;
  } finally {
    db?.close();
  }
}
