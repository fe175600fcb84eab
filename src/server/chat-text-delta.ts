/**
 * The text of one streamed choice, released token by token. Ids are decoded incrementally, the way
 * vLLM and TGI do: each push decodes only the last few ids (from `prefixOffset`, so a decoder that
 * treats the first token of a sequence specially sees the same context both times) and keeps the new
 * text only once it no longer ends in U+FFFD (a UTF-8 character split across tokens, completed by a
 * later token). Of that text, anything from the start of a held marker is kept back: a stop string
 * (the final text is cut before it), or `<tool_call>` (the call is sent as `tool_calls` at the end),
 * including a tail that could still grow into one. Sent text is thus always a prefix of the final text.
 */

export type DecodeIds = (ids: number[]) => string;

export class TextDelta {
  /** Text decoded so far (sent or held). */
  private text = '';
  private sent = '';
  private prefixOffset = 0;
  private readOffset = 0;

  constructor(
    private readonly decode: DecodeIds,
    private readonly markers: readonly string[],
  ) {}

  /** All ids of the choice so far; returns the new text to send ('' when nothing is safe yet). */
  push(ids: number[]): string {
    const before = this.decodeSome(ids.slice(this.prefixOffset, this.readOffset));
    const now = this.decodeSome(ids.slice(this.prefixOffset));
    if (now.length > before.length && now.startsWith(before) && !now.endsWith('\uFFFD')) {
      this.text += now.slice(before.length);
      this.prefixOffset = this.readOffset;
      this.readOffset = ids.length;
    }
    const safe = this.safeEnd();
    const delta = this.text.slice(this.sent.length, safe);
    this.sent += delta;
    return delta;
  }

  /** What remains of `finalText` after the sent part ('' if the sent text is not its prefix). */
  finish(finalText: string): string {
    if (!finalText.startsWith(this.sent)) return '';
    const rest = finalText.slice(this.sent.length);
    this.sent = finalText;
    return rest;
  }

  /** (@huggingface/tokenizers rejects an empty id list.) */
  private decodeSome(ids: number[]): string {
    return ids.length === 0 ? '' : this.decode(ids);
  }

  /** End of the text that can be sent. A marker cannot start inside sent text (its start was held). */
  private safeEnd(): number {
    let end = this.text.length;
    for (const marker of this.markers) {
      const at = this.text.indexOf(marker, this.sent.length);
      if (at !== -1) {
        end = Math.min(end, at);
        continue;
      }
      for (let len = Math.min(marker.length - 1, this.text.length - this.sent.length); len > 0; len--) {
        if (this.text.endsWith(marker.slice(0, len))) {
          end = Math.min(end, this.text.length - len);
          break;
        }
      }
    }
    return Math.max(end, this.sent.length);
  }
}
