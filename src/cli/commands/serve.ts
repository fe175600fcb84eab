/** `spindle serve`: an OpenAI-compatible server for the embedded model or a checkpoint, until SIGINT/SIGTERM. */
import { startServer } from '../../server/serve.ts';

export interface ServeFlags {
  model?: string;
  host: string;
  port: number;
  threads?: number;
  bodyLimit?: number;
  reloadEvery?: number;
  db?: string;
}

export async function serveCommand(flags: ServeFlags): Promise<void> {
  const server = await startServer({
    model: flags.model,
    host: flags.host,
    port: flags.port,
    threads: flags.threads,
    bodyLimit: flags.bodyLimit,
    reloadEveryMs: flags.reloadEvery === undefined ? undefined : flags.reloadEvery * 1000,
    db: flags.db,
    warn: (line) => process.stderr.write(`${line}\n`),
  });
  const { modelId, policy } = server.model;
  // Tests and scripts read the bound URL from this line (port 0 picks a free port).
  process.stderr.write(`spindle serve: listening on ${server.url} (model ${modelId}, policy version ${policy.policyVersion})\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
}
