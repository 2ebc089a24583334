#!/usr/bin/env python3
"""How much a tensor-core kernel slows down while a communication-like kernel runs beside it on
the same GPU: the mechanism behind part of the gap between a step's summed kernel times and the
measured step when collectives overlap compute (NCCL's kernels take SMs and memory bandwidth).

    overlap.py OUT.csv [--ce]

The interferer is a persistent copy kernel (Triton) with a fixed number of CTAs of 512 threads,
as NCCL runs one CTA of NCCL_NTHREADS=512 per channel (ring/tree on Hopper: 16-32 channels; NVLS
fewer), streaming a 1 GiB buffer from HBM to HBM (read + write, as a ring all-reduce's
copy/reduce steps do locally). Compute kernels: an 8192^3 bf16 GEMM, the same through
torch._scaled_mm in fp8, a Llama 3 70B TP 8 down projection (8192 tokens x 3584 -> 8192, bf16),
and the cuDNN flash attention forward of 1 x 32 heads x 8k tokens x 128 (causal).

For each (compute, CTAs) pair, two runs on two streams started together:
  slowdown: interferer launches queued to outlast the compute window; the compute window
            (N calls timed with CUDA events) over the same N calls alone = compute slowdown.
  bandwidth: compute calls queued to outlast the interferer window; the interferer's bytes
            moved per second while compute ran, against its bandwidth alone.
Columns: compute, ctas, compute_alone_us, compute_overlap_us, slowdown, copy_alone_gbs,
copy_overlap_gbs, note. Bytes count read + write. About a minute on an H100.

--ce: the interferer is a plain device-to-device copy of the same buffer (Tensor.copy_, which
PyTorch issues as cudaMemcpyAsync DeviceToDevice), reported with ctas 0. Whether the driver runs a
same-device copy on the copy engines or on SMs is not visible here; on an H100 it moved 3.0 TB/s
alone and slowed compute as much as the copy kernel on all 132 SMs (1.49-1.82).
"""
import csv
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr, NPROG: tl.constexpr):
    pid = tl.program_id(0)
    for start in range(pid * BLOCK, n, NPROG * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


BLOCK = 8192  # fp32 elements per CTA per iteration: 32 KiB


def interferer(ctas):
    n = (1 << 30) // 4
    src = torch.randn(n, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)

    def fn():
        copy_kernel[(ctas,)](src, dst, n, BLOCK=BLOCK, NPROG=ctas, num_warps=16)

    return fn, 2.0 * n * 4


def ce_interferer():
    n = (1 << 30) // 4
    src = torch.randn(n, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)

    def fn():
        dst.copy_(src, non_blocking=True)

    return fn, 2.0 * n * 4


def computes():
    out = {}
    a, b = (torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out["gemm_bf16_8192"] = lambda: torch.matmul(a, b)
    if hasattr(torch, "_scaled_mm"):
        a8 = torch.randn(8192, 8192, device="cuda").to(torch.float8_e4m3fn)
        b8 = torch.randn(8192, 8192, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")
        out["gemm_fp8_8192"] = lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                         use_fast_accum=True)
    x, w = torch.randn(8192, 3584, device="cuda", dtype=torch.bfloat16), torch.randn(3584, 8192, device="cuda",
                                                                                    dtype=torch.bfloat16)
    out["down_70b_tp8"] = lambda: torch.matmul(x, w)
    q, k, v = (torch.randn(1, 32, 8192, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))

    def attn():
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=True)

    out["attn_cudnn_fwd_8k"] = attn
    return out


def window(fn, calls, stream):
    """Queues `calls` calls of fn on stream between two events; returns the events."""
    with torch.cuda.stream(stream):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(stream)
        for _ in range(calls):
            fn()
        e1.record(stream)
    return e0, e1


def alone_us(fn, calls, stream):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        e0, e1 = window(fn, calls, stream)
        torch.cuda.synchronize()
        best = min(best, e0.elapsed_time(e1) * 1e3 / calls)
    return best


def together(fn_a, calls_a, fn_b, calls_b, sa, sb):
    """Starts both windows together (a gate event on the default stream); returns a's and b's
    per-call times in microseconds."""
    torch.cuda.synchronize()
    gate = torch.cuda.Event()
    torch.cuda._sleep(20_000_000)  # ~10 ms of spin on the default stream so both queues fill first
    gate.record()
    sa.wait_event(gate)
    sb.wait_event(gate)
    ea = window(fn_a, calls_a, sa)
    eb = window(fn_b, calls_b, sb)
    torch.cuda.synchronize()
    return ea[0].elapsed_time(ea[1]) * 1e3 / calls_a, eb[0].elapsed_time(eb[1]) * 1e3 / calls_b


def main():
    out = sys.argv[1]
    ce = "--ce" in sys.argv[2:]
    sa, sb = torch.cuda.Stream(), torch.cuda.Stream()
    comp = computes()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    note = f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}, {sms} SMs"
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["compute", "ctas", "compute_alone_us", "compute_overlap_us", "slowdown", "copy_alone_gbs",
                    "copy_overlap_gbs", "note"])
        for ctas in ((0,) if ce else (8, 16, 32, 64, sms)):
            cp, cp_bytes = ce_interferer() if ce else interferer(ctas)
            cp_us = alone_us(cp, 5, sb)
            for name, fn in comp.items():
                try:
                    c_us = alone_us(fn, 20, sa)
                    calls = max(20, int(100_000 / c_us))  # ~100 ms of compute
                    n_cp = int(calls * c_us * 1.3 / cp_us) + 2  # the copy outlasts the compute window
                    c_ov, _ = together(fn, calls, cp, n_cp, sa, sb)
                    n_cp2 = max(2, int(100_000 / cp_us))  # ~100 ms of copy...
                    calls2 = int(n_cp2 * cp_us * 2.0 / c_us) + 2  # ...inside a compute window twice as long
                    _, cp_ov = together(fn, calls2, cp, n_cp2, sa, sb)
                    row = [name, ctas, f"{c_us:.2f}", f"{c_ov:.2f}", f"{c_ov / c_us:.4f}",
                           f"{cp_bytes / cp_us / 1e3:.0f}", f"{cp_bytes / cp_ov / 1e3:.0f}", note]
                    w.writerow(row)
                    f.flush()
                    print(" ".join(str(x) for x in row[:7]), flush=True)
                except (RuntimeError, torch.OutOfMemoryError) as e:
                    print(name, ctas, "failed:", str(e).splitlines()[0], flush=True)
            del cp
            torch.cuda.empty_cache()
    print("wrote", out)


if __name__ == "__main__":
    main()
