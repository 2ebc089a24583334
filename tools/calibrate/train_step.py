#!/usr/bin/env python3
"""One whole training step of a small dense model on one GPU: the ground truth for fathom's step
time and memory models where no communication runs.

    train_step.py OUT_DIR/train_step.csv [--device cuda] [--tiny]

The model is Llama-3.2-1B-shaped (config.json of meta-llama/Llama-3.2-1B: hidden 2048, 16 layers,
32 heads, 8 KV heads, head dim 64, FFN 8192, vocabulary 128256, tied embeddings), random weights,
written in plain PyTorch as layers.py writes a layer: RMSNorm, fused QKV GEMM, rotary embedding,
SDPA (causal, GQA), output projection, RMSNorm, fused gate-and-up GEMM, SiLU x up, down
projection; final RMSNorm, LM head (the tied embedding), cross entropy. The recipe is the common
single-GPU mixed-precision one: fp32 parameters, torch.autocast(bfloat16) forward and backward,
fp32 gradients, torch.optim.AdamW(fused=True) (fp32 moments), no activation recomputation.

Rows, per (mode, micro-batch, sequence): mode is `eager` or `compiled` (torch.compile of the
model, default options, compiled before timing); each step is zero_grad(set_to_none) + forward +
loss + backward + optimizer step. Timing: 3 warm-up steps, then the median (p10, p90) of 10
steps timed with CUDA events. Memory: torch.cuda.max_memory_allocated over the timed steps
(peak, with parameters, gradients and optimizer state resident) and the resident part alone
(memory_allocated between steps), in bytes.

Columns: model, mode, micro_batch, seq, tokens, params, step_ms, step_p10_ms, step_p90_ms,
tokens_per_s, model_tflops (6 x params x tokens + causal attention 6 x layers x seq x hidden x
tokens, per second), peak_bytes, resident_bytes, note. --tiny runs a 2-layer, 256-hidden model
(for a check of the script without a GPU: --device cpu --tiny).
"""
import argparse
import csv
import statistics
import time

import torch
import torch.nn.functional as F

LLAMA_1B = dict(hidden=2048, layers=16, heads=32, kv_heads=8, head_dim=64, ffn=8192, vocab=128256)
TINY = dict(hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64, ffn=512, vocab=1000)
SHAPES = ((1, 2048), (4, 2048), (8, 2048), (2, 8192))  # (micro-batch, sequence)
COMPILED_SHAPES = ((4, 2048),)
WARMUP, TRIALS = 3, 10


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.h, self.kvh, self.d = c["heads"], c["kv_heads"], c["head_dim"]
        hid = c["hidden"]
        self.n1 = torch.nn.RMSNorm(hid, eps=1e-5)
        self.qkv = torch.nn.Linear(hid, (self.h + 2 * self.kvh) * self.d, bias=False)
        self.o = torch.nn.Linear(self.h * self.d, hid, bias=False)
        self.n2 = torch.nn.RMSNorm(hid, eps=1e-5)
        self.gate_up = torch.nn.Linear(hid, 2 * c["ffn"], bias=False)
        self.down = torch.nn.Linear(c["ffn"], hid, bias=False)

    @staticmethod
    def rope(x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).split([self.h * self.d, self.kvh * self.d, self.kvh * self.d], dim=-1)
        q = self.rope(q.view(b, s, self.h, self.d).transpose(1, 2), cos, sin)
        k = self.rope(k.view(b, s, self.kvh, self.d).transpose(1, 2), cos, sin)
        v = v.view(b, s, self.kvh, self.d).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(o.transpose(1, 2).reshape(b, s, self.h * self.d))
        g, u = self.gate_up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class Model(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = torch.nn.Embedding(c["vocab"], c["hidden"])
        self.blocks = torch.nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.norm = torch.nn.RMSNorm(c["hidden"], eps=1e-5)
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.normal_(p, std=0.02)

    def forward(self, tokens, labels):
        s, d = tokens.shape[1], self.c["head_dim"]
        inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device=tokens.device, dtype=torch.float32) / d))
        f = torch.outer(torch.arange(s, device=tokens.device, dtype=torch.float32), inv)
        emb = torch.cat((f, f), dim=-1)
        cos, sin = emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16)  # as layers.rope_tables
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x, cos, sin)
        logits = F.linear(self.norm(x), self.embed.weight)  # tied LM head
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))


def model_flops(c, params, b, s):
    """6 x params x tokens (the embedding lookup counted as the tied LM head's GEMM) plus causal
    attention's score and value GEMMs: 6 x layers x s x (heads x head_dim) x tokens (half of the
    12 of a full mask), forward and backward."""
    tokens = b * s
    return 6.0 * params * tokens + 6.0 * c["layers"] * s * c["heads"] * c["head_dim"] * tokens


def measure(c, mode, b, s, device, note, w):
    torch.manual_seed(0)
    model = Model(c).to(device)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device == "cuda")
    run = torch.compile(model) if mode == "compiled" else model
    tokens = torch.randint(0, c["vocab"], (b, s), device=device)
    labels = torch.randint(0, c["vocab"], (b, s), device=device)
    amp = torch.autocast(device_type=device, dtype=torch.bfloat16)

    def step():
        opt.zero_grad(set_to_none=True)
        with amp:
            loss = run(tokens, labels)
        loss.backward()
        opt.step()
        return loss

    t0 = time.time()
    for _ in range(WARMUP):
        step()
    cuda = device == "cuda"
    resident = peak = 0  # bytes; measured on CUDA only
    if cuda:
        torch.cuda.synchronize()
        resident = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    warm_s = time.time() - t0
    times = []
    for _ in range(TRIALS):
        if cuda:
            a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            loss = step()
            e.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(e))
        else:
            t = time.time()
            loss = step()
            times.append((time.time() - t) * 1e3)
    if cuda:
        peak = torch.cuda.max_memory_allocated()
    times.sort()
    med = statistics.median(times)
    p10, p90 = times[max(0, int(0.1 * len(times)))], times[min(len(times) - 1, int(0.9 * len(times)))]
    fl = model_flops(c, params, b, s)
    w.writerow([c["name"], mode, b, s, b * s, params, f"{med:.3f}", f"{p10:.3f}", f"{p90:.3f}",
                f"{b * s / (med * 1e-3):.0f}", f"{fl / (med * 1e-3) / 1e12:.1f}", peak, resident, note])
    print(f"{c['name']} {mode} b={b} s={s}: {med:.1f} ms (p10 {p10:.1f}, p90 {p90:.1f}), "
          f"{fl / (med * 1e-3) / 1e12:.1f} TFLOP/s, peak {peak / 2**30:.2f} GiB, resident {resident / 2**30:.2f} GiB, "
          f"loss {loss.item():.3f}, warm-up {warm_s:.1f} s", flush=True)
    del model, opt, run
    if cuda:
        torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--device", default="cuda")
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--compiled", default="", help="compiled shapes only, e.g. 1x2048,2x8192 (eager skipped)")
    a = p.parse_args()
    c = dict(TINY, name="tiny") if a.tiny else dict(LLAMA_1B, name="llama3.2-1b")
    shapes = ((1, 128), (2, 256)) if a.tiny else SHAPES
    compiled = ((2, 256),) if a.tiny else COMPILED_SHAPES
    if a.compiled:
        shapes, compiled = (), tuple(tuple(int(v) for v in x.split("x")) for x in a.compiled.split(","))
    gpu = torch.cuda.get_device_name() if a.device == "cuda" else "cpu"
    note = f"torch {torch.__version__}, {gpu}, fp32 params + autocast bf16, fused AdamW"
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "mode", "micro_batch", "seq", "tokens", "params", "step_ms", "step_p10_ms", "step_p90_ms",
                    "tokens_per_s", "model_tflops", "peak_bytes", "resident_bytes", "note"])
        for mode, grid in (("eager", shapes), ("compiled", compiled)):
            for b, s in grid:
                try:
                    measure(c, mode, b, s, a.device, note, w)
                except (RuntimeError, torch.OutOfMemoryError) as e:
                    print(c["name"], mode, b, s, "failed:", str(e).splitlines()[0], flush=True)
                f.flush()
    print("wrote", a.out)


if __name__ == "__main__":
    main()
