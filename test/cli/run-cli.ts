/** Runs the real `spindle` bin as a child process in a scratch folder. */
import { spawn, spawnSync } from 'node:child_process';
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

/** Runs the bin and sends it SIGINT once its stderr so far matches `when`; resolves when it has exited. */
export function runCliInterrupted(args: string[], cwd: string, when: RegExp): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, CI: '1' } });
    let stderr = '';
    let sent = false;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!sent && when.test(stderr)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    child.stdout.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}
