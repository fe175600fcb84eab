/** `--config FILE`: a train config read as JSON; a missing file or bad JSON is a UsageError naming it. */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.ts';

export function readConfigFile(path: string): unknown {
  const full = resolve(path);
  if (!existsSync(full)) throw new UsageError(`--config ${path}: no such file`);
  try {
    return JSON.parse(readFileSync(full, 'utf8'));
  } catch (error) {
    throw new UsageError(`--config ${path}: not valid JSON (${(error as Error).message})`);
  }
}
