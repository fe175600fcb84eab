import { randomUUID } from 'node:crypto';

/** Ids are strings, never object references, so records can cross processes and machines. */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

export function nowIso(): string {
  return new Date().toISOString();
}
