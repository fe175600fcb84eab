/**
 * JSON as models write it: strict JSON first, then a repair of the common slips that do not change
 * meaning (single-quoted strings, trailing commas, Python's True/False/None), and nothing more.
 */

export type JsonResult = { ok: true; value: unknown } | { ok: false; message: string };

const SPACE = /\s/;
const WORD = /[A-Za-z_]/;
const WORD_CHAR = /\w/;
const PYTHON_LITERALS: Record<string, string> = { True: 'true', False: 'false', None: 'null' };

export function parseLenientJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const repaired = repairJson(text);
    if (repaired !== text) {
      try {
        return { ok: true, value: JSON.parse(repaired) };
      } catch {
        // report the error of the text as written
      }
    }
    return { ok: false, message: (error as Error).message };
  }
}

/** Index just past the double-quoted string starting at `start` (or the text's end when unclosed). */
function endOfString(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === quote) return i + 1;
  }
  return text.length;
}

/** The inside of a single-quoted string as the inside of a JSON string: \\' becomes ', a bare " is escaped. */
function singleToDoubleQuoted(inner: string): string {
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '\\' && i + 1 < inner.length) {
      out += inner[i + 1] === "'" ? "'" : c + inner[i + 1];
      i++;
    } else {
      out += c === '"' ? '\\"' : c;
    }
  }
  return out;
}

/** Rewrites single-quoted strings as JSON strings, drops trailing commas, maps Python literals. */
export function repairJson(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const end = endOfString(text, i, '"');
      out += text.slice(i, end);
      i = end;
    } else if (c === "'") {
      const end = endOfString(text, i, "'");
      const closed = end - 1 > i && text[end - 1] === "'";
      out += '"' + singleToDoubleQuoted(text.slice(i + 1, closed ? end - 1 : end)) + '"';
      i = end;
    } else if (c === ',') {
      let j = i + 1;
      while (j < text.length && SPACE.test(text[j])) j++;
      if (text[j] !== '}' && text[j] !== ']') out += c;
      i++;
    } else if (WORD.test(c)) {
      let j = i + 1;
      while (j < text.length && WORD_CHAR.test(text[j])) j++;
      const word = text.slice(i, j);
      out += PYTHON_LITERALS[word] ?? word;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * Index just past the JSON object or array that opens at `start`, counting brackets outside
 * strings of either quote; -1 when it never closes (a completion cut off mid-call).
 */
export function endOfBalanced(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      i = endOfString(text, i, c) - 1;
    } else if (c === '{' || c === '[') {
      depth++;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
