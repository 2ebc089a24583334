#!/usr/bin/env python3
"""Measures flash attention forward and backward with PyTorch's scaled_dot_product_attention
and appends rows to a fathom calibration CSV (see scenarios/calibration_io.h).

    attention.py OUT_DIR/measurements.csv

The table's rows use the cuDNN backend (FlashAttention-3 class on Hopper: what the catalog's
attention efficiencies describe); the same shapes on the flash backend (FlashAttention-2 class)
go to OUT_DIR/measurements.csv.fa2.csv, whose ratio to the table rows is the device's
`attention_fa2_relative`. Without cuDNN attention, the flash backend's rows go to the table and the
note column says so.

Shapes: batch x heads x seq x head_dim over the training (causal self-attention) grid; time per
call is the median of several CUDA-event timed trials after warm-up, like fathom_calibrate.
"""
import csv
import statistics
import sys

import torch
import torch.nn.functional as F

TRIALS, WARMUP = 7, 3
GRID = [(b, h, s, d) for d in (128,) for (b, s) in ((32, 512), (16, 1024), (8, 2048), (4, 4096), (2, 8192), (1, 16384))
        for h in (8, 16, 32, 64)] + [(1, 8, 16384, 256), (8, 8, 2048, 256)]


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


def measure(backend, b, h, s, d, causal):
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    flops_fwd = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    with torch.nn.attention.sdpa_kernel(backend):
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        reps = max(3, min(200, int(2e13 / max(flops_fwd, 1))))
        fwd_t = timed(fwd, reps)
        o = fwd()
        g = torch.randn_like(o)
        bwd = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
        bwd_t = timed(bwd, reps)
    return flops_fwd, fwd_t, bwd_t


def write(w, b, h, s, d, causal, flops_fwd, fwd_t, bwd_t, note):
    for op, flops, (m_, a_, z_) in (("attention_fwd", flops_fwd, fwd_t), ("attention_bwd", 2.5 * flops_fwd, bwd_t)):
        w.writerow([op, "bf16", "", "", "", b, h, h, s, s, d, int(causal), "", f"{m_:.4f}", f"{a_:.4f}",
                    f"{z_:.4f}", f"{flops / (m_ * 1e-6) / 1e12:.3f}", note])


def main():
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
    print("appended attention rows to", sys.argv[1], "and", sys.argv[1] + ".fa2.csv")


if __name__ == "__main__":
    main()
