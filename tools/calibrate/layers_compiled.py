#!/usr/bin/env python3
"""Times the layers of layers.py compiled with torch.compile (Inductor fuses the norms, rotary,
SiLU x up and residual additions into Triton kernels, as fused training stacks run them):

    layers_compiled.py OUT_DIR/layers_compiled.csv

writes rows in layers.csv's format with `elementwise` = fused (layers.py's rows are eager; merge
them into one layers.csv): Llama 3 8B and 70B, training forward+backward and forward at 4k tokens,
prefill chunks of 1k and 4k tokens.
"""
import csv
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402


def main():
    path = sys.argv[1]
    out = open(path, "w", newline="")
    w = csv.writer(out)
    w.writerow(["model", "phase", "batch", "q_len", "kv_len", "time_us", "time_p10_us", "time_p90_us", "note",
                "elementwise"])
    note = f"torch {torch.__version__}, {torch.cuda.get_device_name()}, torch.compile"
    for model, (hidden, heads, kvh, ffn) in layers.MODELS.items():
        for grad, cases in ((True, (("train", 4096), ("forward", 4096))), (False, (("prefill", 1024), ("prefill", 4096)))):
            layer = layers.Layer(hidden, heads, kvh, ffn, grad=grad)
            fwd = torch.compile(layer.forward)
            for phase, s in cases:
                try:
                    cos, sin = layers.rope_tables(s)
                    x = torch.randn(1, s, hidden, device="cuda", dtype=layers.DT, requires_grad=(phase == "train"))
                    gy = torch.randn(1, s, hidden, device="cuda", dtype=layers.DT)
                    inputs = [x] + layer.params

                    def step():
                        if phase == "train":
                            torch.autograd.grad(fwd(x, cos, sin), inputs, gy)
                        else:
                            with torch.no_grad():
                                fwd(x, cos, sin)

                    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.CUDNN_ATTENTION,
                                                         torch.nn.attention.SDPBackend.FLASH_ATTENTION]):
                        t = layers.timed(step)
                    w.writerow([model, phase, 1, s, s, f"{t[0]:.2f}", f"{t[1]:.2f}", f"{t[2]:.2f}", note, "fused"])
                    out.flush()
                    print(model, phase, s, f"{t[0]:.1f} us", flush=True)
                except Exception as e:  # one failed compile must not lose the others
                    print(model, phase, s, "failed:", str(e).splitlines()[0] if str(e) else type(e).__name__, flush=True)
            del layer
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
