/**
 * Spindle's default tokenizer for the from-scratch model: byte-level BPE trained on the envs' text,
 * saved as a standard tokenizer.json + tokenizer_config.json (ChatML tool template) that the same
 * loader as a real checkpoint's reads.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHATML_TOOL_TEMPLATE } from './chatml-template.ts';
import type { AddedTokenSpec } from './tokenizer-json.ts';
import { trainByteLevelBpe, type TrainBpeOptions } from './train-bpe.ts';

/**
 * Qwen's chat tokens (same strings), plus <tools></tools>; the first three are special. The last two
 * are the fixed text the chat template writes around a tool call's name (`<tool_call>` + `\n{"name": "`
 * + name + `", "arguments": ` + arguments + `}\n</tool_call>`): as single tokens, a Blackjack answer
 * is 7 tokens with the end of turn instead of 15 (the byte-level pre-tokenizer splits that text into
 * 9 pieces BPE cannot merge across), and every answer costs that many fewer decode steps.
 */
export const DEFAULT_ADDED_TOKENS: readonly AddedTokenSpec[] = [
  { content: '<|endoftext|>', special: true },
  { content: '<|im_start|>', special: true },
  { content: '<|im_end|>', special: true },
  { content: '<tool_call>', special: false },
  { content: '</tool_call>', special: false },
  { content: '<tool_response>', special: false },
  { content: '</tool_response>', special: false },
  { content: '<think>', special: false },
  { content: '</think>', special: false },
  { content: '<tools>', special: false },
  { content: '</tools>', special: false },
  { content: '\n{"name": "', special: false },
  { content: '", "arguments": ', special: false },
];

export interface TokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

/** tokenizer_config.json for a ChatML tokenizer whose added tokens start at `firstAddedId`. */
export function chatmlTokenizerConfig(added: readonly AddedTokenSpec[], firstAddedId: number): Record<string, unknown> {
  const decoder: Record<string, unknown> = {};
  added.forEach((token, i) => {
    decoder[String(firstAddedId + i)] = {
      content: token.content,
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special: token.special,
    };
  });
  return {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: decoder,
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: null,
    chat_template: CHATML_TOOL_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
    unk_token: null,
  };
}

/** Trains the default tokenizer on `corpus` (vocabulary at most 2,048, tokens at most 8 bytes). */
export function trainDefaultTokenizer(corpus: Iterable<string>, options: Omit<TrainBpeOptions, 'addedTokens'> = {}): TokenizerFiles {
  const trained = trainByteLevelBpe(corpus, { vocabSize: 2048, maxTokenBytes: 8, ...options, addedTokens: DEFAULT_ADDED_TOKENS });
  return {
    tokenizerJson: trained.tokenizerJson,
    tokenizerConfig: chatmlTokenizerConfig(DEFAULT_ADDED_TOKENS, trained.model.tokens.length),
  };
}

/** Writes tokenizer.json and tokenizer_config.json into `dir`. */
export function writeTokenizerFiles(dir: string, files: TokenizerFiles): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(files.tokenizerJson, null, 2) + '\n');
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(files.tokenizerConfig, null, 2) + '\n');
}
