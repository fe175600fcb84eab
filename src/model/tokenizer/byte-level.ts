/**
 * GPT-2's byte-level alphabet: each of the 256 bytes maps to one printable character, so any
 * text becomes a string over 256 symbols (the same table Hugging Face tokenizers use).
 */

function buildTable(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const table: string[] = new Array(256);
  for (const b of printable) table[b] = String.fromCharCode(b);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    if (table[b] === undefined) table[b] = String.fromCharCode(256 + next++);
  }
  return table;
}

/** byte -> its character. */
export const BYTE_TO_CHAR: readonly string[] = buildTable();

/** character -> its byte. */
export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

/** The raw bytes a byte-level token string stands for, or null when it has a character outside the alphabet. */
export function byteLevelTokenBytes(token: string): Uint8Array | null {
  const out = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i++) {
    const b = CHAR_TO_BYTE.get(token[i]);
    if (b === undefined) return null;
    out[i] = b;
  }
  return out;
}

/** UTF-8 bytes of `text` as a byte-level string. */
export function toByteLevel(text: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(text)) out += BYTE_TO_CHAR[b];
  return out;
}
