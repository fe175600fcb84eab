/** Splits `<think>...</think>` reasoning off a completion's visible text. */

const OPEN = '<think>';
const CLOSE = '</think>';

export interface SplitText {
  /** The visible text, trimmed. */
  content: string;
  /** The reasoning (several blocks joined by a blank line), or null when there was none. */
  reasoning: string | null;
}

/**
 * - `<think>a</think>b` -> reasoning `a`, content `b` (blocks anywhere are removed and joined);
 * - `a</think>b` -> reasoning `a`: the chat template opened the block in the prompt (Qwen3 does);
 * - `<think>a` never closed (cut off while thinking) -> reasoning `a`, content `''`.
 */
export function splitReasoning(text: string): SplitText {
  if (!text.includes('think>')) return { content: text.trim(), reasoning: null };
  const parts: string[] = [];
  let content = '';
  let pos = 0;
  const firstClose = text.indexOf(CLOSE);
  const firstOpen = text.indexOf(OPEN);
  if (firstClose !== -1 && (firstOpen === -1 || firstClose < firstOpen)) {
    parts.push(text.slice(0, firstClose));
    pos = firstClose + CLOSE.length;
  }
  for (;;) {
    const open = text.indexOf(OPEN, pos);
    if (open === -1) {
      content += text.slice(pos);
      break;
    }
    content += text.slice(pos, open);
    const close = text.indexOf(CLOSE, open + OPEN.length);
    if (close === -1) {
      parts.push(text.slice(open + OPEN.length));
      break;
    }
    parts.push(text.slice(open + OPEN.length, close));
    pos = close + CLOSE.length;
  }
  const reasoning = parts
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .join('\n\n');
  return { content: content.trim(), reasoning: parts.length > 0 ? reasoning : null };
}
