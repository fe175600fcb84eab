/**
 * Registers `--policy openai:MODEL` with the policy resolver: a remote OpenAI-compatible server at
 * `--base-url` (or OPENAI_BASE_URL), key from `--api-key` or OPENAI_API_KEY; `--tokenizer DIR` re-tokenises
 * answers the server reports no token ids for.
 */
import { UsageError } from '../core/errors.ts';
import { registerPolicyResolver } from './resolve.ts';

registerPolicyResolver(
  'openai',
  async (model, context) => {
    if (model.length === 0) throw new UsageError('--policy openai:MODEL needs a model name, e.g. openai:Qwen/Qwen3-0.6B');
    const baseURL = context.baseUrl ?? process.env.OPENAI_BASE_URL;
    if (!baseURL) throw new UsageError(`--policy openai:${model} needs --base-url URL (or OPENAI_BASE_URL), e.g. http://127.0.0.1:8321/v1`);
    try {
      new URL(baseURL);
    } catch {
      throw new UsageError(`--base-url: not a URL: ${JSON.stringify(baseURL)}`);
    }
    const tokenizer = context.tokenizer === undefined ? undefined : (await import('./openai-retokenize.ts')).loadRetokenizerAssets(context.tokenizer);
    const { OpenAIPolicy, serverContextLength } = await import('./openai.ts');
    const apiKey = context.apiKey ?? process.env.OPENAI_API_KEY;
    return new OpenAIPolicy({ model, baseURL, apiKey, tokenizer, contextLength: await serverContextLength(baseURL, apiKey, model) });
  },
  'openai:MODEL (with --base-url)',
);
