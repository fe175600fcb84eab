/** Runs the real `spindle` bin as a child process in a scratch folder. */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { tempDir } from '../fixtures/temp-dir.ts';

export const BIN = resolve(import.meta.dirname, '../../bin/spindle.js');

export function scratchDir(): string {
  return tempDir('spindle-cli-');
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The last stdout line parsed as JSON (commands run with --json). */
  json: () => Record<string, unknown>;
}

export function runCli(args: string[], cwd: string): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, CI: '1' } });
  return {
    code: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    json: () => JSON.parse(r.stdout.trim().split('\n').at(-1) ?? 'null'),
  };
}
