#!/usr/bin/env python3
"""Host (CPU) cost of eager PyTorch training, and what a host synchronisation in every
mixture-of-experts layer costs: the ground truth for a host model of eager training stacks.

    host_overhead.py OUT_DIR/host_overhead.csv

Rows (columns: case, model, tokens, layers, variant, wall_us, host_us, per, note):
  - launch: one aten op on a one-element tensor, eager, no grad (`add`), and one autograd op
    forward + backward (`mul` in a chain of 256, backward included): microseconds per op of host
    time (the GPU work is a few microseconds, below the host's);
  - enqueue: one layer's forward + backward (Llama 3 8B dense, Qwen3-30B-A3B and Mixtral 8x7B MoE
    from moe_layers.py, EP 1) at micro-batch 1 and 128 / 4,096 tokens: `host_us` is the time the
    host takes to enqueue the step (no synchronisation inside, the launch queue not full) and
    `wall_us` the step's time to completion from an idle GPU;
  - kernels: the GPU kernels one such layer's forward + backward launches (wall_us and host_us
    columns hold the count), by the PyTorch profiler;
  - chain: four such layers forward then backward as one model step, `variant` nosync (the expert
    offsets stay on the GPU, as torch._grouped_mm takes them) or sync (the tokens per expert are
    copied to the host in every layer's forward, as Megatron-Core's alltoall dispatcher and
    Transformer Engine's GroupedLinear m_splits do without CUDA graphs) or loop (sync, then one
    GEMM per expert for FC1 and FC2 from host-side splits, as TE GroupedLinear and the sequential
    MLP launch them); `wall_us` per layer (median of 7 steps after 3 warm-up steps).
  - qwen3-30b-a3b-ep16-local: the expert block one GPU of an EP 16 run of Qwen3-30B-A3B holds (8 of
    the 128 experts, each receiving 4,096 rows at 4,096 tokens a GPU under balanced routing),
    emulated as 8 experts with top-8 routing: every token to every local expert.
    `host_overhead.py OUT.csv MODEL...` runs only the models named.
Also prints the CPU model: host costs are properties of the host CPU and the PyTorch version.
"""
import csv
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402
import moe_layers  # noqa: E402

DT = layers.DT
CHAIN = 4
TRIALS, WARMUP = 7, 3
MOE = dict(moe_layers.MODELS, **{"qwen3-30b-a3b-ep16-local": (2048, 32, 4, 8, 8, 768)})


def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return next(l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name"))
    except Exception:  # noqa: BLE001
        return "unknown CPU"


class SyncMoe(moe_layers.MoeLayer):
    """The MoE layer whose forward copies the tokens per expert to the host (sync) and, with
    loop, runs one GEMM per expert from those host-side splits."""

    def __init__(self, *a, variant="sync", **k):
        super().__init__(*a, **k)
        self.variant = variant

    def moe(self, hn):
        wts, flat, order, inverse = self.route(hn)
        counts = torch.bincount(flat, minlength=self.e)
        splits = counts.cpu().tolist()  # the host synchronisation
        xs = moe_layers.Permute.apply(hn, order, inverse, self.k)
        if self.variant == "loop":
            outs = []
            for e, part in enumerate(xs.split(splits, dim=0)):
                g, u = (part @ self.w13[e].t()).chunk(2, dim=-1)
                outs.append((F.silu(g) * u) @ self.w2[e].t())
            y = torch.cat(outs, dim=0)
        else:
            offs = torch.cumsum(counts, 0).to(torch.int32)
            g, u = torch._grouped_mm(xs, self.w13.transpose(-2, -1), offs=offs).chunk(2, dim=-1)
            y = torch._grouped_mm(F.silu(g) * u, self.w2.transpose(-2, -1), offs=offs)
        return self.combine(y, wts, order, inverse)


def make_layer(model, variant):
    if model in layers.MODELS:
        return layers.Layer(*layers.MODELS[model], grad=True)
    spec = MOE[model]
    if variant == "nosync":
        return moe_layers.MoeLayer(*spec, grad=True)
    return SyncMoe(*spec, grad=True, variant=variant)


def step_fn(stack, s, hidden):
    cos, sin = layers.rope_tables(s)
    x = torch.randn(1, s, hidden, device="cuda", dtype=DT, requires_grad=True)
    gy = torch.randn(1, s, hidden, device="cuda", dtype=DT)
    inputs = [x] + [p for l in stack for p in l.params]

    def step():
        h = x
        for l in stack:
            h = l.forward(h, cos, sin)
        torch.autograd.grad(h, inputs, gy)
    return step


def walls(step):
    """Median wall and host-enqueue microseconds of `step` from an idle GPU."""
    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    wall, host = [], []
    for _ in range(TRIALS):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        wall.append(1e6 * (t2 - t0))
        host.append(1e6 * (t1 - t0))
    return statistics.median(wall), statistics.median(host)


def kernel_count(step):
    """GPU kernels (and memsets/copies) one call of `step` launches, by the PyTorch profiler."""
    from torch.profiler import profile, ProfilerActivity
    step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        step()
        torch.cuda.synchronize()
    return sum(1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def launch_rows(row):
    x = torch.ones(1, device="cuda")
    n = 2000
    for _ in range(3):
        for _ in range(n):
            x.add_(1)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
    row("launch", "aten_add", 1, 1, "eager", 1e6 * (t2 - t0) / n, 1e6 * (t1 - t0) / n, "op")
    w = torch.ones(1, device="cuda", requires_grad=True)
    chain = 256

    def fb():
        h = w
        for _ in range(chain):
            h = h * 1.0001
        h.backward()
    wall, host = walls(fb)
    row("launch", "autograd_mul", 1, 1, "fwd+bwd", wall / chain, host / chain, "op")


def main():
    path = sys.argv[1]
    note = f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {cpu_name()}, eager"
    print(note, flush=True)
    out = open(path, "w", newline="")
    wr = csv.writer(out)
    wr.writerow(["case", "model", "tokens", "layers", "variant", "wall_us", "host_us", "per", "note"])

    def row(case, model, tokens, nl, variant, wall, host, per):
        wr.writerow([case, model, tokens, nl, variant, f"{wall:.1f}", f"{host:.1f}", per, note])
        out.flush()
        print(case, model, tokens, nl, variant, f"wall {wall:.1f} us host {host:.1f} us per {per}", flush=True)

    models = sys.argv[2:] or ["llama3-8b", "qwen3-30b-a3b", "mixtral-8x7b", "qwen3-30b-a3b-ep16-local"]
    if len(sys.argv) == 2:
        launch_rows(row)
    backends = [torch.nn.attention.SDPBackend.CUDNN_ATTENTION, torch.nn.attention.SDPBackend.FLASH_ATTENTION]
    with torch.nn.attention.sdpa_kernel(backends):
        for model in models:
            hidden = layers.MODELS.get(model, MOE.get(model))[0]
            variants = ["nosync"] if model in layers.MODELS else ["nosync", "sync", "loop"]
            for variant in variants:
                try:
                    one = [make_layer(model, variant)]
                    if variant == "nosync":
                        for s in (128, 4096):
                            wall, host = walls(step_fn(one, s, hidden))
                            row("enqueue", model, s, 1, variant, wall, host, "layer")
                        n = kernel_count(step_fn(one, 128, hidden))
                        row("kernels", model, 128, 1, variant, n, n, "layer")
                    stack = one + [make_layer(model, variant) for _ in range(CHAIN - 1)]
                    for s in (128, 4096):
                        wall, host = walls(step_fn(stack, s, hidden))
                        row("chain", model, s, CHAIN, variant, wall / CHAIN, host / CHAIN, "layer")
                except RuntimeError as e:
                    print(model, variant, "failed:", str(e).splitlines()[0], flush=True)
                one = stack = None
                torch.cuda.empty_cache()
    print("wrote", path)


if __name__ == "__main__":
    main()
