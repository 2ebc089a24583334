#!/usr/bin/env python3
"""Measures flash attention forward and backward with PyTorch's scaled_dot_product_attention
and appends rows to a fathom calibration CSV (see scenarios/calibration_io.h).

    attention.py OUT_DIR/measurements.csv

The table's rows use the cuDNN backend (FlashAttention-3 class on Hopper: what the catalog's
attention efficiencies describe); the same shapes on the flash backend (FlashAttention-2 class)
go to OUT_DIR/measurements.csv.fa2.csv, whose ratio to the table rows is the device's
`attention_fa2_relative`. Without cuDNN attention, the flash backend's rows go to the table and the
note column says so.

Shapes: batch x heads x seq x head_dim over the training (causal self-attention) grid, then
grouped-query attention (Llama 3 8B and 70B head layouts at TP 1 and 8, enable_gqa); time per call
is the median of several CUDA-event timed trials after warm-up, like fathom_calibrate.

    attention.py --decode OUT_DIR/measurements.csv

appends decode attention rows instead: one query token per sequence over a contiguous KV cache
(batch 1-256, KV length 128-32k, Llama 3 8B and 70B head layouts), SDPA's own backend choice.
"""
import csv
import statistics
import sys

import torch
import torch.nn.functional as F

TRIALS, WARMUP = 7, 3
GRID = [(b, h, s, d) for d in (128,) for (b, s) in ((32, 512), (16, 1024), (8, 2048), (4, 4096), (2, 8192), (1, 16384))
        for h in (8, 16, 32, 64)] + [(1, 8, 16384, 256), (8, 8, 2048, 256)]
# (batch, heads, kv_heads, seq): Llama 3 8B (32/8) and 70B (64/8) at TP 1, 70B at TP 8 (8/1).
GQA_GRID = [(b, h, kvh, s) for (h, kvh) in ((32, 8), (64, 8), (8, 1)) for (b, s) in ((4, 2048), (2, 4096), (1, 8192), (1, 32768))]
# (heads, kv_heads), batch, kv_len for decode; cases whose KV cache exceeds 9 GB are skipped.
DECODE_HEADS = ((32, 8), (64, 8))
DECODE_BATCH = (1, 8, 32, 64, 128, 256)
DECODE_KV = (128, 512, 2048, 8192, 32768)


def timed(fn, reps):
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(TRIALS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        torch.cuda.synchronize()
        times.append(1000.0 * a.elapsed_time(b) / reps)
    times.sort()
    return statistics.median(times), times[int(0.1 * (len(times) - 1) + 0.5)], times[int(0.9 * (len(times) - 1) + 0.5)]


def measure(backend, b, h, s, d, causal, kvh=None):
    kvh = kvh or h
    q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(b, kvh, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    flops_fwd = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    gqa = {"enable_gqa": True} if kvh != h else {}
    with torch.nn.attention.sdpa_kernel(backend):
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)
        reps = max(3, min(200, int(2e13 / max(flops_fwd, 1))))
        fwd_t = timed(fwd, reps)
        o = fwd()
        g = torch.randn_like(o)
        bwd = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
        bwd_t = timed(bwd, reps)
    return flops_fwd, fwd_t, bwd_t


def write(w, b, h, s, d, causal, flops_fwd, fwd_t, bwd_t, note, kvh=None):
    for op, flops, (m_, a_, z_) in (("attention_fwd", flops_fwd, fwd_t), ("attention_bwd", 2.5 * flops_fwd, bwd_t)):
        w.writerow([op, "bf16", "", "", "", b, h, kvh or h, s, s, d, int(causal), "", f"{m_:.4f}", f"{a_:.4f}",
                    f"{z_:.4f}", f"{flops / (m_ * 1e-6) / 1e12:.3f}", note])


def decode(path):
    """One query per sequence over `kv` cached keys: forward only, memory-bound (the KV read)."""
    out = open(path, "a", newline="")
    w = csv.writer(out)
    d = 128
    for (h, kvh) in DECODE_HEADS:
        for b in DECODE_BATCH:
            for kv in DECODE_KV:
                kv_bytes = 2 * b * kvh * kv * d * 2
                if kv_bytes > 9e9:
                    continue
                try:
                    q = torch.randn(b, h, 1, d, device="cuda", dtype=torch.bfloat16)
                    k, v = (torch.randn(b, kvh, kv, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
                    fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                    fn()
                    note = "sdpa default backend, enable_gqa"
                    flops = 4.0 * b * h * kv * d
                    reps = max(3, min(200, int(2e10 / max(kv_bytes, 1))))
                    m_, a_, z_ = timed(fn, reps)
                except RuntimeError as e:
                    print("decode attention", (b, h, kvh, kv), "failed:", str(e).splitlines()[0])
                    q = k = v = None
                    torch.cuda.empty_cache()
                    continue
                w.writerow(["attention_fwd", "bf16", "", "", "", b, h, kvh, 1, kv, d, 0, f"{kv_bytes:.0f}",
                            f"{m_:.4f}", f"{a_:.4f}", f"{z_:.4f}", f"{flops / (m_ * 1e-6) / 1e12:.3f}",
                            f"torch {torch.__version__} {note}; achieved KV read {kv_bytes / (m_ * 1e-6) / 1e9:.0f} GB/s"])
                out.flush()
                del q, k, v
    print("appended decode attention rows to", path)


def main():
    if sys.argv[1] == "--decode":
        decode(sys.argv[2])
        return
    SDP = torch.nn.attention.SDPBackend
    out = open(sys.argv[1], "a", newline="")
    fa2 = open(sys.argv[1] + ".fa2.csv", "a", newline="")
    w, w2 = csv.writer(out), csv.writer(fa2)
    for (b, h, s, d) in GRID:
        for causal in (True, False):
            flash = measure(SDP.FLASH_ATTENTION, b, h, s, d, causal)
            try:
                best, note = measure(SDP.CUDNN_ATTENTION, b, h, s, d, causal), "sdpa cudnn"
            except RuntimeError:
                best, note = flash, "sdpa flash (no cudnn attention: fa2 class)"
            write(w, b, h, s, d, causal, *best, f"torch {torch.__version__} {note}")
            write(w2, b, h, s, d, causal, *flash, f"torch {torch.__version__} sdpa flash (fa2 class)")
            out.flush()
            fa2.flush()
    for (b, h, kvh, s) in GQA_GRID:
        best = None
        for backend, note in ((SDP.CUDNN_ATTENTION, "sdpa cudnn"), (SDP.FLASH_ATTENTION, "sdpa flash (fa2 class)")):
            try:
                best, used = measure(backend, b, h, s, 128, True, kvh), note
                break
            except RuntimeError:
                continue
        if best is None:
            print("no GQA attention backend for", (b, h, kvh, s))
            continue
        write(w, b, h, s, 128, True, *best, f"torch {torch.__version__} {used}, enable_gqa", kvh)
        out.flush()
        torch.cuda.empty_cache()
    print("appended attention rows to", sys.argv[1], "and", sys.argv[1] + ".fa2.csv")


if __name__ == "__main__":
    main()
