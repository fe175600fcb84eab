/** Starts `spindle serve` as a real child process on a free loopback port with a tiny checkpoint the test writes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { saveTinyModel, tinyModel } from '../eval/tiny-checkpoint.ts';
import { BIN } from '../cli/run-cli.ts';
import { tempDir } from '../fixtures/temp-dir.ts';

export interface ServeProcess {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  child: ChildProcess;
  stderr: () => string;
  stop: () => Promise<void>;
}

/** A tiny blackjack-tokenizer checkpoint (context 1024) in a scratch folder. */
export function tinyCheckpointDir(seed = 3): string {
  const dir = join(tempDir('spindle-serve-'), 'tiny');
  saveTinyModel(dir, tinyModel(seed));
  return dir;
}

export async function startServe(args: string[]): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--threads', '1', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`spindle serve did not start in 60 s: ${err}`)), 60_000);
    child.stderr!.on('data', (d: string) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`spindle serve exited with ${code}: ${err}`));
    });
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  return { url, child, stderr: () => err, stop };
}
