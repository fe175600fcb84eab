"""Measures the PyTorch twin (model.py) on this CPU; bench/model.ts runs it for its torch ratios.

Input JSON (argv[1], or stdin when absent):
  {"threads": 2, "seconds": 1.0,
   "configs": {"NAME": {"model": ModelConfig (camelCase), "seqLen": 128, "batchSize": 16,
                        "prefillLen": 128, "decodePromptLen": 32, "decodeSteps": 32,
                        "decodeBatches": [1, 8, 32]}}}
Output (last line of stdout): {"torch": VERSION, "threads": N,
   "configs": {"NAME": {"params", "prefillTokensPerSec", "decodeTokensPerSecB1", ...,
                        "trainTokensPerSec", "peakRssMB"}}}

Protocol (bench/model.ts measures the embedded model the same way):
  prefill: one prompt of prefillLen tokens into an empty KV cache; tokens/s = prefillLen / time.
  decode at batch B: B prompts of decodePromptLen tokens prefilled (untimed), then decodeSteps
    greedy steps, each one token per row through the KV cache; tokens/s = B * decodeSteps / time.
  train: forward + cross-entropy + backward + global-norm clipping (1.0) + AdamW step on
    [batchSize, seqLen] tokens (what src/model/train-throughput.ts times);
    tokens/s = batchSize * seqLen / time.
  Each measurement: one warm-up call, then calls until `seconds` have passed (training: at least 2);
    prefill and decode report the best of 3 windows of seconds / 3 (another process's load comes and goes).
Each config runs in its own child process so peakRssMB (ru_maxrss) is per config.
"""
import json
import os
import resource
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Decoder  # noqa: E402

# Prefill and decode rates: the best of 3 windows (a shared machine's load comes and goes).
WINDOWS = 3
REQUIRED_MODEL_KEYS = ["vocabSize", "hiddenSize", "intermediateSize", "numLayers", "numHeads",
                       "numKvHeads", "headDim", "rmsNormEps", "ropeTheta"]


def rate(fn, tokens_per_call, seconds, windows=1):
    """Tokens/s over `windows` windows of >= seconds / windows (>= 1 call each); the best window.
    With windows=1 (training): at least 2 calls."""
    fn()  # warm-up
    best = 0.0
    for _ in range(windows):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if calls >= (2 if windows == 1 else 1) and elapsed >= seconds / windows:
                break
        best = max(best, tokens_per_call * calls / elapsed)
    return best


def measure(spec, seconds):
    cfg = spec["model"]
    missing = [k for k in REQUIRED_MODEL_KEYS if k not in cfg]
    if missing:
        raise SystemExit(f"config.model: missing {', '.join(missing)}")
    seq, batch = spec["seqLen"], spec["batchSize"]
    prefill_len = spec.get("prefillLen", seq)
    prompt_len = spec.get("decodePromptLen", 32)
    steps = spec.get("decodeSteps", 32)
    torch.manual_seed(0)
    vocab = cfg["vocabSize"]
    model = Decoder(cfg, max(seq, prefill_len, prompt_len + steps))
    out = {"params": sum(p.numel() for p in model.parameters())}

    with torch.inference_mode():
        model.eval()
        prompt = torch.randint(0, vocab, (1, prefill_len))

        def prefill():
            caches = model.new_cache(1, prefill_len)
            model(prompt, caches, 0)[:, -1].argmax(-1)

        out["prefillTokensPerSec"] = rate(prefill, prefill_len, seconds, WINDOWS)

        for b in spec.get("decodeBatches", [1, 8, 32]):
            caches = model.new_cache(b, prompt_len + steps)
            first = model(torch.randint(0, vocab, (b, prompt_len)), caches, 0)[:, -1].argmax(-1)

            def decode():
                tok = first
                for i in range(steps):
                    tok = model(tok[:, None], caches, prompt_len + i)[:, -1].argmax(-1)

            out[f"decodeTokensPerSecB{b}"] = rate(decode, b * steps, seconds, WINDOWS)

    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    data = torch.randint(0, vocab, (batch, seq + 1))

    def train_step():
        logits = model(data[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), data[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    out["trainTokensPerSec"] = rate(train_step, batch * seq, seconds)
    out["peakRssMB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main():
    raw = sys.argv[2] if sys.argv[1:2] == ["--one"] and len(sys.argv) > 2 else (
        sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "--one" else sys.stdin.read())
    req = json.loads(raw)
    threads = int(req.get("threads", os.cpu_count() or 1))
    seconds = float(req.get("seconds", 1.0))
    torch.set_num_threads(threads)
    if sys.argv[1:2] == ["--one"]:
        (name, spec), = req["configs"].items()
        print(json.dumps(measure(spec, seconds)))
        return
    results = {}
    for name, spec in req["configs"].items():
        one = json.dumps({"threads": threads, "seconds": seconds, "configs": {name: spec}})
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", one],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"config {name}: {proc.stderr.strip()[-2000:]}")
        results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps({"torch": torch.__version__, "threads": threads, "configs": results}))


if __name__ == "__main__":
    main()
