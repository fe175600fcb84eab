"""PyTorch twin of Spindle's embedded decoder (src/model), used only as a speed reference.

Same architecture and Hugging Face tensor names: pre-norm blocks with RMSNorm, RoPE (rotate_half
convention), grouped-query attention, optional q/k RMSNorm over the head dim (Qwen3), optional
q/k/v biases (Qwen2), SwiGLU MLP, final RMSNorm, tied or untied head. Config keys are the
camelCase fields of src/model/config.ts ModelConfig.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        # x * rsqrt(mean(x^2) + eps) * w
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg, max_len):
    hd = cfg["headDim"]
    inv_freq = 1.0 / (cfg["ropeTheta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    t = torch.arange(max_len, dtype=torch.float64)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().float(), emb.sin().float()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def apply_rope(x, cos, sin):
    # x: [B, H, T, hd]; cos/sin: [B or 1, 1, T, hd]
    return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, hd = cfg["hiddenSize"], cfg["headDim"]
        self.nh, self.nkv, self.hd = cfg["numHeads"], cfg["numKvHeads"], hd
        bias = cfg.get("qkvBias", False)
        self.q_proj = nn.Linear(d, self.nh * hd, bias=bias)
        self.k_proj = nn.Linear(d, self.nkv * hd, bias=bias)
        self.v_proj = nn.Linear(d, self.nkv * hd, bias=bias)
        self.o_proj = nn.Linear(self.nh * hd, d, bias=cfg.get("oBias", False))
        self.qk_norm = cfg.get("qkNorm", False)
        if self.qk_norm:
            self.q_norm = RMSNorm(hd, cfg["rmsNormEps"])
            self.k_norm = RMSNorm(hd, cfg["rmsNormEps"])

    def qkv(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.nh, self.hd)
        k = self.k_proj(x).view(b, t, self.nkv, self.hd)
        v = self.v_proj(x).view(b, t, self.nkv, self.hd).transpose(1, 2)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def attend(self, q, k, v, mask):
        # GQA: repeat kv heads so query head h reads kv head h // (nh / nkv).
        rep = self.nh // self.nkv
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.hd) + mask
        return torch.softmax(scores, dim=-1) @ v

    def forward(self, x, cos, sin, mask, cache=None, pos=None):
        b, t, _ = x.shape
        q, k, v = self.qkv(x, cos, sin)
        if cache is not None:
            # Static KV cache [B, Hkv, capacity, hd]: write this chunk at pos, attend to [0, pos + t).
            kc, vc = cache
            kc[:, :, pos:pos + t] = k
            vc[:, :, pos:pos + t] = v
            k, v = kc[:, :, :pos + t], vc[:, :, :pos + t]
        out = self.attend(q, k, v, mask)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.nh * self.hd))


class Mlp(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, i = cfg["hiddenSize"], cfg["intermediateSize"]
        bias = cfg.get("mlpBias", False)
        self.gate_proj = nn.Linear(d, i, bias=bias)
        self.up_proj = nn.Linear(d, i, bias=bias)
        self.down_proj = nn.Linear(i, d, bias=bias)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg["hiddenSize"], cfg["rmsNormEps"])
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg["hiddenSize"], cfg["rmsNormEps"])
        self.mlp = Mlp(cfg)

    def forward(self, x, cos, sin, mask, cache=None, pos=None):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask, cache, pos)
        return x + self.mlp(self.post_attention_layernorm(x))


class Backbone(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg["vocabSize"], cfg["hiddenSize"])
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg["numLayers"])])
        self.norm = RMSNorm(cfg["hiddenSize"], cfg["rmsNormEps"])


class Decoder(nn.Module):
    def __init__(self, cfg, max_len):
        super().__init__()
        self.cfg = cfg
        self.model = Backbone(cfg)
        self.tied = cfg.get("tieWordEmbeddings", True)
        if not self.tied:
            self.lm_head = nn.Linear(cfg["hiddenSize"], cfg["vocabSize"], bias=False)
        cos, sin = rope_tables(cfg, max_len)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def head(self, h):
        h = self.model.norm(h)
        w = self.model.embed_tokens.weight if self.tied else self.lm_head.weight
        return h @ w.t()

    def forward(self, tokens, caches=None, pos=0):
        """tokens [B, T] -> logits [B, T, V]. With caches, the chunk sits at positions pos..pos+T-1."""
        t = tokens.shape[1]
        cos = self.cos[pos:pos + t][None, None]
        sin = self.sin[pos:pos + t][None, None]
        # Additive causal mask over [0, pos + t): query i sees keys <= pos + i.
        keys = pos + t
        mask = torch.full((t, keys), float("-inf")).triu(pos + 1)[None, None]
        x = self.model.embed_tokens(tokens)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, mask, None if caches is None else caches[i], pos)
        return self.head(x)

    def new_cache(self, batch, capacity):
        c = self.cfg
        shape = (batch, c["numKvHeads"], capacity, c["headDim"])
        return [(torch.zeros(shape), torch.zeros(shape)) for _ in range(c["numLayers"])]
