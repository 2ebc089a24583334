#!/usr/bin/env bash
# The calibration campaign on a GPU machine (CUDA toolkit, CMake, PyTorch; no fathom dependencies).
#   tools/calibrate/campaign.sh OUT_DIR [kernels|layers|sustained|overlap|step|host|formats|all]
# kernels: fathom_calibrate (GEMMs, memory-bound kernels, copies, launch) and attention.py
#          (flash attention forward/backward, GQA) -> OUT_DIR/measurements.csv, metadata.json,
#          measurements.csv.fa2.csv
# layers:  attention.py --decode (decode attention rows appended to OUT_DIR/measurements.csv); layers.py (Llama 3 8B/70B layers,
#          training and serving, eager) and layers_compiled.py (torch.compile) -> OUT_DIR/layers.csv, layers_profile.txt;
#          moe_layers.py (Qwen3-30B-A3B and Mixtral 8x7B MoE layers, EP 1) -> OUT_DIR/moe_layers.csv, moe_layers_profile.txt;
#          grouped_gemm.py (expert GEMMs bf16/fp8 vs the dense GEMM of the same FLOPs) -> OUT_DIR/grouped_gemm.csv
# sustained: sustained.py (GEMM bf16/fp8, cuDNN and flash attention, a layer mix: 60 s each under load,
#          TFLOP/s with SM clock and power every 0.25 s) -> OUT_DIR/sustained.csv, sustained.log
#          SUSTAINED_SECONDS (default 60) sets the seconds per workload.
# step:    train_step.py (a Llama-3.2-1B-shaped model's whole training step on one GPU, eager and
#          compiled: step time and peak memory) -> OUT_DIR/train_step.csv; grouped_gemm.py ->
#          OUT_DIR/grouped_gemm.csv; moe_layers_fp8.py (the MoE layers with FP8 experts, forward and
#          decode) -> OUT_DIR/moe_layers_fp8.csv; one log, OUT_DIR/step.log.
# host:    host_overhead.py (host time of eager PyTorch ops and training layers, and of a host
#          synchronisation and per-expert launches in MoE layers) -> OUT_DIR/host_overhead.csv (a minute).
# overlap: overlap.py (compute slowdown beside a communication-shaped copy kernel of 8-132 CTAs)
#          -> OUT_DIR/overlap.csv, overlap.log (about a minute).
# formats: calib_ext.cu (Marlin W4A16 and KV block copies, a ctypes library), quant_gemm.py (weight GEMMs of
#          each serving format against bf16 at 1-4096 rows) -> OUT_DIR/quant_gemm.csv; kv_copies.py (host <->
#          GPU copies one block per cudaMemcpyAsync and by SMs over unified addressing) -> OUT_DIR/kv_copies.csv
#          (about 4 minutes).
# Each part takes about 4-5 minutes on an H100; logs go to OUT_DIR/*.log.
set -uo pipefail
out=${1:?usage: campaign.sh OUT_DIR [kernels|layers|sustained|overlap|step|host|formats|all]}
what=${2:-all}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,power.limit,driver_version --format=csv > "$out/nvidia-smi.csv" 2>&1
if [[ $what == kernels || $what == all ]]; then
  cmake -S "$here" -B /tmp/build-cal -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1 &&
    cmake --build /tmp/build-cal -j 16 >> "$out/build.log" 2>&1 || { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
  timeout 330 /tmp/build-cal/fathom_calibrate "$out" 2>&1 | tee "$out/calibrate.log" | tail -3
  timeout 200 python3 "$here/attention.py" "$out/measurements.csv" 2>&1 | tee "$out/attention.log" | tail -5
fi
if [[ $what == layers || $what == all ]]; then
  timeout 150 python3 "$here/attention.py" --decode "$out/measurements.csv" 2>&1 | tee "$out/decode.log" | tail -5
  timeout 300 python3 "$here/layers.py" "$out/layers.csv" "$out/layers_profile.txt" 2>&1 | tee "$out/layers.log" | tail -40
  # The same layers under torch.compile (fused elementwise kernels), appended to layers.csv.
  timeout 150 python3 "$here/layers_compiled.py" /tmp/layers_compiled.csv 2>&1 | tee "$out/layers_compiled.log" | tail -10
  tail -n +2 /tmp/layers_compiled.csv >> "$out/layers.csv"
  timeout 150 python3 "$here/moe_layers.py" "$out/moe_layers.csv" "$out/moe_layers_profile.txt" 2>&1 | tee "$out/moe_layers.log" | tail -10
  timeout 240 python3 "$here/grouped_gemm.py" "$out/grouped_gemm.csv" 2>&1 | tee "$out/grouped_gemm.log" | tail -10
fi
if [[ $what == sustained || $what == all ]]; then
  secs=${SUSTAINED_SECONDS:-60}
  timeout $((7 * secs)) python3 "$here/sustained.py" "$out/sustained.csv" --seconds "$secs" 2>&1 | tee "$out/sustained.log" | tail -8
fi
if [[ $what == overlap || $what == all ]]; then
  timeout 150 python3 "$here/overlap.py" "$out/overlap.csv" 2>&1 | tee "$out/overlap.log" | tail -5
fi
if [[ $what == step || $what == all ]]; then
  timeout 170 python3 "$here/train_step.py" "$out/train_step.csv" 2>&1 | tee "$out/step.log" | tail -8
  timeout 120 python3 "$here/grouped_gemm.py" "$out/grouped_gemm.csv" 2>&1 | tee -a "$out/step.log" | tail -4
  timeout 90 python3 "$here/moe_layers_fp8.py" "$out/moe_layers_fp8.csv" 2>&1 | tee -a "$out/step.log" | tail -8
fi
if [[ $what == host || $what == all ]]; then
  lscpu > "$out/lscpu.txt" 2>&1
  timeout 300 python3 "$here/host_overhead.py" "$out/host_overhead.csv" 2>&1 | tee "$out/host_overhead.log" | tail -5
fi
if [[ $what == formats || $what == all ]]; then
  "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O3 --expt-relaxed-constexpr -shared -Xcompiler -fPIC -gencode=arch=compute_90,code=sm_90 \
    -o /tmp/libcalib_ext.so "$here/calib_ext.cu" > "$out/formats.log" 2>&1 || { echo "calib_ext build failed"; tail -20 "$out/formats.log"; }
  timeout 150 python3 "$here/kv_copies.py" "$out/kv_copies.csv" /tmp/libcalib_ext.so 2>&1 | tee -a "$out/formats.log" | tail -3
  timeout 240 python3 "$here/quant_gemm.py" "$out/quant_gemm.csv" /tmp/libcalib_ext.so 2>&1 | tee -a "$out/formats.log" | tail -3
  timeout 120 python3 "$here/quant_gemm.py" "$out/quant_gemm_marlin.csv" /tmp/libcalib_ext.so bf16,fp16,w4a16_marlin 2>&1 |
    tee -a "$out/formats.log" | tail -3
fi
wc -l "$out"/*.csv
