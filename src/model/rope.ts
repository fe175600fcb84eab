/**
 * Rotary position embeddings, Hugging Face convention (rotate_half: the first and second halves of
 * each head are the pair rotated together; cos/sin are repeated over both halves).
 * Frequencies are computed in plain JS so the training forward and the sampler share them exactly.
 */
import type { ModelConfig } from './config.ts';
import { np, type Tensor } from './engine.ts';

/** inv_freq[i] = theta^(-2i/headDim), with the config's rope_scaling applied as transformers does. */
export function ropeInvFreq(cfg: Pick<ModelConfig, 'headDim' | 'ropeTheta' | 'ropeScaling'>): Float64Array {
  const half = cfg.headDim / 2;
  const inv = new Float64Array(half);
  for (let i = 0; i < half; i++) inv[i] = 1 / Math.pow(cfg.ropeTheta, (2 * i) / cfg.headDim);
  const s = cfg.ropeScaling;
  if (s.type === 'linear') {
    for (let i = 0; i < half; i++) inv[i] /= s.factor;
  } else if (s.type === 'llama3') {
    const lowFreqWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
    const highFreqWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
    for (let i = 0; i < half; i++) {
      const wavelen = (2 * Math.PI) / inv[i];
      if (wavelen > lowFreqWavelen) {
        inv[i] /= s.factor; // long wavelengths: fully interpolated
      } else if (wavelen >= highFreqWavelen) {
        // in between: blend interpolated and original
        const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
        inv[i] = (1 - smooth) * (inv[i] / s.factor) + smooth * inv[i];
      }
    }
  }
  return inv;
}

/** cos and sin for each position as plain data, rows of headDim (both halves equal). */
export function ropeTableData(invFreq: Float64Array, positions: ArrayLike<number>): { cos: Float32Array; sin: Float32Array } {
  const half = invFreq.length;
  const headDim = 2 * half;
  const cos = new Float32Array(positions.length * headDim);
  const sin = new Float32Array(positions.length * headDim);
  for (let t = 0; t < positions.length; t++) {
    for (let i = 0; i < half; i++) {
      const angle = positions[t] * invFreq[i];
      const c = Math.cos(angle);
      const s = Math.sin(angle);
      cos[t * headDim + i] = c;
      cos[t * headDim + half + i] = c;
      sin[t * headDim + i] = s;
      sin[t * headDim + half + i] = s;
    }
  }
  return { cos, sin };
}

export type RopeTables = { cos: Tensor; sin: Tensor };

/**
 * Tables for `positions`: one list of T positions gives [T, headDim] (shared by the batch);
 * B lists give [B, 1, T, headDim]. Both broadcast against per-head tensors [B, H, T, headDim].
 */
export function ropeTables(cfg: Pick<ModelConfig, 'headDim' | 'ropeTheta' | 'ropeScaling'>, positions: ArrayLike<number> | ArrayLike<number>[]): RopeTables {
  const inv = ropeInvFreq(cfg);
  const rows = isBatched(positions) ? positions : null;
  if (!rows) {
    const { cos, sin } = ropeTableData(inv, positions as ArrayLike<number>);
    const shape = [(positions as ArrayLike<number>).length, cfg.headDim];
    return { cos: np.array(cos).reshape(shape), sin: np.array(sin).reshape(shape) };
  }
  const T = rows[0]?.length ?? 0;
  const flat = new Float64Array(rows.length * T);
  rows.forEach((row, b) => {
    if (row.length !== T) throw new Error(`ropeTables: position rows must have equal lengths (row ${b} has ${row.length}, row 0 has ${T})`);
    for (let t = 0; t < T; t++) flat[b * T + t] = row[t];
  });
  const { cos, sin } = ropeTableData(inv, flat);
  const shape = [rows.length, 1, T, cfg.headDim];
  return { cos: np.array(cos).reshape(shape), sin: np.array(sin).reshape(shape) };
}

function isBatched(positions: ArrayLike<number> | ArrayLike<number>[]): positions is ArrayLike<number>[] {
  return positions.length > 0 && typeof positions[0] !== 'number';
}

/** x * cos + rotate_half(x) * sin, where rotate_half([x1, x2]) = [-x2, x1] over the last axis. */
export function applyRope(x: Tensor, cos: Tensor, sin: Tensor): Tensor {
  const half = x.shape[x.ndim - 1] / 2;
  const lead = x.shape.slice(0, -1).map((): [] => []);
  const x1 = x.ref.slice(...lead, [0, half]);
  const x2 = x.ref.slice(...lead, [half, 2 * half]);
  const rotated = np.concatenate([x2.neg(), x1], -1);
  return x.mul(cos).add(rotated.mul(sin));
}
