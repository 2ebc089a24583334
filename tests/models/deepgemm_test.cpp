// DeepGEMM's fp8 kernel class (models/cost/deepgemm_cost.h): its launcher's tile choice against
// deep_gemm/jit_kernels/gemm.py get_best_configs (a6d97a1) worked by hand, and one GEMM's time
// against the closed form, on a hand-built device; the library class where the device has none.
#include "hardware/spec.h"
#include "models/cost/cost_model.h"
#include "models/cost/deepgemm_cost.h"
#include "models/ops/op.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace fathom::models;
using fathom::hardware::AcceleratorSpec;

namespace {

// fp8 peak 2000 TFLOP/s, 132 SMs, HBM 3 TB/s at 90%, launch 4 us; DeepGEMM at 0.75 with K-half 700.
AcceleratorSpec device(bool deepgemm) {
    AcceleratorSpec a;
    a.id = "test-hopper";
    a.peak_flops[Dtype::bf16] = 1000e12;
    a.peak_flops[Dtype::fp8] = 2000e12;
    a.memory_capacity = 80e9;
    a.memory_bandwidth = 3e12;
    a.compute_units = 132;
    a.launch_overhead = 4e-6;
    a.calibration.gemm_efficiency[Dtype::bf16] = 0.8;
    a.calibration.gemm_efficiency[Dtype::fp8] = 0.7;
    a.calibration.gemm_tile_m = 128;
    a.calibration.gemm_tile_n = 256;
    a.calibration.gemm_k_half = 64;
    a.calibration.memory_efficiency = 0.9;
    if (deepgemm) {
        a.calibration.deepgemm_efficiency = 0.75;
        a.calibration.deepgemm_k_half = 700;
    }
    return a;
}

}  // namespace

TEST_CASE("DeepGEMM's tile: fewest waves, then the fullest last wave, then the widest", "[models][cost]") {
    // 64 x 2112: block_m 64; block_n 16 gives 1 x 132 = 132 tiles, one full wave on 132 SMs (every
    // wider tile also needs one wave, but fills it less).
    DeepGemmTiles t = deepgemm_tiles(64, 2112, 1, 132);
    CHECK(t.block_m == 64);
    CHECK(t.block_n == 16);
    CHECK(t.tiles == 132);
    CHECK(t.waves == 1);
    CHECK(t.wave_fill() == Approx(1.0));
    // 4096 x 2112: 32 row tiles. block_n 112 gives 32 x 19 = 608 tiles in 5 waves (660 slots, the
    // last wave 80 of 132); 120 gives 32 x 18 = 576 and 128 gives 32 x 17 = 544, also 5 waves but
    // last waves of 48 and 16;
    // narrower tiles need 6 waves or more. Fill 608 / 660.
    t = deepgemm_tiles(4096, 2112, 1, 132);
    CHECK(t.block_m == 128);
    CHECK(t.block_n == 112);
    CHECK(t.waves == 5);
    CHECK(t.wave_fill() == Approx(608.0 / 660.0));
    // 4 groups of 256 x 7168 (masked decode layout): 2 x 64 x 4 = 512 tiles at block_n 112, 4 waves
    // with a last of 116; block_n 128 gives 2 x 56 x 4 = 448 tiles, 4 waves with a last of 52.
    t = deepgemm_tiles(256, 7168, 4, 132);
    CHECK(t.block_n == 112);
    CHECK(t.tiles == 512);
    CHECK(t.waves == 4);
}

TEST_CASE("a DeepGEMM GEMM: compute and memory time as a 3-norm, plus the launch", "[models][cost]") {
    // 4096 x 7168 x 16384 fp8: block_n 128, 32 x 56 = 1,792 tiles in 14 waves (fill 1792 / 1848).
    // compute = 2 m n k / (2000e12 x 0.75 x fill x 16384 / 17084); memory = (m k + k n + 2 m n) bytes
    // / 2.7e12. Time = (compute^3 + memory^3)^(1/3) + 4 us.
    const AcceleratorSpec a = device(true);
    OpDesc op = gemm_op("fc", 4096, 7168, 16384, Dtype::fp8);
    op.gemm_kernel = GemmKernel::DeepGemm;
    const double fill = 1792.0 / 1848.0;
    const double compute = 2.0 * 4096 * 7168 * 16384 / (2000e12 * 0.75 * fill * 16384.0 / 17084.0);
    const double memory = (4096.0 * 16384 + 16384.0 * 7168 + 2.0 * 4096 * 7168) / 2.7e12;
    const double expected = std::cbrt(compute * compute * compute + memory * memory * memory) + 4e-6;
    CHECK(make_roofline_cost(a)->seconds(op) == Approx(expected).epsilon(1e-12));
    // Under a tensor clock factor the compute term slows by it, the memory term does not.
    AcceleratorSpec loaded = a;
    loaded.calibration.sustained_clock = 0.8;
    const double slow = compute / 0.8;
    CHECK(make_roofline_cost(loaded, Load::Sustained)->seconds(op) ==
          Approx(std::cbrt(slow * slow * slow + memory * memory * memory) + 4e-6).epsilon(1e-12));
}

TEST_CASE("a DeepGEMM GEMM on a device without the class is the library's", "[models][cost]") {
    // No deepgemm_efficiency: the op is priced exactly as the same GEMM in the vendor library; a
    // bf16 op is never DeepGEMM's (its kernels are fp8).
    const auto plain = make_roofline_cost(device(false));
    OpDesc dg = gemm_op("fc", 512, 7168, 2048, Dtype::fp8);
    dg.gemm_kernel = GemmKernel::DeepGemm;
    CHECK(plain->seconds(dg) == plain->seconds(gemm_op("fc", 512, 7168, 2048, Dtype::fp8)));
    const auto with = make_roofline_cost(device(true));
    OpDesc bf = gemm_op("fc", 512, 7168, 2048, Dtype::bf16);
    const double library = with->seconds(bf);
    bf.gemm_kernel = GemmKernel::DeepGemm;
    CHECK(with->seconds(bf) == library);
    CHECK(with->seconds(dg) != plain->seconds(dg));
    // A device that states no SM count cannot place DeepGEMM's tiles: the library's pricing.
    AcceleratorSpec unknown = device(true), unknown_library = device(false);
    unknown.compute_units = unknown_library.compute_units = 0;
    CHECK(make_roofline_cost(unknown)->seconds(dg) == make_roofline_cost(unknown_library)->seconds(dg));
}
