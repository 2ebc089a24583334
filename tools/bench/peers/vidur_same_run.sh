#!/usr/bin/env bash
# fathom vs Vidur on one machine in one run: 10,000 Poisson requests, Llama 2 70B, 4 x TP4 H100,
# Sarathi chunk 512 (Vidur batch cap 128 = fathom max_num_seqs), 1024 in / 256 out.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
F=${FATHOM:-$ROOT/build/fathom}; S=$ROOT/tools/bench/peers/vidur-workload.yaml
HERE=${VIDUR_DIR:?set VIDUR_DIR to a Vidur setup (see README.md)}; export WANDB_MODE=disabled PYTHONHASHSEED=0
nproc; uname -r
for QPS in 15 20; do
  for i in 1 2 3; do
    t0=$(date +%s.%N); $F run $S --set traffic.rate=$QPS > /dev/null; t1=$(date +%s.%N)
    echo "fathom QPS=$QPS run $i: $(python3 -c "print(f'{$t1-$t0:.3f} s, {10000/($t1-$t0):.0f} requests/s')")"
  done
  export QPS; source $ROOT/tools/bench/peers/vidur_args.sh
  cd $HERE/src
  t0=$(date +%s.%N); $HERE/venv/bin/python $ROOT/tools/bench/peers/bench_driver.py "${VIDUR_ARGS[@]}" > /tmp/vidur_$QPS.log 2>&1; t1=$(date +%s.%N)
  echo "vidur  QPS=$QPS: $(python3 -c "print(f'{$t1-$t0:.3f} s, {10000/($t1-$t0):.0f} requests/s (whole process)')")"
  grep -E "BENCH" /tmp/vidur_$QPS.log || true
  cd - >/dev/null
done
