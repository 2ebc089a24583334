#include "models/cost/cost_model.h"
#include "models/cost/deepgemm_cost.h"

#include <algorithm>
#include <cmath>

namespace fathom::models {
namespace {

// Relative efficiency of the half-width tile. Estimate: a 128x128 Hopper tile does half the MMA
// work per loaded operand byte of a 128x256 one; with it the model predicts measured.yaml's
// mb-gemm-h100-bf16-square-1024 (only 32 big tiles on 132 SMs) 13.5% fast, where the big tile
// alone would be 29% slow.
constexpr double kSmallTileEfficiency = 0.9;
constexpr double kAttentionBlock = 128;  // key/query block of flash-attention kernels (FA2/FA3, cuDNN)

}  // namespace

double load_clock(const hardware::AcceleratorSpec& a, Load load) {
    switch (load) {
        case Load::Kernel: return 1.0;
        case Load::Sustained: return a.calibration.sustained_clock;
        case Load::Serving: return a.calibration.clock_for_serving();
    }
    return 1.0;
}

namespace {

class RooflineCost final : public CostModel {
public:
    RooflineCost(const hardware::AcceleratorSpec& a, Load load) : acc_(a), clock_(load_clock(a, load)) {}

    double seconds(const OpDesc& op) const override {
        const double bw = acc_.memory_bandwidth * acc_.calibration.memory_efficiency * weight_only_memory(op);
        const double mem_time = op.bytes / bw;
        switch (op.kind) {
            case OpKind::Gemm:
                if (op.gemm_kernel == GemmKernel::DeepGemm && op.dtype == Dtype::fp8 &&
                    acc_.calibration.deepgemm_efficiency > 0 && acc_.compute_units > 0)
                    return deepgemm_seconds(op, acc_, clock_) + acc_.launch_overhead;
                return std::max(gemm_compute(op) / grouped_relative(op, acc_) / weight_only_relative(op), mem_time) +
                       acc_.launch_overhead;
            case OpKind::AttentionFwd:
            case OpKind::AttentionBwd: {
                const auto& c = acc_.calibration;
                const bool backward = op.kind == OpKind::AttentionBwd;
                double eff = (backward ? c.attention_bwd_efficiency : c.attention_fwd_efficiency) *
                             (op.attn.kernel == AttentionKernel::Fa2 ? c.attention_fa2_relative : 1.0);
                if (op.attn.kernel == AttentionKernel::MlaDecode && c.attention_mla_decode_efficiency > 0)
                    eff = c.attention_mla_decode_efficiency;
                // A ragged batch runs as one varlen kernel: each slice's work at the efficiency of
                // its own key length, one launch, and the whole batch's memory traffic.
                double t = 0;
                for (const SequenceSlice& x : op.attn.slices) {
                    const double kv = static_cast<double>(x.kv_len);
                    double fill = kv / (kv + c.attention_seq_half);
                    if (op.attn.causal && x.q_len == x.kv_len) {
                        // Causal tiles: of nb(nb+1)/2 computed key blocks per query-block column only
                        // nb^2/2 are useful (diagonal blocks are half masked): nb / (nb + 1).
                        const double nb = std::ceil(kv / kAttentionBlock);
                        fill *= nb / (nb + 1.0);
                    }
                    // fp8 attention (FlashAttention-3 fp8) runs on the fp8 tensor cores.
                    t += attention_slice_flops(backward, op.attn, x) / (acc_.peak(op.dtype) * clock_ * eff * fill);
                }
                return std::max(t, mem_time) + acc_.launch_overhead;
            }
            case OpKind::MemoryBound:
            case OpKind::Optimizer: return mem_time + acc_.launch_overhead;
        }
        return mem_time;
    }

private:
    // Weight-only GEMMs' dequantization slows their compute (1 where not measured: such formats
    // are refused before pricing; see AcceleratorCalibration::weight_only_efficiency).
    double weight_only_relative(const OpDesc& op) const {
        const double e = acc_.calibration.weight_only_efficiency;
        return op.gemm_kernel == GemmKernel::WeightOnly && e > 0 ? e : 1.0;
    }

    // Weight-only GEMMs stream their packed weights slower than the library GEMM streams its own
    // (AcceleratorCalibration::weight_only_memory_efficiency; 1 where not measured).
    double weight_only_memory(const OpDesc& op) const {
        const double e = acc_.calibration.weight_only_memory_efficiency;
        return op.gemm_kernel == GemmKernel::WeightOnly && e > 0 ? e : 1.0;
    }

    double gemm_efficiency(Dtype d) const {
        const auto& e = acc_.calibration.gemm_efficiency;
        auto it = e.find(d);
        if (it != e.end() && acc_.has(d)) return it->second;
        it = e.find(Dtype::bf16);
        return it != e.end() ? it->second : 0.7;
    }

    double tiled_time(const OpDesc& op, double tile_m, double tile_n, double eff) const {
        const double units = acc_.compute_units;
        const double tiles = std::ceil(static_cast<double>(op.m) / tile_m) *
                             std::ceil(static_cast<double>(op.n) / tile_n) * static_cast<double>(op.batch);
        // Fewer tiles than compute units leaves units idle; with more, stream-K scheduling (cuBLAS
        // on Hopper, CUTLASS) splits the K loop of the last wave, so whole waves are not wasted.
        const double quantization = tiles < units ? tiles / units : 1.0;
        const double k = static_cast<double>(op.k);
        const double fill = k / (k + acc_.calibration.k_half(op.dtype));
        return op.flops / (acc_.peak(op.dtype) * clock_ * eff * quantization * fill);
    }

    double gemm_compute(const OpDesc& op) const {
        const auto& c = acc_.calibration;
        const double eff = gemm_efficiency(op.dtype);
        const double big = tiled_time(op, c.gemm_tile_m, c.gemm_tile_n, eff);
        const double small = tiled_time(op, c.gemm_tile_m, c.gemm_tile_n / 2.0, eff * kSmallTileEfficiency);
        return std::min(big, small);
    }

    hardware::AcceleratorSpec acc_;
    double clock_;
};

}  // namespace

double grouped_relative(const OpDesc& op, const hardware::AcceleratorSpec& acc) {
    if (op.kind != OpKind::Gemm || op.gemm_kernel != GemmKernel::Grouped) return 1.0;
    return acc.calibration.grouped_relative(op.dtype, static_cast<double>(op.group_rows > 0 ? op.group_rows : op.m));
}

double gemm_quantization(const OpDesc& op, const hardware::AcceleratorSpec& acc) {
    const double units = acc.compute_units;
    const double tiles = std::ceil(static_cast<double>(op.m) / acc.calibration.gemm_tile_m) *
                         std::ceil(static_cast<double>(op.n) / acc.calibration.gemm_tile_n) *
                         static_cast<double>(op.batch);
    return tiles < units ? tiles / units : 1.0;
}

std::unique_ptr<CostModel> make_roofline_cost(const hardware::AcceleratorSpec& a, Load load) {
    return std::make_unique<RooflineCost>(a, load);
}

}  // namespace fathom::models
