/**
 * `spindle serve` as a library: loads the model, starts the HTTP server, and offers hot reload
 * (`updateWeights` in process, `reloadLatest` / `POST /admin/reload` from the run's newest checkpoint).
 */
import { tree } from '../model/engine.ts';
import { toParams, type Params } from '../model/params.ts';
import { buildApp } from './app.ts';
import { loadServedModel, newerRunCheckpoint, type LoadServedOptions, type ServedModel } from './served-model.ts';

export interface ServeOptions extends LoadServedOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  bodyLimit?: number;
  /** Run sources: look for a newer checkpoint this often (ms) and load it; default off (POST /admin/reload only). */
  reloadEveryMs?: number;
}

export interface SpindleServer {
  /** `http://HOST:PORT` (append /v1 for an OpenAI client's baseURL). */
  url: string;
  model: ServedModel;
  /** New weights from a trainer in this process: later requests sample with them and report `version`. */
  updateWeights(params: Params, version: number): void;
  /** Loads the served run's newest checkpoint when it is newer than the one served. */
  reloadLatest(): Promise<{ reloaded: boolean; policyVersion: number; step: number | null }>;
  close(): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<SpindleServer> {
  const model = await loadServedModel(options);
  const updateWeights = (params: Params, version: number) => model.policy.updateWeights(params, version);
  const source = model.source;
  const reloadLatest =
    source.kind === 'run'
      ? async () => {
          const newer = await newerRunCheckpoint(source, model.step, model.cfg);
          if (newer) {
            const params = toParams(newer.host);
            updateWeights(params, newer.policyVersion);
            tree.dispose(params);
            model.step = newer.step;
          }
          return { reloaded: newer !== null, policyVersion: model.policy.policyVersion, step: model.step };
        }
      : undefined;
  const app = buildApp(model, { bodyLimit: options.bodyLimit, reload: reloadLatest });
  const address = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8321 });
  let watching = false;
  const watch =
    reloadLatest && options.reloadEveryMs
      ? setInterval(() => {
          if (watching) return;
          watching = true;
          reloadLatest()
            .then((r) => r.reloaded && options.warn?.(`spindle serve: loaded step ${r.step} (policy version ${r.policyVersion})`))
            .catch((error: Error) => options.warn?.(`spindle serve: reload failed: ${error.message}`))
            .finally(() => (watching = false));
        }, options.reloadEveryMs)
      : undefined;
  watch?.unref();
  return {
    url: address,
    model,
    updateWeights,
    reloadLatest: reloadLatest ?? (async () => ({ reloaded: false, policyVersion: model.policy.policyVersion, step: model.step })),
    close: async () => {
      clearInterval(watch);
      await app.close();
      await model.policy.close();
    },
  };
}
