#!/usr/bin/env python3
"""Host <-> GPU copies as KV-cache offloading runs them: what a host tier's load really costs.

    kv_copies.py OUT_DIR/kv_copies.csv LIBCALIB_EXT.so

Rows (method, direction, block_bytes, blocks):
  single     one copy of block_bytes (pinned and pageable host memory): the link's curve
  memcpy     `blocks` blocks, one cudaMemcpyAsync each from a C loop (vLLM's ops.swap_blocks, which
             its CPU offloading connector calls per layer), scattered over a larger pool
  uva_<c>    the same blocks read by c CTAs of 512 threads straight from pinned host memory (LMCache's
             and SGLang HiCache's transfer kernels)
Block sizes: a 16-token vLLM block of one layer's K or V (Llama 3 8B: 16 x 8 heads x 128 x 2 B =
32 KiB), LMCache's 256-token chunk of one layer's K and V (1 MiB) and of all 32 layers (32 MiB).
Pools are 1 GiB (host) and 1 GiB (GPU); the blocks' order is a random permutation.
Columns: method, direction, host, block_bytes, blocks, us, gbps, us_per_block, note.
"""
import csv
import ctypes
import statistics
import sys

import torch

POOL = 1 << 30
TRIALS = 7


def timed(fn):
    fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(TRIALS):
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(1000.0 * a.elapsed_time(b))
    return statistics.median(times)


def main():
    lib = ctypes.CDLL(sys.argv[2])
    lib.swap_blocks.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                ctypes.c_void_p]
    lib.uva_gather.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    out = open(sys.argv[1], "w", newline="")
    w = csv.writer(out)
    w.writerow(["method", "direction", "host", "block_bytes", "blocks", "us", "gbps", "us_per_block", "note"])
    note = f"torch {torch.__version__}, {torch.cuda.get_device_name()}"
    host = torch.empty(POOL, dtype=torch.uint8, pin_memory=True)
    host.fill_(1)
    gpu = torch.empty(POOL, dtype=torch.uint8, device="cuda")
    gpu.fill_(2)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def row(method, direction, kind, block, blocks, us):
        w.writerow([method, direction, kind, block, blocks, f"{us:.1f}", f"{block * blocks / us / 1e3:.2f}",
                    f"{us / blocks:.3f}", note])
        out.flush()

    # The link's curve: one copy, pinned and pageable.
    pageable = torch.empty(POOL, dtype=torch.uint8)
    pageable.fill_(1)
    for size in (4 << 10, 32 << 10, 256 << 10, 1 << 20, 4 << 20, 32 << 20, 256 << 20, 1 << 30):
        for kind, h in (("pinned", host), ("pageable", pageable)):
            if kind == "pageable" and size < (1 << 20):
                continue
            row("single", "h2d", kind, size, 1, timed(lambda: gpu[:size].copy_(h[:size], non_blocking=True)))
            row("single", "d2h", kind, size, 1, timed(lambda: h[:size].copy_(gpu[:size], non_blocking=True)))
        print("single", size, flush=True)
    del pageable

    gen = torch.Generator().manual_seed(0)
    for block, total in ((8 << 10, 64 << 20), (32 << 10, 256 << 20), (128 << 10, 256 << 20), (1 << 20, 512 << 20),
                         (4 << 20, 512 << 20), (32 << 20, 512 << 20)):
        blocks = total // block
        slots = POOL // block
        src = torch.randperm(slots, generator=gen)[:blocks]
        dst = torch.randperm(slots, generator=gen)[:blocks]
        for direction in ("h2d", "d2h"):
            s_base, d_base = (host, gpu) if direction == "h2d" else (gpu, host)
            m = torch.stack([src, dst], 1).contiguous().to(torch.int64)
            m_dev = m.cuda()
            sp, dp = s_base.data_ptr(), d_base.data_ptr()
            us = timed(lambda: lib.swap_blocks(sp, dp, m.data_ptr(), blocks, block, stream))
            row("memcpy", direction, "pinned", block, blocks, us)
            for ctas in (8, 32, 132):
                us = timed(lambda: lib.uva_gather(sp, dp, m_dev.data_ptr(), blocks, block, ctas, 512, stream))
                row(f"uva_{ctas}", direction, "pinned", block, blocks, us)
        print("blocks", block, flush=True)
    out.close()


if __name__ == "__main__":
    main()
