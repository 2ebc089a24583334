#include "models/cost/deepgemm_cost.h"

#include "sim/error.h"

#include <cmath>

namespace fathom::models {
namespace {

constexpr double kOverlapNorm = 3;  // the p of the p-norm combining compute and memory time

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

double DeepGemmTiles::wave_fill() const {
    return waves > 0 && sms > 0 ? static_cast<double>(tiles) / static_cast<double>(waves * sms) : 0.0;
}

DeepGemmTiles deepgemm_tiles(int64_t m, int64_t n, int64_t groups, int sms) {
    FATHOM_CHECK(m > 0 && n > 0 && groups > 0 && sms > 0, "a DeepGEMM shape and SM count");
    DeepGemmTiles best;
    best.sms = sms;
    const int block_m = m <= 64 ? 64 : 128;
    int64_t best_last = 0;
    for (int block_n = 16; block_n <= 128; block_n += 8) {
        const int64_t tiles = cdiv(m, block_m) * cdiv(n, block_n) * groups;
        const int64_t waves = cdiv(tiles, sms);
        const int64_t last = tiles % sms == 0 ? sms : tiles % sms;
        // Fewer waves; at equal waves a fuller last wave; at equal fill the wider tile (the loop
        // runs upwards, so a tie goes to this one).
        const bool better = best.waves == 0 || waves < best.waves || (waves == best.waves && last >= best_last);
        if (better) {
            best.block_m = block_m;
            best.block_n = block_n;
            best.tiles = tiles;
            best.waves = waves;
            best_last = last;
        }
    }
    return best;
}

double deepgemm_seconds(const OpDesc& op, const hardware::AcceleratorSpec& acc, double clock) {
    const auto& c = acc.calibration;
    const DeepGemmTiles t = deepgemm_tiles(op.m, op.n, op.batch, acc.compute_units);
    const double k = static_cast<double>(op.k);
    const double compute =
        op.flops / (acc.peak(op.dtype) * clock * c.deepgemm_efficiency * t.wave_fill() * k / (k + c.deepgemm_k_half));
    const double memory = op.bytes / (acc.memory_bandwidth * c.memory_efficiency);
    return std::pow(std::pow(compute, kOverlapNorm) + std::pow(memory, kOverlapNorm), 1.0 / kOverlapNorm);
}

}  // namespace fathom::models
