#!/usr/bin/env python3
"""moe_layers.py's mixture-of-experts layers with FP8 experts, forward only: what an FP8 MoE
checkpoint served by vLLM or SGLang runs (Qwen3-30B-A3B-FP8, Mixtral in FP8), on one GPU.

    moe_layers_fp8.py OUT_DIR/moe_layers_fp8.csv

The layer is moe_layers.MoeLayer with the expert weights quantised once to e4m3 with one scale
per expert output row, and each grouped GEMM's input quantised per row on the fly (amax / 448,
the dynamic per-token activation scales of vLLM's fp8 MoE path), run by
torch._scaled_grouped_mm (CUTLASS FP8 grouped GEMM on sm90, row-wise scales, fast accumulation,
bf16 output). Attention, router, permute and unpermute stay bf16, as in those engines' FP8 MoE
checkpoints' MoE blocks (the attention projections' FP8 is not measured here). Rows in
moe_layers.csv's format: forward at 4k tokens, prefill at 1k and 4k tokens, decode batch 1-256
over 2k cached keys (eager and CUDA graph); the note says `fp8 experts`. If the grouped kernel
rejects per-expert row counts that are not multiples of 16, each expert's end offset is rounded
down to 16 rows (at most 15 rows per expert dropped) and the note says so.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402
import moe_layers  # noqa: E402

F8 = torch.float8_e4m3fn
ALIGN = {"rows": 1}  # set to 16 if the kernel rejects unaligned expert offsets


def quantize_rows(x):
    """e4m3 values and one fp32 scale per row (last dimension reduced)."""
    scale = x.abs().amax(dim=-1).float().clamp(min=1e-12) / 448.0
    return (x.float() / scale.unsqueeze(-1)).to(F8), scale


class Fp8MoeLayer(moe_layers.MoeLayer):
    def __init__(self, *spec):
        super().__init__(*spec, grad=False)
        self.q13, self.s13 = quantize_rows(self.w13)  # [E, 2F, H], scales [E, 2F]
        self.q2, self.s2 = quantize_rows(self.w2)  # [E, H, F], scales [E, H]
        self.w13 = self.w2 = None

    def grouped(self, x, wq, ws, offs):
        xq, xs = quantize_rows(x)
        return torch._scaled_grouped_mm(xq, wq.transpose(-2, -1), xs, ws, offs=offs, out_dtype=layers.DT,
                                        use_fast_accum=True)

    def moe(self, hn):
        t, hidden = hn.shape
        probs = torch.softmax((hn @ self.wr).float(), dim=-1)
        wts, ids = probs.topk(self.k, dim=-1)
        wts = (wts / wts.sum(dim=-1, keepdim=True)).to(layers.DT)
        flat = ids.flatten()
        order = torch.argsort(flat, stable=True)
        inverse = torch.argsort(order)
        offs = torch.searchsorted(flat.index_select(0, order), self.experts, right=True).to(torch.int32)
        if ALIGN["rows"] > 1:
            offs = offs // ALIGN["rows"] * ALIGN["rows"]
        xs = hn.index_select(0, order // self.k)
        g, u = self.grouped(xs, self.q13, self.s13, offs).chunk(2, dim=-1)
        y = self.grouped(F.silu(g) * u, self.q2, self.s2, offs)
        return (y.index_select(0, inverse).view(t, self.k, hidden) * wts.unsqueeze(-1)).sum(dim=1)


def main():
    path = sys.argv[1]
    base = f"torch {torch.__version__}, {torch.cuda.get_device_name()}, eager, fp8 experts (_scaled_grouped_mm, row-wise)"
    row = moe_layers.open_rows(
        path, lambda: base + (f", expert offsets rounded down to {ALIGN['rows']} rows" if ALIGN["rows"] > 1 else ""))

    for model, spec in moe_layers.MODELS.items():
        layer = Fp8MoeLayer(*spec)
        hidden = spec[0]
        with torch.no_grad():
            probe = torch.randn(100, hidden, device="cuda", dtype=layers.DT)
            try:
                layer.moe(probe)
            except RuntimeError as e:
                print(model, "unaligned offsets rejected:", str(e).splitlines()[0], flush=True)
                ALIGN["rows"] = 16
            with torch.nn.attention.sdpa_kernel(moe_layers.attention_backends()):
                for phase, t in (("forward", 4096), ("prefill", 1024), ("prefill", 4096)):
                    try:
                        cos, sin = layers.rope_tables(t)
                        x = torch.randn(1, t, hidden, device="cuda", dtype=layers.DT)
                        row(model, phase, 1, t, t, layers.timed(lambda: layer.forward(x, cos, sin)))
                    except RuntimeError as e:
                        print(model, phase, t, "failed:", str(e).splitlines()[0], flush=True)
            moe_layers.measure_decode(model, spec, layer, row)
        del layer
        torch.cuda.empty_cache()
    print("wrote", path)


if __name__ == "__main__":
    main()
