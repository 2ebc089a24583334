#!/usr/bin/env python3
"""Measures flash attention forward and backward with PyTorch's scaled_dot_product_attention
(flash backend) and appends rows to a fathom calibration CSV (see scenarios/calibration_io.h).

    attention.py OUT_DIR/measurements.csv

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


def main():
    out = open(sys.argv[1], "a", newline="")
    w = csv.writer(out)
    for (b, h, s, d) in GRID:
        for causal in (True, False):
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
            flops_fwd = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
                fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                reps = max(3, min(200, int(2e13 / max(flops_fwd, 1))))
                med, p10, p90 = timed(fwd, reps)
                o = fwd()
                g = torch.randn_like(o)
                bwd = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
                bmed, bp10, bp90 = timed(bwd, reps)
            for op, flops, (m_, a_, z_) in (("attention_fwd", flops_fwd, (med, p10, p90)),
                                            ("attention_bwd", 2.5 * flops_fwd, (bmed, bp10, bp90))):
                w.writerow([op, "bf16", "", "", "", b, h, h, s, s, d, int(causal), "", f"{m_:.4f}", f"{a_:.4f}",
                            f"{z_:.4f}", f"{flops / (m_ * 1e-6) / 1e12:.3f}", f"torch {torch.__version__} sdpa flash"])
            out.flush()
    print("appended attention rows to", sys.argv[1])


if __name__ == "__main__":
    main()
