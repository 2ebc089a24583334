#pragma once
// DeepGEMM's fp8 GEMM kernels (deepseek-ai/DeepGEMM), the GEMM class models::GemmKernel::DeepGemm:
// the tile each launch picks, and the time of one GEMM or grouped GEMM on a device whose catalog
// calibrates the class (deepgemm_efficiency, deepgemm_k_half).
#include "hardware/spec.h"
#include "models/ops/op.h"

#include <cstdint>

namespace fathom::models {

// The output tile and waves DeepGEMM's launcher picks (deep_gemm/jit_kernels/gemm.py
// get_best_configs at a6d97a1): block_m 64 for m <= 64 rows a group, else 128; block_n the one of
// 16, 24, ..., 128 that needs the fewest waves of tiles over the SMs, then fills the last wave
// most, then is widest. No split-K: a wave's idle SMs stay idle.
struct DeepGemmTiles {
    int block_m = 0, block_n = 0;
    int64_t tiles = 0, waves = 0;
    int sms = 0;
    double wave_fill() const;  // tiles / (waves x SMs)
};
DeepGemmTiles deepgemm_tiles(int64_t m, int64_t n, int64_t groups, int sms);

// Seconds of a DeepGEMM GEMM (op.batch groups of op.m rows) without the launch, at the tensor
// clock factor `clock`: compute FLOPs / (fp8 peak x clock x deepgemm_efficiency x wave fill x
// K / (K + deepgemm_k_half)) and memory bytes / (HBM x memory_efficiency), combined as
// (compute^3 + memory^3)^(1/3): its TMA loads and tensor-core math overlap less than fully when
// both are near their limits (the masked grouped rows of DeepGEMM's table, at 256-512 rows a
// group, sit 15-30% below max(compute, memory)). The class's constants are fitted on DeepGEMM's
// README table (a6d97a1, H800: 28 dense and grouped rows, median |error| 2.4%; tools/
// fit_deepgemm.py); the exponent was chosen on the same rows: with max instead the best median
// is 2.7% but the masked grouped rows stay +15% and +29% (decode's expert GEMMs); with 3 they are
// +10% and +6%; 2 fits only with a 1 us launch and leaves a worst row of 53%.
double deepgemm_seconds(const OpDesc& op, const hardware::AcceleratorSpec& acc, double clock);

}  // namespace fathom::models
