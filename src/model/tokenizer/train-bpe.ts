/**
 * Trains a byte-level BPE tokenizer: the 256 bytes are the base vocabulary (so any text encodes),
 * then the most frequent adjacent pair inside pre-tokens is merged until the vocabulary is full.
 * Merged tokens are capped in length (bytes) so a tiny model does not spend rows on long strings.
 */
import { UsageError } from '../../core/errors.ts';
import { BYTE_TO_CHAR, CHAR_TO_BYTE } from './byte-level.ts';
import { byteLevelBpeTokenizerJson, byteLevelPreTokenizer, type AddedTokenSpec, type ByteLevelBpeModel, type DigitSplit } from './tokenizer-json.ts';

export interface TrainBpeOptions {
  /** Total vocabulary: 256 bytes + merges + added tokens (default 2048). */
  vocabSize?: number;
  /** Longest learned token in bytes (default 8). */
  maxTokenBytes?: number;
  /** A pair must occur at least this often to be merged (default 2). */
  minFrequency?: number;
  /** How the pre-tokenizer cuts numbers (tokenizer-json.ts; default 'runs' of up to three digits). */
  digits?: DigitSplit;
  addedTokens: readonly AddedTokenSpec[];
}

export interface TrainedBpe {
  model: ByteLevelBpeModel;
  /** The tokenizer.json object, ready to load or save. */
  tokenizerJson: Record<string, unknown>;
}

const KEY_BASE = 1 << 16; // symbol ids stay below 65536, so a pair packs into one number

/** Counts pre-tokens (byte-level strings) over the corpus. */
function countWords(corpus: Iterable<string>, preTokenize: (text: string) => string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const text of corpus) {
    for (const word of preTokenize(text)) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

export function trainByteLevelBpe(corpus: Iterable<string>, options: TrainBpeOptions): TrainedBpe {
  const vocabSize = options.vocabSize ?? 2048;
  const maxBytes = options.maxTokenBytes ?? 8;
  const minFrequency = options.minFrequency ?? 2;
  const mergeBudget = vocabSize - 256 - options.addedTokens.length;
  if (!Number.isInteger(vocabSize) || mergeBudget < 0 || vocabSize >= KEY_BASE) {
    throw new UsageError(`vocabSize must be an integer from ${256 + options.addedTokens.length} to ${KEY_BASE - 1}, got ${vocabSize}`);
  }
  if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new UsageError(`maxTokenBytes must be a positive integer, got ${maxBytes}`);

  const counts = countWords(corpus, byteLevelPreTokenizer(options.addedTokens, options.digits));
  const words: number[][] = [];
  const freq: number[] = [];
  for (const [word, count] of counts) {
    words.push(Array.from(word, (ch) => CHAR_TO_BYTE.get(ch)!));
    freq.push(count);
  }

  const tokens: string[] = [...BYTE_TO_CHAR];
  const tokenBytes: number[] = new Array(256).fill(1);
  const pairCount = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  const addPairs = (w: number, sign: 1 | -1) => {
    const symbols = words[w];
    for (let i = 0; i + 1 < symbols.length; i++) {
      const key = symbols[i] * KEY_BASE + symbols[i + 1];
      const count = (pairCount.get(key) ?? 0) + sign * freq[w];
      if (count === 0) pairCount.delete(key);
      else pairCount.set(key, count);
      if (sign === 1) {
        let set = pairWords.get(key);
        if (!set) pairWords.set(key, (set = new Set()));
        set.add(w);
      }
    }
  };
  for (let w = 0; w < words.length; w++) addPairs(w, 1);

  const merges: [string, string][] = [];
  while (merges.length < mergeBudget) {
    // Most frequent pair within the length cap; ties go to the smaller (left, right) ids.
    let bestKey = -1;
    let bestCount = minFrequency - 1;
    for (const [key, count] of pairCount) {
      if (count < bestCount || (count === bestCount && key > bestKey) || count < minFrequency) continue;
      const left = Math.floor(key / KEY_BASE);
      if (tokenBytes[left] + tokenBytes[key % KEY_BASE] > maxBytes) continue;
      bestKey = key;
      bestCount = count;
    }
    if (bestKey < 0) break;
    const left = Math.floor(bestKey / KEY_BASE);
    const right = bestKey % KEY_BASE;
    const merged = tokens.length;
    tokens.push(tokens[left] + tokens[right]);
    tokenBytes.push(tokenBytes[left] + tokenBytes[right]);
    merges.push([tokens[left], tokens[right]]);

    for (const w of pairWords.get(bestKey) ?? []) {
      const symbols = words[w];
      let present = false;
      for (let i = 0; i + 1 < symbols.length; i++) {
        if (symbols[i] === left && symbols[i + 1] === right) {
          present = true;
          break;
        }
      }
      if (!present) continue; // stale entry: an earlier merge already consumed this pair here
      addPairs(w, -1);
      const next: number[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
          next.push(merged);
          i++;
        } else {
          next.push(symbols[i]);
        }
      }
      words[w] = next;
      addPairs(w, 1);
    }
    pairWords.delete(bestKey);
    pairCount.delete(bestKey);
  }

  const model: ByteLevelBpeModel = { tokens, merges };
  return { model, tokenizerJson: byteLevelBpeTokenizerJson(model, options.addedTokens, options.digits) };
}
