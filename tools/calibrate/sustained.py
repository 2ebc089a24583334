#!/usr/bin/env python3
"""Throughput and clocks of one kernel class under sustained load, for the catalog's
`sustained_clock` question: do attention kernels slow down under minutes of load as much as
GEMMs do?

    sustained.py OUT.csv [--seconds 60] [--only gemm_bf16,attn_cudnn,...]

Each workload runs back to back for `seconds` (after 3 warm-up calls); every ~0.25 s the achieved
TFLOP/s of the calls in that window is recorded together with the GPU's SM clock, power and
temperature, sampled by a thread through nvidia-smi (the mean of the samples that fall in the
window). Workloads (bf16 unless named):
  gemm_bf16   8192 x 8192 x 8192 torch.matmul (random operands: zeros draw less power)
  gemm_fp8    the same shape through torch._scaled_mm (e4m3, per-tensor scales), where present
  attn_cudnn  SDPA cuDNN backend, forward + backward, 1 x 32 heads x 16k tokens x head dim 128,
              causal (FlashAttention-3 class on Hopper)
  attn_flash  the same on SDPA's flash backend (FlashAttention-2 class)
  mix         Llama 3 70B TP 8-shaped layer GEMMs (QKV, projection, gate-up, down at 8k tokens)
              alternating with the cuDNN attention above: a training step's mix

OUT.csv gets one row per window: workload, t_s, tflops, sm_clock_mhz, power_w, temp_c. The
summary printed at the end gives, per workload, the first 5 s (burst) and last 30 s (sustained)
mean TFLOP/s and clocks and their ratio. fathom prices every tensor op at
burst efficiency x `sustained_clock` (0.71 on H100 SXM, fitted on GEMM-heavy dense training); if
attention's sustained/burst ratio is clearly above the GEMMs', long-context training (where
attention is 80% of the FLOPs) wants an attention clock of its own (see the closing notes of the
training-accuracy issue: the 128k Qwen3-235B case is predicted 19% slow). Needs PyTorch with CUDA
and nvidia-smi; about 5 minutes at the default 60 s per workload.
"""
import argparse
import csv
import statistics
import subprocess
import threading
import time

import torch
import torch.nn.functional as F


class Sampler(threading.Thread):
    """Polls nvidia-smi for SM clock, power and temperature every `period` seconds."""

    def __init__(self, period=0.2):
        super().__init__(daemon=True)
        self.period, self.samples, self.stop = period, [], threading.Event()

    def run(self):
        query = ["nvidia-smi", "--id=%d" % torch.cuda.current_device(),
                 "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader,nounits"]
        while not self.stop.is_set():
            try:
                line = subprocess.run(query, capture_output=True, text=True, timeout=5).stdout.strip().splitlines()[0]
                clock, power, temp = (float(x) for x in line.split(","))
                self.samples.append((time.monotonic(), clock, power, temp))
            except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
                pass
            self.stop.wait(self.period)

    def mean_between(self, t0, t1):
        # One nvidia-smi call takes tens of milliseconds, so a 0.25 s window may hold no sample:
        # then the sample nearest the window's middle stands for it.
        samples = list(self.samples)  # the thread appends while we read
        inside = [s for s in samples if t0 <= s[0] <= t1]
        if not inside:
            if not samples:
                return float("nan"), float("nan"), float("nan")
            mid = 0.5 * (t0 + t1)
            inside = [min(samples, key=lambda s: abs(s[0] - mid))]
        return tuple(statistics.fmean(s[i] for s in inside) for i in (1, 2, 3))


def gemm_bf16():
    a, b = (torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    return (lambda: torch.matmul(a, b)), 2.0 * 8192 ** 3


def gemm_fp8():
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        raise RuntimeError("torch._scaled_mm not available")
    a = torch.randn(8192, 8192, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(8192, 8192, device="cuda").to(torch.float8_e4m3fn).t()  # column-major second operand
    one = torch.ones((), device="cuda")
    fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True)
    fn()
    return fn, 2.0 * 8192 ** 3


def attention(backend):
    b, h, s, d = 1, 32, 16384, 128
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    g = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)

    def fn():
        with torch.nn.attention.sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            torch.autograd.grad(o, (q, k, v), g)

    fn()
    # Forward 4 b h s^2 d / 2 (causal), backward 2.5 x that (as fathom and FlashAttention count).
    return fn, 3.5 * 4.0 * b * h * s * s * d * 0.5


def mix():
    t, hidden = 8192, 8192  # Llama 3 70B, TP 8: QKV 8192 -> 1280, proj 1024 -> 8192, gate-up -> 7168, down 3584 -> 8192
    shapes = [(t, 1280, hidden), (t, hidden, 1024), (t, 7168, hidden), (t, hidden, 3584)]
    mats = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), torch.randn(k, n, device="cuda", dtype=torch.bfloat16))
            for (m, n, k) in shapes]
    attn, attn_flops = attention(torch.nn.attention.SDPBackend.CUDNN_ATTENTION)

    def fn():
        for a, b in mats:
            torch.matmul(a, b)
        attn()

    return fn, sum(2.0 * m * n * k for (m, n, k) in shapes) + attn_flops


def workloads():
    SDP = torch.nn.attention.SDPBackend
    return {"gemm_bf16": gemm_bf16, "gemm_fp8": gemm_fp8, "attn_cudnn": lambda: attention(SDP.CUDNN_ATTENTION),
            "attn_flash": lambda: attention(SDP.FLASH_ATTENTION), "mix": mix}


def run(name, make, seconds, sampler, writer):
    try:
        fn, flops = make()
    except (RuntimeError, AttributeError, TypeError) as e:
        print(f"{name}: skipped ({str(e).splitlines()[0]})")
        return []
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    rows, start = [], time.monotonic()
    while time.monotonic() - start < seconds:
        t0, calls = time.monotonic(), 0
        while time.monotonic() - t0 < 0.25:
            fn()
            calls += 1
            if calls % 4 == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        t1 = time.monotonic()
        clock, power, temp = sampler.mean_between(t0, t1)
        row = (name, round(t1 - start, 3), calls * flops / (t1 - t0) / 1e12, clock, power, temp)
        rows.append(row)
        writer.writerow([row[0], f"{row[1]:.3f}", f"{row[2]:.2f}", f"{row[3]:.0f}", f"{row[4]:.1f}", f"{row[5]:.0f}"])
    return rows


def summary(name, rows):
    burst = [r for r in rows if r[1] <= 5.0]
    tail = [r for r in rows if r[1] >= rows[-1][1] - 30.0]
    if not burst or not tail:
        return
    def mean(rs, i):
        values = [r[i] for r in rs if r[i] == r[i]]  # NaN (no clock sample at all) left out
        return statistics.fmean(values) if values else float("nan")

    b, s = mean(burst, 2), mean(tail, 2)
    print(f"{name:11s} burst {b:7.1f} TFLOP/s at {mean(burst, 3):5.0f} MHz {mean(burst, 4):4.0f} W | "
          f"sustained {s:7.1f} TFLOP/s at {mean(tail, 3):5.0f} MHz {mean(tail, 4):4.0f} W | ratio {s / b:.3f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--only", default="")
    a = p.parse_args()
    chosen = [w for w in a.only.split(",") if w] or list(workloads())
    unknown = [w for w in chosen if w not in workloads()]
    if unknown:
        raise SystemExit(f"unknown workload(s) {', '.join(unknown)}: expected {', '.join(workloads())}")
    sampler = Sampler()
    sampler.start()
    results = {}
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["workload", "t_s", "tflops", "sm_clock_mhz", "power_w", "temp_c"])
        for name in chosen:
            results[name] = run(name, workloads()[name], a.seconds, sampler, w)
            f.flush()
            torch.cuda.empty_cache()
            time.sleep(5)  # let the clocks recover between workloads
    sampler.stop.set()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    for name, rows in results.items():
        summary(name, rows)


if __name__ == "__main__":
    main()
