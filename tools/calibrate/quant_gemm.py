#!/usr/bin/env python3
"""Serving's weight formats on one GPU: the GEMM time of each format against bf16 over the rows
of a batch (1..4096), for the weight GEMMs of Llama 3 8B and 70B.

    quant_gemm.py OUT_DIR/quant_gemm.csv LIBCALIB_EXT.so [KERNEL,KERNEL,...]

(Marlin runs in its own process, campaign.sh: a kernel fault poisons the CUDA context.)

Kernels (serving.dtype names in brackets, workloads/serving/formats.h):
  bf16, fp16    cuBLASLt through F.linear                                  [bf16, fp16]
  w4a16_marlin  Marlin fp16 x int4, group 128 (calib_ext.cu, IST-DASLab)   [w4a16]
  w4a16_tinygemm torch._weight_int4pack_mm bf16 x int4, group 128 (tinygemm, torchao/gpt-fast)
  w8a16_torch   torch._weight_int8pack_mm bf16 x int8, per-channel scale  [w8a16], where CUDA has it
  int8          torch._int_mm int8 x int8 -> int32 (cuBLASLt; rows > 16)  [int8], no quantize step
  fp8           torch._scaled_mm per-tensor scales, fast accumulation      [fp8], no quantize step
  fp8_rowwise   torch._scaled_mm row-wise scales (what vLLM's fp8 per-token/per-channel runs)
vLLM's Hopper W4A16 kernel (Machete) is not here: it needs vLLM's compiled extension, which the
lent machine lacks; Marlin is what vLLM runs for these formats on Ampere and where Machete declines.
Weights cycle through copies holding > 150 MB, so no GEMM finds its weights in the 50 MB L2 (in a
model each layer's weights are read once a step). Each kernel is captured, with its copies, in one
CUDA graph and timed by replays (no launch gaps, as engines run decode). The committed rows of
2026-11-28 were timed by this script's own loop before it took layers.graph_timed (the same
capture; 9 trials of ~10 ms against layers' 7 of ~20 ms now, the median either way).

Columns: model, gemm, kernel, m, n, k, us, tflops, weight_gbps, ratio_bf16, note.
"""
import csv
import ctypes
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402  (the graph timing loop)

SHAPES = {  # (gemm, N, K) at TP 1: Llama 3 8B and 70B (hidden 4096 / 8192, ffn 14336 / 28672, 8 KV heads)
    "llama3-8b": (("qkv", 6144, 4096), ("o", 4096, 4096), ("gate_up", 28672, 4096), ("down", 4096, 14336)),
    "llama3-70b": (("gate_up", 57344, 8192), ("down", 8192, 28672)),
}
ROWS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
L2_DEFEAT = 150e6


def graph_time(calls):
    """Median microseconds a call: `calls` captured as one CUDA graph, timed by its replays
    (layers.graph_timed: warm-ups on a side stream, ~20 ms trials)."""
    return layers.graph_timed(lambda: [c() for c in calls])[0] / len(calls)


def copies(weight_bytes):
    return max(1, min(32, int(L2_DEFEAT / weight_bytes) + 1))


def make(kernel, m, n, k, lib):
    """The calls of one kernel (one per weight copy) and the bytes of one copy's weights."""
    dev = "cuda"
    if kernel in ("bf16", "fp16"):
        dt = torch.bfloat16 if kernel == "bf16" else torch.float16
        x = torch.randn(m, k, device=dev, dtype=dt)
        ws = [torch.randn(n, k, device=dev, dtype=dt) for _ in range(copies(2 * n * k))]
        return [lambda w=w: F.linear(x, w) for w in ws], 2 * n * k
    if kernel == "w4a16_marlin":
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        c = torch.empty(m, n, device=dev, dtype=torch.float16)
        ws = [torch.randint(-2**31, 2**31, (k * n // 8,), device=dev, dtype=torch.int32)
              for _ in range(copies(n * k // 2))]
        s = torch.rand(k // 128, n, device=dev, dtype=torch.float16)
        work = torch.zeros(n // 128 * 16, device=dev, dtype=torch.int32)

        def call(w):
            err = lib.marlin_mul(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(w.data_ptr()),
                                 ctypes.c_void_p(c.data_ptr()), ctypes.c_void_p(s.data_ptr()), m, n, k,
                                 ctypes.c_void_p(work.data_ptr()), 128, torch.cuda.current_device(),
                                 ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), 16)
            if err:
                raise RuntimeError(f"marlin error {err}")
        return [lambda w=w: call(w) for w in ws], n * k // 2
    if kernel == "w4a16_tinygemm":
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        ws = [torch.ops.aten._convert_weight_to_int4pack(
            torch.randint(0, 256, (n, k // 2), device=dev, dtype=torch.uint8), 8) for _ in range(copies(n * k // 2))]
        sz = torch.rand(k // 128, n, 2, device=dev, dtype=torch.bfloat16)
        return [lambda w=w: torch.ops.aten._weight_int4pack_mm(x, w, 128, sz) for w in ws], n * k // 2
    if kernel == "w8a16_torch":
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        ws = [torch.randint(-128, 127, (n, k), device=dev, dtype=torch.int8) for _ in range(copies(n * k))]
        sc = torch.rand(n, device=dev, dtype=torch.bfloat16)
        return [lambda w=w: torch.ops.aten._weight_int8pack_mm(x, w, sc) for w in ws], n * k
    if kernel == "int8":
        if m <= 16:
            raise RuntimeError("torch._int_mm needs more than 16 rows")
        x = torch.randint(-128, 127, (m, k), device=dev, dtype=torch.int8)
        ws = [torch.randint(-128, 127, (n, k), device=dev, dtype=torch.int8) for _ in range(copies(n * k))]
        return [lambda w=w: torch._int_mm(x, w.t()) for w in ws], n * k
    if kernel in ("fp8", "fp8_rowwise"):
        f8 = torch.float8_e4m3fn
        x = torch.randn(m, k, device=dev).to(f8)
        ws = [torch.randn(n, k, device=dev).to(f8) for _ in range(copies(n * k))]
        if kernel == "fp8":
            sa = sb = torch.ones((), device=dev)
        else:
            sa, sb = torch.ones(m, 1, device=dev), torch.ones(1, n, device=dev)
        return [lambda w=w: torch._scaled_mm(x, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                             use_fast_accum=True) for w in ws], n * k
    raise ValueError(kernel)


KERNELS = ("bf16", "fp16", "w4a16_marlin", "w4a16_tinygemm", "w8a16_torch", "int8", "fp8", "fp8_rowwise")


def main():
    lib = ctypes.CDLL(sys.argv[2])
    out = open(sys.argv[1], "w", newline="")
    w = csv.writer(out)
    w.writerow(["model", "gemm", "kernel", "m", "n", "k", "us", "tflops", "weight_gbps", "ratio_bf16", "note"])
    note = f"torch {torch.__version__}, {torch.cuda.get_device_name()}"
    kernels = sys.argv[3].split(",") if len(sys.argv) > 3 else [k for k in KERNELS if k != "w4a16_marlin"]
    failed = set()
    for model, gemms in SHAPES.items():
        for gemm, n, k in gemms:
            for m in ROWS:
                base = None
                for kernel in kernels:
                    if kernel in failed:
                        continue
                    try:
                        calls, wbytes = make(kernel, m, n, k, lib)
                        us = graph_time(calls)
                    except Exception as e:  # a kernel this torch lacks: say so once, go on
                        msg = str(e).splitlines()[0][:160] if str(e) else type(e).__name__
                        if kernel != "int8" or m > 16:
                            failed.add(kernel)
                            w.writerow([model, gemm, kernel, m, n, k, "", "", "", "", f"failed: {msg}"])
                            print(f"{kernel} failed: {msg}", flush=True)
                        continue
                    finally:
                        calls = None
                    if kernel == "bf16":
                        base = us
                    tf = 2.0 * m * n * k / us / 1e6
                    w.writerow([model, gemm, kernel, m, n, k, f"{us:.2f}", f"{tf:.1f}", f"{wbytes / us / 1e3:.0f}",
                                f"{base / us:.3f}" if base else "", note])
                out.flush()
                print(model, gemm, m, "done", flush=True)
    out.close()


if __name__ == "__main__":
    main()
