#pragma once
// One op-cost interface: seconds for one kernel described by an OpDesc on one accelerator.
// Implementations: RooflineCost (analytical, below); calibrated tables plug in behind the same
// interface (issue: calibration mode).
#include "hardware/spec.h"
#include "models/ops/op.h"

#include <memory>

namespace fathom::models {

class CostModel {
public:
    virtual ~CostModel() = default;
    virtual double seconds(const OpDesc& op) const = 0;
    // False when the prediction for `op` lies outside the range the model was calibrated on
    // (only calibrated tables ever say false).
    virtual bool calibrated(const OpDesc&) const { return true; }
    // seconds(op) and calibrated(op) at once, for a model that finds both with one lookup.
    virtual double priced(const OpDesc& op, bool& in_range) const {
        in_range = calibrated(op);
        return seconds(op);
    }
};

// Roofline with quantization and size-dependent efficiency:
//  GEMM: the better of two output tilings (the catalog tile, and half its width at 90% of its
//   efficiency, as cuBLAS heuristics pick smaller tiles for small problems). With fewer tiles than
//   compute units the idle units are lost (quantization = tiles / units); with more, stream-K
//   scheduling balances the last wave (quantization = 1). A K-loop fill term
//   K / (K + k_half) models prologue/epilogue. time = max(FLOPs / (peak x efficiency x
//   quantization x fill), bytes / achievable bandwidth) + launch overhead.
//  Attention: FLOPs / (peak x efficiency x kv / (kv + seq_half) x causal block waste), at least its
//   memory time; causal self-attention computes nb(nb+1)/2 key blocks of 128 where nb^2/2 are
//   useful (nb = kv / 128), a factor nb / (nb + 1). A ragged batch sums the compute time of its
//   sequence slices (each at its own key length) and pays one launch.
//  Memory-bound and optimizer ops: bytes / (HBM bandwidth x memory efficiency) + launch overhead.
// `Load::Kernel`: an isolated kernel, as microbenchmarks time it (the efficiencies in the catalog).
// `Load::Sustained`: inside a training step that keeps the device busy for seconds, where power
// and thermal limits lower the tensor clocks: GEMM and attention rates are multiplied by the
// device's calibrated `sustained_clock`; memory-bound ops are not (HBM clock is separate).
// `Load::Serving`: inside a serving run, at the device's `serving_clock` (its sustained_clock
// where the catalog gives none).
enum class Load { Kernel, Sustained, Serving };
// The tensor clock factor of an accelerator under a load.
double load_clock(const hardware::AcceleratorSpec& accelerator, Load load);

// A grouped GEMM's throughput relative to the dense GEMM of its rows on `acc` (1 for other ops and
// where the catalog has no curve): AcceleratorCalibration::grouped_relative at the op's rows.
double grouped_relative(const OpDesc& op, const hardware::AcceleratorSpec& acc);
// Fraction of the compute units a GEMM keeps busy with the catalog tile: tiles / units when there
// are fewer tiles than units, else 1 (stream-K balances the last wave).
double gemm_quantization(const OpDesc& op, const hardware::AcceleratorSpec& acc);
std::unique_ptr<CostModel> make_roofline_cost(const hardware::AcceleratorSpec& accelerator, Load load = Load::Kernel);

}  // namespace fathom::models
