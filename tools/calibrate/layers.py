#!/usr/bin/env python3
"""Measures whole transformer layers of Llama 3 8B and 70B (TP 1 shapes, bf16, random weights) with
PyTorch: the end-to-end ground truth that fathom's per-op sums must reproduce.

    layers.py OUT_DIR/layers.csv [OUT_DIR/layers_profile.txt]

Rows (one per measured configuration):
  - train:   one layer forward + backward (weights and input require grad), micro-batch 1,
             sequence 4k and 8k, causal attention;
  - forward: the same layer's forward alone (training shapes);
  - prefill: one serving prefill chunk of `tokens` tokens of one sequence with no cached prefix
             (forward, no grad, causal), 128 to 8k tokens;
  - decode:  one decode iteration: `batch` sequences of one new token each over a contiguous KV
             cache of `kv_len` keys (the new key and value written into the cache), eager and
             captured as a CUDA graph (what serving engines run; the graph removes launch gaps).

The layer is written as Megatron/vLLM run it, without custom fused kernels: RMSNorm
(torch.nn.functional.rms_norm), one fused QKV GEMM, rotary embedding (rotate-half), SDPA (cuDNN for
training and prefill where it takes the shape, else SDPA's own choice), output projection,
residual add, RMSNorm, one fused gate-and-up GEMM, SiLU x up, down projection, residual add.
Time per call: median (p10, p90) of 7 CUDA-event timed trials after 3 warm-up calls
(attention.timed).
"""
import csv
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention  # noqa: E402  (its timing loop: same warm-up, trials and percentiles)

WARMUP = attention.WARMUP
MODELS = {  # hidden, heads, kv_heads, ffn (Llama 3 model cards / config.json)
    "llama3-8b": (4096, 32, 8, 14336),
    "llama3-70b": (8192, 64, 8, 28672),
}
HEAD_DIM = 128
TRAIN_SEQ = (4096, 8192)
PREFILL_TOKENS = (128, 512, 1024, 2048, 4096, 8192)
DECODE_BATCH = (1, 8, 32, 64, 128, 256)
DECODE_KV = (512, 2048, 8192)
DT = torch.bfloat16


def timed(fn):
    """Median, p10 and p90 time per call in microseconds (attention.timed), with the launches per
    trial sized from one call so that each trial lasts about 20 ms."""
    for _ in range(WARMUP):
        fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    torch.cuda.synchronize()
    return attention.timed(fn, max(2, min(200, int(20.0 / max(a.elapsed_time(b), 1e-3)))))


def graph_timed(fn):
    """fn captured as a CUDA graph (after two warm-up runs on a side stream, as capture requires)
    and timed by its replays (timed): what serving engines run, without launch gaps."""
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(g):
        fn()
    return timed(g.replay)


class Layer:
    def __init__(self, hidden, heads, kv_heads, ffn, grad):
        def w(*shape):
            return (torch.randn(*shape, device="cuda", dtype=DT) * 0.02).requires_grad_(grad)
        self.h, self.kvh, self.ffn = heads, kv_heads, ffn
        self.wqkv = w(hidden, (heads + 2 * kv_heads) * HEAD_DIM)
        self.wo = w(heads * HEAD_DIM, hidden)
        self.w13 = w(hidden, 2 * ffn)
        self.w2 = w(ffn, hidden)
        self.n1 = torch.ones(hidden, device="cuda", dtype=DT).requires_grad_(grad)
        self.n2 = torch.ones(hidden, device="cuda", dtype=DT).requires_grad_(grad)
        self.params = [self.wqkv, self.wo, self.w13, self.w2, self.n1, self.n2]

    @staticmethod
    def rope(x, cos, sin):  # x: (b, heads, s, d); cos, sin: (s, d)
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def attention_in(self, x, cos, sin):
        b, s, hidden = x.shape
        hn = F.rms_norm(x, (hidden,), self.n1)
        qkv = hn @ self.wqkv
        q, k, v = qkv.split([self.h * HEAD_DIM, self.kvh * HEAD_DIM, self.kvh * HEAD_DIM], dim=-1)
        q = q.view(b, s, self.h, HEAD_DIM).transpose(1, 2)
        k = k.view(b, s, self.kvh, HEAD_DIM).transpose(1, 2)
        v = v.view(b, s, self.kvh, HEAD_DIM).transpose(1, 2)
        return self.rope(q, cos, sin), self.rope(k, cos, sin), v

    def attention_out_and_mlp(self, x, o):
        b, s, hidden = x.shape
        x = x + o.transpose(1, 2).reshape(b, s, self.h * HEAD_DIM) @ self.wo
        hn = F.rms_norm(x, (hidden,), self.n2)
        g, u = (hn @ self.w13).chunk(2, dim=-1)
        return x + (F.silu(g) * u) @ self.w2

    def forward(self, x, cos, sin):
        q, k, v = self.attention_in(x, cos, sin)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.attention_out_and_mlp(x, o)

    def decode(self, x, cos, sin, kc, vc, pos):
        q, k, v = self.attention_in(x, cos, sin)
        kc[:, :, pos:pos + 1].copy_(k)
        vc[:, :, pos:pos + 1].copy_(v)
        o = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True)
        return self.attention_out_and_mlp(x, o)


def rope_tables(s, offset=0):
    inv = 1.0 / (500000.0 ** (torch.arange(0, HEAD_DIM, 2, device="cuda", dtype=torch.float32) / HEAD_DIM))
    t = torch.arange(offset, offset + s, device="cuda", dtype=torch.float32)
    f = torch.outer(t, inv)
    emb = torch.cat((f, f), dim=-1)
    return emb.cos().to(DT), emb.sin().to(DT)


def measure_training(model, hidden, heads, kvh, ffn, row, profile):
    """Forward + backward of one layer, micro-batch 1, and its forward alone, per training length."""
    layer = Layer(hidden, heads, kvh, ffn, grad=True)
    for s in TRAIN_SEQ:
        try:
            cos, sin = rope_tables(s)
            x = torch.randn(1, s, hidden, device="cuda", dtype=DT, requires_grad=True)
            gy = torch.randn(1, s, hidden, device="cuda", dtype=DT)
            inputs = [x] + layer.params

            def step():
                y = layer.forward(x, cos, sin)
                torch.autograd.grad(y, inputs, gy)

            with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.CUDNN_ATTENTION,
                                                 torch.nn.attention.SDPBackend.FLASH_ATTENTION]):
                row(model, "train", 1, s, s, timed(step))
                with torch.no_grad():
                    row(model, "forward", 1, s, s, timed(lambda: layer.forward(x, cos, sin)))
                if s == 4096:
                    profile(f"{model} train s={s}", step)
        except RuntimeError as e:
            print(model, "train", s, "failed:", str(e).splitlines()[0], flush=True)
        torch.cuda.empty_cache()
    del layer
    torch.cuda.empty_cache()


def measure_serving(model, hidden, heads, kvh, ffn, row, profile):
    """Prefill of one sequence per length, and decode steps (eager and as a CUDA graph) per batch and KV length."""
    layer = Layer(hidden, heads, kvh, ffn, grad=False)
    with torch.no_grad():
        for t in PREFILL_TOKENS:
            try:
                cos, sin = rope_tables(t)
                x = torch.randn(1, t, hidden, device="cuda", dtype=DT)
                with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.CUDNN_ATTENTION,
                                                     torch.nn.attention.SDPBackend.FLASH_ATTENTION]):
                    row(model, "prefill", 1, t, t, timed(lambda: layer.forward(x, cos, sin)))
                    if t == 4096:
                        profile(f"{model} prefill t={t}", lambda: layer.forward(x, cos, sin))
            except RuntimeError as e:
                print(model, "prefill", t, "failed:", str(e).splitlines()[0], flush=True)
        for kv in DECODE_KV:
            for b in DECODE_BATCH:
                try:
                    cos, sin = rope_tables(1, kv - 1)
                    x = torch.randn(b, 1, hidden, device="cuda", dtype=DT)
                    kc = torch.randn(b, kvh, kv, HEAD_DIM, device="cuda", dtype=DT)
                    vc = torch.randn(b, kvh, kv, HEAD_DIM, device="cuda", dtype=DT)
                    fn = lambda: layer.decode(x, cos, sin, kc, vc, kv - 1)
                    row(model, "decode", b, 1, kv, timed(fn))
                    row(model, "decode_graph", b, 1, kv, graph_timed(fn), ", CUDA graph")
                    if b == 64 and kv == 2048:
                        profile(f"{model} decode b={b} kv={kv}", fn)
                except RuntimeError as e:
                    print(model, "decode", b, kv, "failed:", str(e).splitlines()[0], flush=True)
                kc = vc = None
                torch.cuda.empty_cache()
    del layer
    torch.cuda.empty_cache()


def main():
    path = sys.argv[1]
    profile_path = sys.argv[2] if len(sys.argv) > 2 else None
    out = open(path, "w", newline="")
    w = csv.writer(out)
    w.writerow(["model", "phase", "batch", "q_len", "kv_len", "time_us", "time_p10_us", "time_p90_us", "note",
                "elementwise"])
    note = f"torch {torch.__version__}, {torch.cuda.get_device_name()}, eager"
    profiles = []

    def row(model, phase, b, q, kv, t, extra=""):
        w.writerow([model, phase, b, q, kv, f"{t[0]:.2f}", f"{t[1]:.2f}", f"{t[2]:.2f}", note + extra, "eager"])
        out.flush()
        print(model, phase, b, q, kv, f"{t[0]:.1f} us", flush=True)

    def profile(label, fn):
        if not profile_path:
            return
        try:
            from torch.profiler import profile as prof, ProfilerActivity
            fn()
            torch.cuda.synchronize()
            with prof(activities=[ProfilerActivity.CUDA]) as p:
                fn()
                torch.cuda.synchronize()
            try:
                table = p.key_averages().table(sort_by="device_time_total", row_limit=30)
            except Exception:
                table = p.key_averages().table(sort_by="cuda_time_total", row_limit=30)
            profiles.append(f"== {label}\n" + table)
        except Exception as e:  # the profile is a diagnostic; the timings above stand without it
            print("profile", label, "failed:", e, flush=True)

    for model, (hidden, heads, kvh, ffn) in MODELS.items():
        measure_training(model, hidden, heads, kvh, ffn, row, profile)
        measure_serving(model, hidden, heads, kvh, ffn, row, profile)
    if profile_path:
        with open(profile_path, "w") as f:
            f.write("\n\n".join(profiles))
    print("wrote", path)


if __name__ == "__main__":
    main()
