/**
 * A naive plain-JS forward (float64, loops, no engine) of the same architecture, written from the
 * Hugging Face modeling code, used as the oracle for the engine forward in tests.
 */
import type { ModelConfig } from '../../src/model/config.ts';
import type { HostParams } from '../../src/model/params.ts';
import { ropeInvFreq } from '../../src/model/rope.ts';

type Matrix = Float64Array[]; // rows

function weight(p: HostParams, name: string): HostParams[string] {
  const t = p[name];
  if (!t) throw new Error(`reference: missing ${name}`);
  return t;
}

/** LoRA adapters in the reference: PEFT-named A/B tensors and the scale, applied unmerged. */
export type ReferenceLora = { adapters: HostParams; scale: number };
let activeLora: ReferenceLora | null = null;

function matvec(w: HostParams[string], row: ArrayLike<number>): Float64Array {
  const [out, inp] = w.shape;
  const y = new Float64Array(out);
  for (let o = 0; o < out; o++) {
    let s = 0;
    for (let i = 0; i < inp; i++) s += w.data[o * inp + i] * row[i];
    y[o] = s;
  }
  return y;
}

/** y[t] = W x[t] + b (+ scale · B (A x[t]) when a LoRA adapter targets it), W stored [out, in]. */
function linear(x: Matrix, p: HostParams, name: string, withBias: boolean): Matrix {
  const w = weight(p, `${name}.weight`);
  const b = withBias ? weight(p, `${name}.bias`).data : null;
  const a = activeLora?.adapters[`base_model.model.${name}.lora_A.weight`];
  const bl = activeLora?.adapters[`base_model.model.${name}.lora_B.weight`];
  return x.map((row) => {
    const y = matvec(w, row);
    if (b) for (let o = 0; o < y.length; o++) y[o] += b[o];
    if (a && bl) {
      const low = matvec(bl, matvec(a, row));
      for (let o = 0; o < y.length; o++) y[o] += activeLora!.scale * low[o];
    }
    return y;
  });
}

/** referenceLogits with LoRA adapters applied inside the projections (the unmerged form). */
export function referenceLogitsWithLora(cfg: ModelConfig, p: HostParams, tokens: readonly number[], lora: ReferenceLora): Matrix {
  activeLora = lora;
  try {
    return referenceLogits(cfg, p, tokens);
  } finally {
    activeLora = null;
  }
}

export function refRmsNorm(x: ArrayLike<number>, w: ArrayLike<number>, eps: number): Float64Array {
  let ms = 0;
  for (let i = 0; i < x.length; i++) ms += x[i] * x[i];
  const r = 1 / Math.sqrt(ms / x.length + eps);
  return Float64Array.from({ length: x.length }, (_, i) => x[i] * r * w[i]);
}

/** Rotates one head vector at `pos` (rotate_half convention). */
export function refRope(v: ArrayLike<number>, pos: number, invFreq: Float64Array): Float64Array {
  const half = invFreq.length;
  const out = new Float64Array(2 * half);
  for (let i = 0; i < half; i++) {
    const c = Math.cos(pos * invFreq[i]);
    const s = Math.sin(pos * invFreq[i]);
    out[i] = v[i] * c - v[i + half] * s;
    out[i + half] = v[i + half] * c + v[i] * s;
  }
  return out;
}

const silu = (x: number): number => x / (1 + Math.exp(-x));

/** Logits [T][V] for one sequence (positions 0..T-1, causal). */
export function referenceLogits(cfg: ModelConfig, p: HostParams, tokens: readonly number[]): Matrix {
  const d = cfg.hiddenSize;
  const hd = cfg.headDim;
  const inv = ropeInvFreq(cfg);
  const emb = weight(p, 'model.embed_tokens.weight').data;
  let x: Matrix = tokens.map((id) => Float64Array.from(emb.subarray(id * d, (id + 1) * d)));
  for (let l = 0; l < cfg.numLayers; l++) {
    const pre = `model.layers.${l}`;
    const h = x.map((row) => refRmsNorm(row, weight(p, `${pre}.input_layernorm.weight`).data, cfg.rmsNormEps));
    const q = linear(h, p, `${pre}.self_attn.q_proj`, cfg.qkvBias);
    const k = linear(h, p, `${pre}.self_attn.k_proj`, cfg.qkvBias);
    const v = linear(h, p, `${pre}.self_attn.v_proj`, cfg.qkvBias);
    const head = (m: Matrix, t: number, j: number): Float64Array => m[t].subarray(j * hd, (j + 1) * hd);
    const prep = (vec: Float64Array, t: number, norm: string): Float64Array =>
      refRope(cfg.qkNorm ? refRmsNorm(vec, weight(p, `${pre}.self_attn.${norm}.weight`).data, cfg.rmsNormEps) : vec, t, inv);
    const attnOut: Matrix = tokens.map(() => new Float64Array(cfg.numHeads * hd));
    const group = cfg.numHeads / cfg.numKvHeads;
    for (let j = 0; j < cfg.numHeads; j++) {
      const kvh = Math.floor(j / group);
      const keys = tokens.map((_, s) => prep(head(k, s, kvh), s, 'k_norm'));
      for (let t = 0; t < tokens.length; t++) {
        const qv = prep(head(q, t, j), t, 'q_norm');
        const scores = keys.slice(0, t + 1).map((kv) => kv.reduce((acc, kk, i) => acc + kk * qv[i], 0) / Math.sqrt(hd));
        const m = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - m));
        const z = e.reduce((a, b) => a + b, 0);
        for (let s = 0; s <= t; s++) {
          const vv = head(v, s, kvh);
          for (let i = 0; i < hd; i++) attnOut[t][j * hd + i] += (e[s] / z) * vv[i];
        }
      }
    }
    const o = linear(attnOut, p, `${pre}.self_attn.o_proj`, cfg.oBias);
    x = x.map((row, t) => row.map((val, i) => val + o[t][i]));
    const h2 = x.map((row) => refRmsNorm(row, weight(p, `${pre}.post_attention_layernorm.weight`).data, cfg.rmsNormEps));
    const g = linear(h2, p, `${pre}.mlp.gate_proj`, cfg.mlpBias);
    const u = linear(h2, p, `${pre}.mlp.up_proj`, cfg.mlpBias);
    const down = linear(
      g.map((row, t) => row.map((gv, i) => silu(gv) * u[t][i])),
      p,
      `${pre}.mlp.down_proj`,
      cfg.mlpBias,
    );
    x = x.map((row, t) => row.map((val, i) => val + down[t][i]));
  }
  const hf = x.map((row) => refRmsNorm(row, weight(p, 'model.norm.weight').data, cfg.rmsNormEps));
  const headName = cfg.tieWordEmbeddings ? 'model.embed_tokens' : 'lm_head';
  return linear(hf, p, headName, false);
}

/** log p(completion token j | prefix) for each completion token. */
export function referenceCompletionLogprobs(cfg: ModelConfig, p: HostParams, prompt: readonly number[], completion: readonly number[]): number[] {
  const seq = [...prompt, ...completion];
  const logits = referenceLogits(cfg, p, seq.slice(0, -1));
  return completion.map((tok, j) => {
    const row = logits[prompt.length - 1 + j];
    const m = Math.max(...row);
    const lse = m + Math.log(row.reduce((a, v) => a + Math.exp(v - m), 0));
    return row[tok] - lse;
  });
}
