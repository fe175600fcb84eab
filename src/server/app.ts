/**
 * The HTTP side of `spindle serve` (fastify): `/v1/chat/completions` (JSON, or SSE streamed token by
 * token as the sampler decodes), `/v1/models`, `POST /admin/reload`. Every error is an OpenAI-style
 * body; one bad request never stops the others.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { UsageError } from '../core/errors.ts';
import type { Params } from '../model/params.ts';
import type { SampledToken, TopLogprobs } from '../model/sampler.ts';
import { POLICY_VERSION_HEADER } from '../policy/openai.ts';
import type { PolicyRequest } from '../policy/policy.ts';
import { toSpindleMessages, toSpindleTools } from './chat-messages.ts';
import { chatCompletionBody, type ResponseSettings } from './chat-response.ts';
import { parseChatRequest } from './chat-schema.ts';
import { ChatStream } from './chat-stream.ts';
import { ApiError, fromFrameworkError } from './errors.ts';
import type { ServedModel } from './served-model.ts';

export interface AppOptions {
  /** Largest accepted request body in bytes (default 4 MiB). */
  bodyLimit?: number;
  /** Default max_tokens when a request sets none (capped by the context left; default 256). */
  defaultMaxTokens?: number;
  /** Loads the newest checkpoint of the served run, if newer; returns the version then served. */
  reload?: () => Promise<{ reloaded: boolean; policyVersion: number; step: number | null }>;
}

export function buildApp(model: ServedModel, options: AppOptions = {}): FastifyInstance {
  const app = Fastify({ bodyLimit: options.bodyLimit ?? 4 * 1024 * 1024, logger: false });
  const version = () => model.policy.policyVersion;

  app.addHook('onSend', async (_request, reply) => {
    // A completion sets the version that sampled it; every other response names the current one.
    if (!reply.hasHeader(POLICY_VERSION_HEADER)) reply.header(POLICY_VERSION_HEADER, String(version()));
  });
  app.setErrorHandler((error, _request, reply) => {
    const api = error instanceof ApiError ? error : fromFrameworkError(error as { statusCode?: number; code?: string; message: string });
    void reply.status(api.status).send(api.body());
  });
  app.setNotFoundHandler((request, reply) => {
    const api = new ApiError(404, `no route ${request.method} ${request.url}`, 'not_found_error', null, 'not_found');
    void reply.status(404).send(api.body());
  });

  app.get('/v1/models', async () => ({
    object: 'list',
    data: [{ id: model.modelId, object: 'model', created: 0, owned_by: 'spindle', max_model_len: model.cfg.maxPositionEmbeddings, policy_version: version() }],
  }));

  app.post('/admin/reload', async () => {
    if (!options.reload) throw new ApiError(400, 'this server does not serve a run (start it with --model run:RUN); nothing to reload', 'invalid_request_error', null, 'not_reloadable');
    return options.reload();
  });

  app.post('/v1/chat/completions', async (request, reply) => {
    const body = parseChatRequest(request.body);
    if (body.model !== model.modelId) {
      throw new ApiError(404, `The model '${body.model}' does not exist; this server serves '${model.modelId}'`, 'not_found_error', 'model', 'model_not_found');
    }
    const messages = toSpindleMessages(body.messages);
    const tools = toSpindleTools(body.tools);
    const promptIds = model.policy.promptIds(messages, tools);
    const context = model.cfg.maxPositionEmbeddings;
    if (promptIds.length >= context) {
      throw new ApiError(400, `This model's maximum context length is ${context} tokens; the messages have ${promptIds.length} tokens`, 'invalid_request_error', 'messages', 'context_length_exceeded');
    }
    const room = context - promptIds.length;
    const asked = body.max_completion_tokens ?? body.max_tokens ?? null;
    if (asked !== null && asked > room) {
      throw new ApiError(400, `max_tokens ${asked} + the prompt's ${promptIds.length} tokens exceed the context length ${context}`, 'invalid_request_error', 'max_tokens', 'context_length_exceeded');
    }
    const controller = new AbortController();
    // A client that goes away stops its own samples (the sampler ends their rows); the batch goes on.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
    });
    const stop = body.stop == null ? undefined : (typeof body.stop === 'string' ? [body.stop] : body.stop).filter((s) => s.length > 0);
    const n = body.n ?? 1;
    const policyRequest: PolicyRequest = {
      messages,
      tools,
      n,
      maxTokens: asked ?? Math.min(options.defaultMaxTokens ?? 256, room),
      temperature: body.temperature ?? 1,
      ...(body.top_p != null ? { topP: body.top_p } : {}),
      ...(body.top_k != null && body.top_k > 0 ? { topK: body.top_k } : {}),
      ...(stop !== undefined ? { stop } : {}),
      ...(body.seed != null ? { seed: body.seed } : {}),
      signal: controller.signal,
    };
    const settings: ResponseSettings = {
      id: `chatcmpl-${randomUUID()}`,
      created: Math.floor(Date.now() / 1000),
      model: model.modelId,
      tools,
      logprobs: body.logprobs === true,
      tokensAsIds: body.return_tokens_as_token_ids === true,
      tokenIds: body.return_token_ids === true || body.return_tokens_as_token_ids === true,
      tokenizer: model.tokenizer,
    };
    const topLogprobs = body.logprobs === true ? (body.top_logprobs ?? 0) : 0;
    if (body.stream) {
      const stream = new ChatStream(reply.raw, settings, { n, promptIds, includeUsage: body.stream_options?.include_usage === true, stop: stop ?? [] });
      reply.hijack();
      try {
        const completions = await model.policy.complete(policyRequest, { topLogprobs, onStart: (v) => stream.start(v), onToken: (i, t) => stream.token(i, t) });
        stream.end(completions);
      } catch (error) {
        if (controller.signal.aborted) return reply; // nobody to answer
        const api = toApiError(error);
        if (stream.started) stream.fail(api);
        else reply.raw.writeHead(api.status, { 'content-type': 'application/json', [POLICY_VERSION_HEADER]: String(version()) }).end(JSON.stringify(api.body()));
      }
      return reply;
    }
    const tops: TopLogprobs[][] = Array.from({ length: n }, () => []);
    const onToken = topLogprobs > 0 ? (i: number, t: SampledToken) => void tops[i].push(t.top!) : undefined;
    let completions;
    try {
      completions = await model.policy.complete(policyRequest, { topLogprobs, onToken });
    } catch (error) {
      if (controller.signal.aborted) return reply; // nobody to answer
      throw toApiError(error);
    }
    reply.header(POLICY_VERSION_HEADER, String(completions[0]?.policyVersion ?? version()));
    return chatCompletionBody(completions, settings, topLogprobs > 0 ? tops : []);
  });

  return app;
}

/** A request the sampler rejects is the client's error (400); anything else goes to the error handler. */
function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof UsageError) return new ApiError(400, error.message, 'invalid_request_error', null, 'invalid_value');
  return fromFrameworkError(error as { statusCode?: number; code?: string; message: string });
}

/** The in-process side of hot reload, shared by the API, the admin route and trainers. */
export function updateServedWeights(model: ServedModel, params: Params, policyVersion: number): void {
  model.policy.updateWeights(params, policyVersion);
}
