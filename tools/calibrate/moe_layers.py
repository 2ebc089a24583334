#!/usr/bin/env python3
"""Measures whole mixture-of-experts transformer layers (Qwen3-30B-A3B and Mixtral 8x7B, EP 1,
TP 1, bf16, random weights) with PyTorch: the ground truth for fathom's MoE layer program
(models/llm/moe_layer.cpp) on one GPU, where no all-to-all runs.

    moe_layers.py OUT_DIR/moe_layers.csv [OUT_DIR/moe_layers_profile.txt]

Rows in layers.csv's format (elementwise = eager):
  - train:   one layer forward + backward at 4k tokens (micro-batch 1);
  - forward: its forward alone;
  - prefill: one prefill chunk of 1k and 4k tokens (no grad);
  - decode:  batch 1-256 sequences of one token over 2k cached keys, eager and as a CUDA graph.

The attention half is layers.py's. The MoE block is written as Megatron-Core's grouped-GEMM
experts run it (moe.grouped_gemm with the alltoall dispatcher at EP 1): RMSNorm, router GEMM
[T, E], fp32 softmax and top-k (weights renormalised over the top k), permute (a stable sort of
the T x k (token, expert) pairs by expert, each expert's end offset by a search of the sorted
experts, then a gather of the rows), grouped FC1 (gate and up)
over all experts with torch._grouped_mm, SiLU x up, grouped FC2, unpermute (rows scaled by their
routing weight and summed per token), residual add. Permute and unpermute are gathers both ways, as
Transformer Engine's fused permute and vLLM's moe_sum run them (Gather, Permute below), not
autograd's index_add with atomics. Random inputs route close to
uniformly, as fathom's balanced routing assumes.
"""
import csv
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402  (the attention half, rope tables and the timing loop)

DT = layers.DT
MODELS = {  # hidden, heads, kv_heads, experts, top_k, expert_ffn (config.json of each model)
    "qwen3-30b-a3b": (2048, 32, 4, 128, 8, 768),
    "mixtral-8x7b": (4096, 32, 8, 8, 2, 14336),
}
DECODE_BATCH = (1, 8, 32, 64, 128, 256)
DECODE_KV = 2048


class Gather(torch.autograd.Function):
    """Rows of x in the order `index`, whose inverse permutation `inverse` gathers the gradient
    back (a gather both ways, as fused permute kernels run; autograd's index_select backward is an
    atomic index_add)."""

    @staticmethod
    def forward(ctx, x, index, inverse):
        ctx.save_for_backward(inverse)
        return x.index_select(0, index)

    @staticmethod
    def backward(ctx, g):
        (inverse,) = ctx.saved_tensors
        return g.index_select(0, inverse), None, None


class Permute(torch.autograd.Function):
    """The T x k routed rows sorted by expert: row i is token order[i] // k; the gradient gathers
    each token's k rows back (inverse) and sums them."""

    @staticmethod
    def forward(ctx, x, order, inverse, k):
        ctx.save_for_backward(inverse)
        ctx.k = k
        return x.index_select(0, order // k)

    @staticmethod
    def backward(ctx, g):
        (inverse,) = ctx.saved_tensors
        return g.index_select(0, inverse).view(-1, ctx.k, g.shape[-1]).sum(dim=1), None, None, None


class MoeLayer(layers.Layer):
    def __init__(self, hidden, heads, kv_heads, experts, top_k, ffn, grad):
        super().__init__(hidden, heads, kv_heads, 16, grad)  # the dense MLP's weights are unused
        self.e, self.k, self.f = experts, top_k, ffn
        self.experts = torch.arange(experts, device="cuda")

        def w(*shape):
            return (torch.randn(*shape, device="cuda", dtype=DT) * 0.02).requires_grad_(grad)
        self.wr = w(hidden, experts)
        # Expert weights stored [E, out, in] and passed transposed: the column-major B operand
        # torch._grouped_mm takes on sm90.
        self.w13 = w(experts, 2 * ffn, hidden)
        self.w2 = w(experts, hidden, ffn)
        self.params = [self.wqkv, self.wo, self.n1, self.n2, self.wr, self.w13, self.w2]

    def route(self, hn):
        """Router GEMM, fp32 softmax and top-k (weights renormalised over the top k), and the T x k
        (token, expert) pairs sorted by expert: (weights, flat expert ids, order, inverse order)."""
        probs = torch.softmax((hn @ self.wr).float(), dim=-1)
        wts, ids = probs.topk(self.k, dim=-1)
        wts = (wts / wts.sum(dim=-1, keepdim=True)).to(DT)
        flat = ids.flatten()
        order = torch.argsort(flat, stable=True)
        return wts, flat, order, torch.argsort(order)

    def combine(self, y, wts, order, inverse):
        """Unpermute: the expert rows back in token order, scaled by their routing weights and summed."""
        t, hidden = wts.shape[0], y.shape[-1]
        return (Gather.apply(y, inverse, order).view(t, self.k, hidden) * wts.unsqueeze(-1)).sum(dim=1)

    def moe(self, hn):
        wts, flat, order, inverse = self.route(hn)
        # Each expert's end offset in the sorted rows (searchsorted, not bincount: bincount reads
        # its maximum back to the host, which a CUDA graph cannot capture).
        offs = torch.searchsorted(flat.index_select(0, order), self.experts, right=True).to(torch.int32)
        xs = Permute.apply(hn, order, inverse, self.k)
        g, u = torch._grouped_mm(xs, self.w13.transpose(-2, -1), offs=offs).chunk(2, dim=-1)
        y = torch._grouped_mm(F.silu(g) * u, self.w2.transpose(-2, -1), offs=offs)
        return self.combine(y, wts, order, inverse)

    def attention_out_and_mlp(self, x, o):
        b, s, hidden = x.shape
        x = x + o.transpose(1, 2).reshape(b, s, self.h * layers.HEAD_DIM) @ self.wo
        hn = F.rms_norm(x, (hidden,), self.n2)
        return x + self.moe(hn.reshape(b * s, hidden)).view(b, s, hidden)


def attention_backends():
    """The fused attention kernels the layers run (cuDNN first, then flash), as frameworks pick them."""
    return [torch.nn.attention.SDPBackend.CUDNN_ATTENTION, torch.nn.attention.SDPBackend.FLASH_ATTENTION]


def measure_training(model, spec, row, profile):
    """Forward + backward of one layer at 4,096 tokens, and its forward alone."""
    hidden = spec[0]
    layer = MoeLayer(*spec, grad=True)
    s = 4096
    try:
        cos, sin = layers.rope_tables(s)
        x = torch.randn(1, s, hidden, device="cuda", dtype=DT, requires_grad=True)
        gy = torch.randn(1, s, hidden, device="cuda", dtype=DT)
        inputs = [x] + layer.params

        def step():
            torch.autograd.grad(layer.forward(x, cos, sin), inputs, gy)

        with torch.nn.attention.sdpa_kernel(attention_backends()):
            row(model, "train", 1, s, s, layers.timed(step))
            profile(f"{model} train s={s}", step)
            with torch.no_grad():
                row(model, "forward", 1, s, s, layers.timed(lambda: layer.forward(x, cos, sin)))
    except RuntimeError as e:
        print(model, "train failed:", str(e).splitlines()[0], flush=True)
    del layer
    torch.cuda.empty_cache()


def measure_serving(model, spec, row, profile):
    """Prefill at 1,024 and 4,096 tokens, and decode steps (eager and as a CUDA graph) per batch."""
    hidden = spec[0]
    layer = MoeLayer(*spec, grad=False)
    with torch.no_grad():
        for t in (1024, 4096):
            try:
                cos, sin = layers.rope_tables(t)
                x = torch.randn(1, t, hidden, device="cuda", dtype=DT)
                with torch.nn.attention.sdpa_kernel(attention_backends()):
                    row(model, "prefill", 1, t, t, layers.timed(lambda: layer.forward(x, cos, sin)))
            except RuntimeError as e:
                print(model, "prefill", t, "failed:", str(e).splitlines()[0], flush=True)
        measure_decode(model, spec, layer, row, profile)
    del layer
    torch.cuda.empty_cache()


def measure_decode(model, spec, layer, row, profile=None):
    """Decode steps of `layer` (eager and as a CUDA graph) per batch over DECODE_KV cached keys."""
    hidden, kv = spec[0], DECODE_KV
    for b in DECODE_BATCH:
        try:
            cos, sin = layers.rope_tables(1, kv - 1)
            x = torch.randn(b, 1, hidden, device="cuda", dtype=DT)
            kc = torch.randn(b, spec[2], kv, layers.HEAD_DIM, device="cuda", dtype=DT)
            vc = torch.randn(b, spec[2], kv, layers.HEAD_DIM, device="cuda", dtype=DT)
            fn = lambda: layer.decode(x, cos, sin, kc, vc, kv - 1)
            row(model, "decode", b, 1, kv, layers.timed(fn))
            if b == 64 and profile:
                profile(f"{model} decode b={b} kv={kv}", fn)
            row(model, "decode_graph", b, 1, kv, layers.graph_timed(fn), ", CUDA graph")
        except RuntimeError as e:
            print(model, "decode", b, "failed:", str(e).splitlines()[0], flush=True)
        kc = vc = None
        torch.cuda.empty_cache()


def open_rows(path, note):
    """A CSV in layers.csv's format at `path` and the function writing one row of it; `note` is
    called for each row's note (the rows are eager)."""
    out = open(path, "w", newline="")
    w = csv.writer(out)
    w.writerow(["model", "phase", "batch", "q_len", "kv_len", "time_us", "time_p10_us", "time_p90_us", "note",
                "elementwise"])

    def row(model, phase, b, q, kv, t, extra=""):
        w.writerow([model, phase, b, q, kv, f"{t[0]:.2f}", f"{t[1]:.2f}", f"{t[2]:.2f}", note() + extra, "eager"])
        out.flush()
        print(model, phase, b, q, kv, f"{t[0]:.1f} us", flush=True)

    return row


def main():
    path = sys.argv[1]
    note = f"torch {torch.__version__}, {torch.cuda.get_device_name()}, eager, torch._grouped_mm experts"
    row = open_rows(path, lambda: note)

    profiles = []

    def profile(label, fn):
        if len(sys.argv) < 3:
            return
        from torch.profiler import profile as prof, ProfilerActivity
        fn()
        torch.cuda.synchronize()
        with prof(activities=[ProfilerActivity.CUDA]) as p:
            fn()
            torch.cuda.synchronize()
        profiles.append(f"== {label}\n" + p.key_averages().table(sort_by="device_time_total", row_limit=25))

    for model, spec in MODELS.items():
        measure_training(model, spec, row, profile)
        measure_serving(model, spec, row, profile)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write("\n\n".join(profiles))
    print("wrote", path)


if __name__ == "__main__":
    main()
