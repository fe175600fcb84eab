/**
 * `npm run bench -- NAME [--json] [ARGS...]`: runs bench/NAME.ts. A bench that exports
 * `run(args, log)` prints human-readable lines through `log` and returns its figures; with --json
 * they are printed as ONE JSON object on the last stdout line. A bench written as a plain script
 * (no `run` export) just runs, with ARGS as its process.argv.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export type BenchFigures = Record<string, number | string | boolean | null>;
export type BenchRun = (args: string[], log: (line: string) => void) => Promise<BenchFigures>;

const here = dirname(fileURLToPath(import.meta.url));

const EXPORTS_RUN = /export\s+(async\s+)?function\s+run\b|export\s+const\s+run\b/;

/**
 * A bench exports `run` ('reports': it returns figures), or is a plain script that exports nothing
 * ('script'); other modules here are its helpers (flags.ts) and are not benches (null).
 */
function benchKind(name: string): 'reports' | 'script' | null {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name) || name === 'run' || !existsSync(join(here, `${name}.ts`))) return null;
  const text = readFileSync(join(here, `${name}.ts`), 'utf8');
  if (EXPORTS_RUN.test(text)) return 'reports';
  return /^export\s/m.test(text) ? null : 'script';
}

function available(): string[] {
  return readdirSync(here)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .filter((name) => benchKind(name) !== null)
    .sort();
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const [name, ...args] = argv.filter((a) => a !== '--json');
  const kind = name ? benchKind(name) : null;
  if (!name || kind === null) {
    console.error(`usage: npm run bench -- NAME [--json] [ARGS...]; NAME is one of: ${available().join(', ')}`);
    return 2;
  }
  const file = join(here, `${name}.ts`);
  // A plain script runs as it is imported, so tell it apart before importing it.
  if (json && kind === 'script') {
    console.error(`bench '${name}' is a plain script: it reports no figures for --json`);
    return 2;
  }
  process.argv = [process.argv[0], file, ...args];
  const mod = (await import(pathToFileURL(file).href)) as { run?: BenchRun };
  if (typeof mod.run !== 'function') return 0;
  const figures = await mod.run(args, (line) => console.log(line));
  if (json) console.log(JSON.stringify({ bench: name, ...figures }));
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
