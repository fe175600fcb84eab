/**
 * Where a checkpoint keeps its chat template, in the order transformers reads them:
 * `chat_template.jinja`, then `chat_template.json` ({"chat_template": ...}), then
 * `tokenizer_config.json`'s `chat_template` (a string, or a list of {name, template} with "default").
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../core/errors.ts';

function fromConfigValue(value: unknown, label: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const named = value.find((entry) => (entry as { name?: unknown })?.name === 'default') as { template?: unknown } | undefined;
    if (named && typeof named.template === 'string') return named.template;
    throw new UsageError(`${label}: chat_template is a list without a "default" entry`);
  }
  throw new UsageError(`${label}: chat_template must be a string or a list of {name, template}`);
}

/** The chat template source of a checkpoint folder, or null when it has none. */
export function readChatTemplateSource(dir: string, tokenizerConfig: Record<string, unknown>): string | null {
  const jinja = join(dir, 'chat_template.jinja');
  if (existsSync(jinja)) return readFileSync(jinja, 'utf8');
  const json = join(dir, 'chat_template.json');
  if (existsSync(json)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(json, 'utf8'));
    } catch (error) {
      throw new UsageError(`${json}: not valid JSON (${(error as Error).message})`);
    }
    return fromConfigValue((parsed as { chat_template?: unknown })?.chat_template, json);
  }
  return fromConfigValue(tokenizerConfig.chat_template, join(dir, 'tokenizer_config.json'));
}
