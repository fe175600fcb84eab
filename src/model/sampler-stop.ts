/**
 * When a sampled row ends: a stop token id (kept as the last sampled id: it was sampled, and the
 * trainer trains on it), a stop string in the decoded text (the text is cut before it, as OpenAI's
 * `stop` does; the ids keep every sampled token), the token budget, or a cancellation.
 */

export type StopReason = { type: 'token'; tokenId: number } | { type: 'string'; stop: string } | { type: 'length' } | { type: 'cancelled' };

export type StopRules = {
  stopTokenIds: ReadonlySet<number>;
  stop: readonly string[];
  maxTokens: number;
};

/** Decodes token ids to text (the tokenizer's decode). */
export type Decode = (ids: number[]) => string;

export class StopState {
  reason: StopReason | null = null;
  /** The visible text: decoded ids without a final stop token, cut before a stop string. */
  text = '';

  constructor(
    private readonly rules: StopRules,
    private readonly decode: Decode | null,
  ) {
    if (rules.stop.length > 0 && !decode) throw new Error('sampler: stop strings need a decode function (a tokenizer)');
    if (rules.stop.some((s) => s.length === 0)) throw new Error('sampler: stop strings must not be empty');
  }

  /** Ends the row early (its caller went away or its token callback failed), keeping what was sampled. */
  cancel(ids: number[]): void {
    if (this.reason) return;
    this.reason = { type: 'cancelled' };
    if (this.decode) this.text = this.decode(ids);
  }

  /** Call after each sampled token with all ids so far; returns true when the row is done. */
  update(ids: number[]): boolean {
    if (this.reason) return true;
    const last = ids[ids.length - 1];
    if (this.rules.stopTokenIds.has(last)) {
      this.reason = { type: 'token', tokenId: last };
      if (this.decode) this.text = this.decode(ids.slice(0, -1));
      return true;
    }
    if (this.rules.stop.length > 0 && this.decode) {
      const text = this.decode(ids);
      let at = -1;
      let which = '';
      for (const s of this.rules.stop) {
        const i = text.indexOf(s);
        if (i !== -1 && (at === -1 || i < at)) {
          at = i;
          which = s;
        }
      }
      if (at !== -1) {
        this.reason = { type: 'string', stop: which };
        this.text = text.slice(0, at);
        return true;
      }
    }
    if (ids.length >= this.rules.maxTokens) {
      this.reason = { type: 'length' };
      if (this.decode) this.text = this.decode(ids);
      return true;
    }
    return false;
  }
}
