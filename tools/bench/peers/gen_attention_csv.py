#!/usr/bin/env python3
"""Generate a SYNTHETIC attention.csv for Vidur (h100 / meta-llama/Llama-2-70b-hf).

The real file (produced on GPUs by vidur/profiling/attention/main.py) is absent
from the git mirror.  This writes a file with the same columns the profiler emits
(see vidur/profiling/attention/attention_wrapper.py::profile and
common/timer_stats_store.py), filled with roofline times (milliseconds, per layer,
per tensor-parallel worker):

  decode  attn_decode  = KV bytes read / 3.35e12 B/s + 5 us
  prefill attn_prefill = causal attention FLOPs / 700e12 FLOP/s + 10 us
  attn_kv_cache_save   = new K,V bytes (read+write) / 3.35e12 B/s + 3 us

Only simulation SPEED is measured with this data; the numbers are not accurate.
"""
import sys

import numpy as np
import pandas as pd

N_EMBD, N_Q, N_KV, HEAD_DIM = 8192, 64, 8, 128
BLOCK_SIZE, MAX_MODEL_LEN, MAX_SEQ_LEN = 16, 4096, 4096
TP_SIZES = [1, 2, 4, 8]
HBM_BW, FLOPS, BYTES = 3.35e12, 700e12, 2  # fp16

# same grids as vidur/profiling/utils/__init__.py (decode grid is coarsened to keep
# random-forest training on a 2-core box tractable)
PREFILL_CHUNKS = (list(range(64, 129, 16)) + list(range(128, 1025, 32))
                  + list(range(1024, 4096 + 1, 64)))
PREFILL_CHUNKS = sorted(set(PREFILL_CHUNKS))
SEQ_LENS = [s for s in sorted(set(list(range(0, 1025, 32)) + list(range(1024, 4097, 64))))
            if s < MAX_SEQ_LEN]
DECODE_KV = sorted(set([s for s in SEQ_LENS if s > 0][::2] + [4032]))
DECODE_BS = sorted(set([1, 2, 3, 4, 6] + list(range(8, 129, 8))))


def stats(ms, rng):
    noise = rng.normal(1.0, 0.01, 5)
    t = ms * noise
    return {"min": t.min(), "max": t.max(), "mean": t.mean(), "median": float(np.median(t)),
            "std": t.std()}


def main(out):
    rng = np.random.default_rng(0)
    rows = []
    for tp in TP_SIZES:
        q_w, kv_w = N_Q // tp, max(1, N_KV // tp)
        kv_bytes_per_tok = 2 * kv_w * HEAD_DIM * BYTES  # K and V

        def save_ms(ntok):
            return (2 * ntok * kv_bytes_per_tok / HBM_BW) * 1e3 + 0.003

        inputs = []
        for c in PREFILL_CHUNKS:  # chunked prefills
            for p in range(MAX_SEQ_LEN // c):
                inputs.append((c, p * c, 1, True))
        for L in SEQ_LENS:  # full prefills
            if L > 0:
                inputs.append((L, 0, 1, True))
        for kv in DECODE_KV:  # decodes
            for b in DECODE_BS:
                inputs.append((0, kv, b, False))
        for chunk, kv, bs, is_prefill in inputs:
            if is_prefill and chunk + kv > MAX_SEQ_LEN:
                continue
            r = {}
            if is_prefill:
                flops = 4.0 * chunk * (kv + chunk / 2.0) * HEAD_DIM * q_w
                ts = {"attn_prefill": flops / FLOPS * 1e3 + 0.010,
                      "attn_kv_cache_save": save_ms(chunk)}
            else:
                by = bs * kv * kv_bytes_per_tok + bs * q_w * HEAD_DIM * BYTES * 2
                ts = {"attn_decode": by / HBM_BW * 1e3 + 0.005,
                      "attn_kv_cache_save": save_ms(bs)}
            for name, ms in ts.items():
                for k, v in stats(ms, rng).items():
                    r[f"time_stats.{name}.{k}"] = v
            r.update({"n_embd": N_EMBD, "n_q_head": N_Q, "n_kv_head": N_KV,
                      "block_size": BLOCK_SIZE, "num_tensor_parallel_workers": tp,
                      "max_model_len": MAX_MODEL_LEN, "batch_size": bs,
                      "prefill_chunk_size": chunk, "kv_cache_size": kv,
                      "is_prefill": is_prefill, "attention_backend": "FLASHINFER"})
            rows.append(r)
    df = pd.DataFrame(rows)
    cols = [c for c in df.columns if c.startswith("time_stats.")]
    cols = sorted(cols) + [c for c in df.columns if not c.startswith("time_stats.")]
    df[cols].to_csv(out, index=False)
    print(f"wrote {len(df)} rows ({len(df)//len(TP_SIZES)} per TP size) to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         "src/data/profiling/compute/h100/meta-llama/Llama-2-70b-hf/attention.csv")
