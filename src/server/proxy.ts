/**
 * The recording proxy: an OpenAI-compatible endpoint that forwards `/v1/chat/completions` (plain and
 * streamed) and `/v1/models` to an upstream and records every call as a turn of the trajectory the
 * agent names (proxy-naming.ts). `POST /trajectories/{id}/reward` finishes and scores one; with a
 * judge, `POST /groups/{taskId}/judge` scores a task's group relative to each other.
 *
 * Latency: the request body is forwarded as received (no re-serialisation unless token ids are
 * requested), the response is sent before anything is recorded, and store writes are queued
 * after it (trajectory-recorder.ts). fetch's shared undici pool keeps upstream connections alive.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { yieldToEventLoop } from '../core/event-loop.ts';
import { z } from 'zod';
import { describeZodError } from '../core/schemas.ts';
import type { GroupRewardPart } from '../rewards/group-reward.ts';
import type { Store } from '../store/store.ts';
import { recordChoices, type WireResponse } from './proxy-completion.ts';
import { openAiError, ProxyRequestError } from './proxy-errors.ts';
import { errorMessageOf, forwardHeaders, returnedHeaders, upstreamUrl } from './proxy-forward.ts';
import { toCallSampling, toMessages, toToolSpecs, parseChatRequest } from './proxy-messages.ts';
import { callNaming, checkId } from './proxy-naming.ts';
import { SseAccumulator } from './proxy-stream.ts';
import { TrajectoryRecorder, type UpstreamFailure } from './trajectory-recorder.ts';

export interface ProxyOptions {
  /** The upstream's OpenAI base URL, `/v1` included (e.g. http://127.0.0.1:8000/v1). */
  upstream: string;
  store: Store;
  runId: string;
  host?: string;
  port?: number;
  /** Largest request body accepted, in bytes. */
  bodyLimit?: number;
  /** Ask the upstream for token ids and logprobs (vLLM `return_token_ids`, `logprobs`) when the agent did not. */
  requestTokenIds?: boolean;
  /** Scores a task's group on `POST /groups/{taskId}/judge` (an LLM judge, judgeRewardPart). */
  judge?: GroupRewardPart;
  onError?: (error: Error) => void;
}

export interface RunningProxy {
  url: string;
  app: FastifyInstance;
  recorder: TrajectoryRecorder;
  /** Stops accepting requests and waits for queued store writes. */
  close(): Promise<void>;
}

export const DEFAULT_BODY_LIMIT = 32 * 1024 * 1024;

/** A JSON body kept as received (forwarded byte for byte) next to its parsed value. */
interface JsonBody {
  raw: string;
  value: unknown;
}

const rewardSchema = z.strictObject({
  reward: z.number(),
  parts: z.record(z.string(), z.number()).optional(),
});

const PREFIXES = ['', '/t/:trajectoryId', '/t/:trajectoryId/task/:taskId'];

type Params = { trajectoryId?: string; taskId?: string };

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const app = buildProxy(options);
  const address = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8322 });
  return {
    url: address,
    app,
    recorder: app.recorder,
    async close() {
      await app.close();
      // Calls answered last are recorded on the next turn of the event loop (see `record` below).
      await yieldToEventLoop();
      await app.recorder.flush();
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    recorder: TrajectoryRecorder;
  }
}

export function buildProxy(options: ProxyOptions): FastifyInstance {
  const onError = options.onError ?? ((e: Error) => process.stderr.write(`spindle proxy: ${e.message}\n`));
  const recorder = new TrajectoryRecorder({ store: options.store, runId: options.runId, onError });
  const app = Fastify({ bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT, logger: false });
  app.decorate('recorder', recorder);

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const raw = body as string;
    try {
      done(null, { raw, value: JSON.parse(raw) } satisfies JsonBody);
    } catch (e) {
      done(new ProxyRequestError(400, `the request body is not valid JSON: ${(e as Error).message}`), undefined);
    }
  });

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, _request, reply) => {
    if (error instanceof ProxyRequestError) return reply.code(error.statusCode).send(openAiError(error.message, 'invalid_request_error', null, error.param));
    const status = error.statusCode ?? 500;
    if (status === 413) return reply.code(413).send(openAiError(`the request body is over the ${options.bodyLimit ?? DEFAULT_BODY_LIMIT}-byte limit`, 'invalid_request_error', 'request_too_large'));
    if (status < 500) return reply.code(status).send(openAiError(error.message, 'invalid_request_error', error.code ?? null));
    onError(error);
    return reply.code(500).send(openAiError(`proxy error: ${error.message}`, 'server_error'));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(openAiError(`no route ${request.method} ${request.url.split('?')[0]}; use /v1/chat/completions, /t/{trajectoryId}/v1/..., or POST /trajectories/{id}/reward`, 'invalid_request_error', 'not_found'));
  });

  for (const prefix of PREFIXES) {
    app.post<{ Params: Params }>(`${prefix}/v1/chat/completions`, (request, reply) => chat(options, recorder, onError, request, reply));
    app.get(`${prefix}/v1/models`, (request, reply) => models(options, request, reply));
  }

  app.post<{ Params: { id: string } }>('/trajectories/:id/reward', async (request, reply) => {
    const id = checkId(request.params.id, 'id');
    const parsed = rewardSchema.safeParse((request.body as JsonBody | undefined)?.value);
    if (!parsed.success) throw new ProxyRequestError(400, describeZodError(parsed.error));
    const t = await recorder.reward(id, parsed.data.reward, parsed.data.parts);
    return reply.send({ id: t.id, runId: t.runId, groupId: t.groupId, reward: t.reward, rewardParts: t.rewardParts, turns: t.turns.length, status: t.status });
  });

  app.post<{ Params: { taskId: string } }>('/groups/:taskId/judge', async (request, reply) => {
    const taskId = checkId(request.params.taskId, 'taskId');
    if (!options.judge) throw new ProxyRequestError(404, 'no judge: start the proxy with --judge POLICY to score groups');
    const { groupId, score, trajectories } = await recorder.scoreGroup(taskId, options.judge);
    return reply.send({
      taskId,
      groupId,
      part: options.judge.name,
      status: score.status,
      ...(score.status === 'unscored' ? { reason: score.reason } : {}),
      trajectories: trajectories.map((t) => ({ id: t.id, reward: t.reward, rewardParts: t.rewardParts, status: t.status })),
    });
  });
  return app;
}

async function models(options: ProxyOptions, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  let res: Response;
  try {
    res = await fetch(upstreamUrl(options.upstream, '/models'), { headers: forwardHeaders(request.headers, false) });
  } catch (e) {
    return reply.code(502).send(openAiError(`upstream unreachable: ${causeOf(e)}`, 'upstream_error'));
  }
  return reply
    .code(res.status)
    .header('content-type', res.headers.get('content-type') ?? 'application/json')
    .send(await res.text());
}

function causeOf(e: unknown): string {
  const err = e as Error & { cause?: Error };
  return err.cause?.message ?? err.message ?? String(e);
}

async function chat(
  options: ProxyOptions,
  recorder: TrajectoryRecorder,
  onError: (e: Error) => void,
  request: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const naming = callNaming({ params: request.params, headers: request.headers });
  const body = request.body as JsonBody | undefined;
  if (!body) throw new ProxyRequestError(400, "the request body must be JSON with 'content-type: application/json'");
  const chatRequest = parseChatRequest(body.value);
  let raw = body.raw;
  if (options.requestTokenIds) {
    const value = body.value as Record<string, unknown>;
    raw = JSON.stringify({ ...value, return_token_ids: true, logprobs: value.logprobs ?? true });
  }
  const record = (latencyMs: number, streamed: boolean, response: WireResponse | null, failure: UpstreamFailure | null): void => {
    // After the response: the client is not kept waiting for conversion or the store.
    setImmediate(() => {
      const call = {
        naming,
        model: chatRequest.model,
        messages: toMessages(chatRequest),
        tools: toToolSpecs(chatRequest),
        sampling: toCallSampling(chatRequest),
        latencyMs,
        streamed,
        choices: response ? recordChoices(response, chatRequest.model) : [],
        failure,
      };
      recorder.record(call).catch((e: unknown) => onError(e instanceof Error ? e : new Error(String(e))));
    });
  };
  // Tool names are checked before forwarding so a call that cannot be recorded is refused.
  toToolSpecs(chatRequest);

  const started = performance.now();
  const abort = new AbortController();
  let res: Response;
  try {
    res = await fetch(upstreamUrl(options.upstream, '/chat/completions'), {
      method: 'POST',
      headers: forwardHeaders(request.headers, true),
      body: raw,
      signal: abort.signal,
    });
  } catch (e) {
    const message = `upstream unreachable: ${causeOf(e)}`;
    record(performance.now() - started, false, null, { status: null, message });
    return reply.code(502).send(openAiError(message, 'upstream_error'));
  }
  const contentType = res.headers.get('content-type') ?? 'application/json';
  if (res.ok && contentType.startsWith('text/event-stream') && res.body) {
    return relayStream(res, reply, abort, (response, failure) => record(performance.now() - started, true, response, failure));
  }
  const text = await res.text();
  const latencyMs = performance.now() - started;
  reply.code(res.status).headers(returnedHeaders(res.headers)).header('content-type', contentType).send(text);
  if (!res.ok) {
    record(latencyMs, false, null, { status: res.status, message: errorMessageOf(text) });
  } else {
    let response: WireResponse | null = null;
    try {
      response = JSON.parse(text) as WireResponse;
    } catch {
      // recorded as a failure below: the agent got the body as sent
    }
    record(latencyMs, false, response, response ? null : { status: res.status, message: 'the upstream answered with a body that is not JSON' });
  }
  return reply;
}

/** Passes the upstream's SSE bytes through as they come, accumulating them for the record. */
async function relayStream(
  res: Response,
  reply: FastifyReply,
  abort: AbortController,
  done: (response: WireResponse | null, failure: UpstreamFailure | null) => void,
): Promise<FastifyReply> {
  reply.hijack();
  const out = reply.raw;
  out.writeHead(res.status, { ...returnedHeaders(res.headers), 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const acc = new SseAccumulator();
  let clientGone = false;
  out.on('close', () => {
    if (!out.writableFinished) {
      clientGone = true;
      abort.abort();
    }
  });
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      out.write(chunk);
      acc.push(chunk);
    }
    out.end();
    done(acc.response(), null);
  } catch (e) {
    const message = clientGone ? 'the client disconnected mid-stream' : `the upstream stream broke: ${causeOf(e)}`;
    if (!out.writableEnded) out.end();
    // A cut-off answer is not what the upstream meant to sample: recorded as a failed call.
    done(null, { status: null, message });
  }
  return reply;
}

