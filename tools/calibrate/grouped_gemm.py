#!/usr/bin/env python3
"""Grouped (expert) GEMMs against the dense GEMM of the same FLOPs, bf16 and fp8, over rows per
expert: how far a mixture-of-experts layer's grouped GEMMs fall below fathom's dense price.

    grouped_gemm.py OUT_DIR/grouped_gemm.csv

For each expert shape (the FC1 gate-up and FC2 GEMMs of Qwen3-30B-A3B, Qwen3-235B-A22B,
DeepSeek-V3 and Mixtral 8x7B experts) and rows per expert in 128..8192, times
  - grouped: torch._grouped_mm over E local experts of `rows` rows each (CUTLASS grouped GEMM on
    sm90, what moe_layers.py runs; Megatron-Core's TEGroupedLinear is the same class of kernel),
    and for fp8 torch._scaled_grouped_mm with row-wise scales, where present;
  - dense: one torch.matmul (bf16) or torch._scaled_mm (fp8, per-tensor scales) of
    [E x rows, K] x [K, N], the GEMM fathom prices a grouped GEMM as (per expert, then summed);
and writes the ratio dense / grouped time (1: the grouped kernel is as fast as the dense one).
Per-expert problems whose rows are not a multiple of the tile are the grouped kernel's own loss,
so the rows grid includes 192 and 768. Timing: layers.timed (CUDA events, ~20 ms trials, median).

Columns: model, gemm, dtype, experts, rows_per_expert, n, k, grouped_us, dense_us, grouped_tflops,
dense_tflops, ratio, note. About 2 minutes on an H100.
"""
import csv
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402  (the timing loop)

# model: (hidden, expert_ffn, local experts): EP so that each rank holds 8-16 experts, as the
# shared training cases run them (Qwen3-30B EP 16: 8; Qwen3-235B EP 8: 16; DeepSeek-V3 EP 32: 8;
# Mixtral EP 1: 8).
EXPERTS = {
    "qwen3-30b-a3b": (2048, 768, 8),
    "qwen3-235b-a22b": (4096, 1536, 16),
    "deepseek-v3": (7168, 2048, 8),
    "mixtral-8x7b": (4096, 14336, 8),
}
ROWS = (128, 192, 256, 512, 768, 1024, 2048, 4096, 8192)
MAX_ELEMS = 3e9  # skip shapes whose operands and output exceed ~6 GB in bf16


def bf16_pair(e, rows, n, k):
    a = torch.randn(e * rows, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(e, n, k, device="cuda", dtype=torch.bfloat16)
    offs = torch.arange(rows, e * rows + 1, rows, device="cuda", dtype=torch.int32)
    grouped = lambda: torch._grouped_mm(a, w.transpose(-2, -1), offs=offs)
    wd = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    dense = lambda: torch.matmul(a, wd)
    return grouped, dense


def fp8_pair(e, rows, n, k):
    f8 = torch.float8_e4m3fn
    a = torch.randn(e * rows, k, device="cuda").to(f8)
    w = torch.randn(e, n, k, device="cuda").to(f8)
    offs = torch.arange(rows, e * rows + 1, rows, device="cuda", dtype=torch.int32)
    sa = torch.ones(e * rows, device="cuda", dtype=torch.float32)
    sb = torch.ones(e, n, device="cuda", dtype=torch.float32)
    grouped = lambda: torch._scaled_grouped_mm(a, w.transpose(-2, -1), sa, sb, offs=offs, out_dtype=torch.bfloat16,
                                                  use_fast_accum=True)
    wd = torch.randn(n, k, device="cuda").to(f8).t()  # column-major second operand
    one = torch.ones((), device="cuda")
    dense = lambda: torch._scaled_mm(a, wd, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)
    return grouped, dense


def main():
    out = open(sys.argv[1], "w", newline="")
    w = csv.writer(out)
    w.writerow(["model", "gemm", "dtype", "experts", "rows_per_expert", "n", "k", "grouped_us", "dense_us",
                "grouped_tflops", "dense_tflops", "ratio", "note"])
    note = f"torch {torch.__version__}, {torch.cuda.get_device_name()}"
    for model, (hidden, ffn, e) in EXPERTS.items():
        for gemm, n, k in (("fc1", 2 * ffn, hidden), ("fc2", hidden, ffn)):
            for rows in ROWS:
                if e * rows * (k + n) + e * n * k > MAX_ELEMS:
                    continue
                for dtype, make in (("bf16", bf16_pair), ("fp8", fp8_pair)):
                    try:
                        grouped, dense = make(e, rows, n, k)
                        g, d = layers.timed(grouped)[0], layers.timed(dense)[0]
                    except (RuntimeError, AttributeError, TypeError) as x:
                        print(model, gemm, dtype, rows, "skipped:", str(x).splitlines()[0], flush=True)
                        continue
                    flops = 2.0 * e * rows * n * k
                    w.writerow([model, gemm, dtype, e, rows, n, k, f"{g:.2f}", f"{d:.2f}", f"{flops / (g * 1e-6) / 1e12:.1f}",
                                f"{flops / (d * 1e-6) / 1e12:.1f}", f"{d / g:.3f}", note])
                    out.flush()
                    print(f"{model} {gemm} {dtype} E={e} rows={rows}: grouped {g:.1f} us, dense {d:.1f} us, "
                          f"ratio {d / g:.3f}", flush=True)
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
