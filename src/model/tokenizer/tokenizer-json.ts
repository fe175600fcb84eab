/**
 * The `tokenizer.json` of a byte-level BPE tokenizer, in the layout Hugging Face tokenizers writes
 * (Qwen2/Qwen3 use the same pipeline): Split by a regex, ByteLevel without its own regex,
 * BPE with vocab + merges, ByteLevel decoder. No normaliser, so every string round trips exactly.
 */
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { BYTE_TO_CHAR } from './byte-level.ts';

/**
 * The pre-tokenizer regex: Qwen2/Qwen3's (contractions, words with one leading non-letter,
 * punctuation runs, newlines, spaces) except for numbers, which are cut in runs of up to three
 * digits as Llama 3's and GPT-4's are, and take one leading space as words do (GPT-2's ` ?\p{N}+`),
 * instead of going digit by digit. A from-scratch model then reads " 16" as one token BPE can
 * learn, whose identity alone says it is a number at this place, not "1" then "6" it must first
 * learn to combine (measured on Blackjack, whose decision depends on the hand's sum).
 * `digits: 'single'` cuts every digit on its own instead (the first with its leading space), so a
 * number's tokens are ten digits shared by every number, in place of up to a thousand runs each
 * learned alone.
 */
export const DIGIT_SPLITS = ['runs', 'single'] as const;
export type DigitSplit = (typeof DIGIT_SPLITS)[number];

function splitRegex(digits: DigitSplit = 'runs'): string {
  const number = digits === 'single' ? ' ?\\p{N}' : ' ?\\p{N}{1,3}';
  return `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|${number}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
}

export interface AddedTokenSpec {
  content: string;
  /** Special tokens are dropped by decode with skipSpecialTokens (`<|im_end|>`); `<think>` is not special. */
  special: boolean;
}

export interface ByteLevelBpeModel {
  /** Token strings over the byte-level alphabet, by id (the first 256 are the bytes 0..255). */
  tokens: string[];
  merges: [string, string][];
}

const BYTE_LEVEL = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };

function preTokenizerConfig(digits: DigitSplit): Record<string, unknown> {
  return {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Split', pattern: { Regex: splitRegex(digits) }, behavior: 'Isolated', invert: false },
      BYTE_LEVEL,
    ],
  };
}

/** The full tokenizer.json object; added tokens take the ids after the model's tokens. */
export function byteLevelBpeTokenizerJson(model: ByteLevelBpeModel, added: readonly AddedTokenSpec[], digits: DigitSplit = 'runs'): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  model.tokens.forEach((token, id) => (vocab[token] = id));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added.map((token, i) => ({
      id: model.tokens.length + i,
      content: token.content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: token.special,
    })),
    normalizer: null,
    pre_tokenizer: preTokenizerConfig(digits),
    post_processor: { ...BYTE_LEVEL },
    decoder: { ...BYTE_LEVEL },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: model.merges.map(([a, b]) => [a, b]),
    },
  };
}

/**
 * Splits text into byte-level pre-tokens exactly as the loaded tokenizer will (same library, same
 * config), with added tokens cut out first so they never take part in merges.
 */
export function byteLevelPreTokenizer(added: readonly AddedTokenSpec[], digits: DigitSplit = 'runs'): (text: string) => string[] {
  const skeleton = new HfTokenizer(byteLevelBpeTokenizerJson({ tokens: [...BYTE_TO_CHAR], merges: [] }, [], digits), {});
  const pre = skeleton.pre_tokenizer;
  if (!pre) throw new Error('byte-level tokenizer has no pre-tokenizer');
  const escaped = added.map((t) => t.content.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const splitter = escaped.length ? new RegExp(escaped.sort((a, b) => b.length - a.length).join('|'), 'g') : null;
  return (text: string) => {
    const pieces = splitter ? text.split(splitter) : [text];
    return pieces.flatMap((piece) => (piece.length ? pre.pre_tokenize(piece) : []));
  };
}
