#!/usr/bin/env python3
"""Turn the kernel microbenchmarks of a measured-format v1 file (shared/reference/measured.yaml)
into fathom's calibration CSV for one accelerator, so that published measurements can be fitted
and regression-tested exactly like measurements taken with tools/calibrate on a GPU.

    measured_to_csv.py MEASURED.yaml ACCELERATOR_ID OUT.csv

Rows: GEMM cases (metric gemm_tflops, time = 2 M N K / rate) and flash-attention cases (metric
attention_tflops, FlashAttention FLOP convention: forward 4 b s^2 h d, halved when causal), each
headline value plus its variants that change only batch or sequence length. Requires PyYAML.
"""
import csv
import sys

import yaml

COLUMNS = ["op", "dtype", "m", "n", "k", "batch", "heads", "kv_heads", "seq_len", "kv_len", "head_dim",
           "causal", "bytes", "time_us", "time_p10_us", "time_p90_us", "achieved", "source"]


def rows_for(case):
    b = case["benchmark"]
    out = []
    if b["op"] == "gemm" and case["metric"] == "gemm_tflops":
        flops = 2.0 * b["M"] * b["N"] * b["K"]
        out.append({"op": "gemm", "dtype": b.get("dtype", "bf16"), "m": b["M"], "n": b["N"], "k": b["K"], "batch": 1,
                    "time_us": flops / (case["value"] * 1e12) * 1e6, "achieved": case["value"], "source": case["id"]})
    if b["op"] == "attention" and case["metric"] == "attention_tflops" and b.get("phase") in ("forward", "backward"):
        variants = [({}, case["value"])]
        for o in case.get("other_metrics", []):
            v = o.get("variant", {})
            if o["metric"] == "attention_tflops" and v and set(v) <= {"benchmark.seq_len", "benchmark.batch"}:
                variants.append((v, o["value"]))
        for v, value in variants:
            batch = v.get("benchmark.batch", b["batch"])
            seq = v.get("benchmark.seq_len", b["seq_len"])
            causal = bool(b.get("causal", False))
            flops = 4.0 * batch * seq * seq * b["heads"] * b["head_dim"] * (0.5 if causal else 1.0)
            if b["phase"] == "backward":
                flops *= 2.5
            out.append({"op": "attention_fwd" if b["phase"] == "forward" else "attention_bwd",
                        "dtype": b.get("dtype", "bf16"), "batch": batch, "heads": b["heads"],
                        "kv_heads": b.get("kv_heads", b["heads"]), "seq_len": seq, "kv_len": seq,
                        "head_dim": b["head_dim"], "causal": int(causal),
                        "time_us": flops / (value * 1e12) * 1e6, "achieved": value,
                        "source": case["id"] + (" " + str(v) if v else "")})
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    doc = yaml.safe_load(open(sys.argv[1]))
    rows = []
    for case in doc["cases"]:
        if case["kind"] == "microbench" and case["hardware"]["accelerator"] == sys.argv[2]:
            rows.extend(rows_for(case))
    with open(sys.argv[3], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    print(f"{len(rows)} rows for {sys.argv[2]} -> {sys.argv[3]}")


if __name__ == "__main__":
    main()
