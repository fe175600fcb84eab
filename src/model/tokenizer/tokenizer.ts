/**
 * Spindle's tokenizer: a `tokenizer.json` (+ `tokenizer_config.json`) run by @huggingface/tokenizers,
 * the maintained pure-JS port of Hugging Face tokenizers. Real checkpoints (Qwen3) and Spindle's own
 * default tokenizer load through this same code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { UsageError } from '../../core/errors.ts';
import { byteLevelTokenBytes } from './byte-level.ts';

export interface AddedTokenInfo {
  id: number;
  content: string;
  /** Special tokens (`<|im_end|>`) are dropped by `decode(ids, { skipSpecialTokens: true })`. */
  special: boolean;
}

/** The special-token strings a chat template receives (`bos_token`, `eos_token`, ...), as transformers passes them. */
export type SpecialTokensMap = Partial<Record<'bos_token' | 'eos_token' | 'pad_token' | 'unk_token', string>>;

export interface Tokenizer {
  /** Text -> ids. Added tokens in the text (`<|im_start|>`) become their single ids. */
  encode(text: string, options?: { addSpecialTokens?: boolean }): number[];
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  /** The raw bytes token `id` stands for (a byte-level token may hold part of a UTF-8 character). */
  tokenBytes(id: number): Uint8Array;
  /** One more than the largest id (vocabulary plus added tokens). */
  readonly vocabSize: number;
  readonly eosTokenId: number | null;
  readonly padTokenId: number | null;
  readonly bosTokenId: number | null;
  readonly addedTokens: readonly AddedTokenInfo[];
  readonly specialTokensMap: SpecialTokensMap;
}

export type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** tokenizer_config.json writes a special token as a string or as an AddedToken object with `content`. */
function tokenString(config: JsonObject, key: string, label: string): string | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (isObject(value) && typeof value.content === 'string') return value.content;
  throw new UsageError(`${label}: ${key} must be a string or {"content": string}, got ${JSON.stringify(value)}`);
}

class HfBackedTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenId: number | null;
  readonly padTokenId: number | null;
  readonly bosTokenId: number | null;
  readonly addedTokens: readonly AddedTokenInfo[];
  readonly specialTokensMap: SpecialTokensMap;
  private readonly byteLevel: boolean;
  private readonly addedById: Map<number, AddedTokenInfo>;

  constructor(
    private readonly inner: HfTokenizer,
    tokenizerJson: JsonObject,
    config: JsonObject,
    label: string,
  ) {
    const vocab = inner.get_vocab(true);
    let maxId = -1;
    for (const id of vocab.values()) if (id > maxId) maxId = id;
    this.vocabSize = maxId + 1;
    this.addedTokens = [...inner.get_added_tokens_decoder().values()].map((t) => ({ id: t.id, content: t.content, special: t.special }));
    this.addedById = new Map(this.addedTokens.map((t) => [t.id, t]));
    const decoder = tokenizerJson.decoder;
    this.byteLevel = isObject(decoder) && decoder.type === 'ByteLevel';

    const map: SpecialTokensMap = {};
    const idOf = (key: keyof SpecialTokensMap): number | null => {
      const token = tokenString(config, key, label);
      if (token === undefined) return null;
      map[key] = token;
      const id = inner.token_to_id(token);
      if (id === undefined) throw new UsageError(`${label}: ${key} ${JSON.stringify(token)} is not in the vocabulary`);
      return id;
    };
    this.eosTokenId = idOf('eos_token');
    this.padTokenId = idOf('pad_token');
    this.bosTokenId = idOf('bos_token');
    idOf('unk_token');
    this.specialTokensMap = map;
  }

  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    return this.inner.encode(text, { add_special_tokens: options.addSpecialTokens ?? false }).ids;
  }

  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    return this.inner.decode([...ids], { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  tokenToId(token: string): number | undefined {
    return this.inner.token_to_id(token);
  }

  idToToken(id: number): string | undefined {
    return this.inner.id_to_token(id);
  }

  tokenBytes(id: number): Uint8Array {
    const added = this.addedById.get(id);
    if (added) return new TextEncoder().encode(added.content);
    const token = this.inner.id_to_token(id);
    if (token === undefined) throw new RangeError(`token id ${id} is not in the vocabulary`);
    const bytes = this.byteLevel ? byteLevelTokenBytes(token) : null;
    return bytes ?? new TextEncoder().encode(this.decode([id]));
  }
}

/** Builds a tokenizer from parsed `tokenizer.json` and `tokenizer_config.json`; `label` names them in errors. */
export function tokenizerFromJson(tokenizerJson: unknown, tokenizerConfig: unknown, label = 'tokenizer'): Tokenizer {
  if (!isObject(tokenizerJson)) throw new UsageError(`${label}: tokenizer.json must be a JSON object`);
  if (!isObject(tokenizerJson.model) || typeof tokenizerJson.model.type !== 'string') {
    throw new UsageError(`${label}: tokenizer.json has no "model" with a "type"`);
  }
  if (tokenizerJson.added_tokens !== undefined && !Array.isArray(tokenizerJson.added_tokens)) {
    throw new UsageError(`${label}: tokenizer.json "added_tokens" must be a list`);
  }
  const config = tokenizerConfig ?? {};
  if (!isObject(config)) throw new UsageError(`${label}: tokenizer_config.json must be a JSON object`);
  let inner: HfTokenizer;
  try {
    inner = new HfTokenizer(tokenizerJson, config);
  } catch (error) {
    throw new UsageError(`${label}: cannot build the tokenizer (${(error as Error).message})`);
  }
  return new HfBackedTokenizer(inner, tokenizerJson, config, label);
}

/** Reads a JSON file, with an error naming it when it is missing or malformed. */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${path}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${(error as Error).message})`);
  }
}

/** Loads `tokenizer.json` and `tokenizer_config.json` from a folder. */
export function loadTokenizer(dir: string): Tokenizer {
  const json = readJsonFile(join(dir, 'tokenizer.json'));
  const config = readJsonFile(join(dir, 'tokenizer_config.json'));
  return tokenizerFromJson(json, config, dir);
}
