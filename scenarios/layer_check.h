#pragma once
// Whole-layer ground truth for the per-op cost models: measured transformer layers
// (tools/calibrate/layers.py writes hardware/calibration/<gpu>/layers.csv) against the sum of
// fathom's per-op predictions for the same layer program.
//
// layers.csv columns: model (a catalog model id), phase, batch, q_len, kv_len, time_us (median per
// call), time_p10_us, time_p90_us, note, and optionally elementwise (eager: layers.py, the default;
// fused: layers_compiled.py, the layer under torch.compile). Phases:
//   train         one layer's forward and backward (micro-batch `batch` x `q_len` tokens, causal)
//   forward       its forward alone
//   prefill       one serving prefill chunk: `batch` sequences of `q_len` tokens, no cached prefix
//   decode        one decode iteration: `batch` sequences of one token over `kv_len` cached keys,
//                 eager PyTorch (kernel launches exposed when the GPU outruns the CPU)
//   decode_graph  the same captured as a CUDA graph (what serving engines run)
// The layer is priced as layers.py runs it: TP 1, bf16, flash attention of FlashAttention-3 class
// (cuDNN), elementwise ops eager or fused as the row says (KernelStack::fused_elementwise), no
// communication.
// Optional columns gemm_us, attention_us, elementwise_us, communication_us, memcpy_us, other_us:
// the measured kernel time of each op class (`fathom import` writes them from a profile); the
// first three are checked against the per-op sums of the ops of that class, the others have no op
// in the layer program.
#include "models/cost/cost_model.h"
#include "models/llm/model_spec.h"
#include "plans/catalog.h"

#include <array>
#include <string>
#include <vector>

namespace fathom::scenarios {

struct LayerMeasurement {
    std::string model, phase;
    int64_t batch = 1, q_len = 0, kv_len = 0;
    double seconds = 0;
    bool fused_elementwise = false;  // the `elementwise` column: eager (default) or fused
    int line = 0;                    // in the CSV, for messages
    // The *_us columns of kOpClasses, in seconds (negative: no such column).
    std::array<double, 6> class_seconds{-1, -1, -1, -1, -1, -1};
};

// The op classes of a kernel profile, in the order of LayerMeasurement::class_seconds.
constexpr std::array<const char*, 6> kOpClasses{"gemm", "attention", "elementwise", "communication", "memcpy", "other"};
// The class of an op of a layer program: gemm, attention or elementwise (memory-bound and optimizer).
size_t op_class(const models::OpDesc& op);

// Reads layers.csv; InputError (file, line, column) on a malformed row or an unknown phase.
std::vector<LayerMeasurement> read_layer_csv(const std::string& path);

// Every row names a dense model of the catalog (the layer is priced as dense_layer_forward and
// its backward) or a mixture of experts of MoE layers only, without shared experts (priced as
// moe_layer_forward at EP 1 and its backward: tools/calibrate/moe_layers.py measures those);
// InputError naming `path`, the row's line and the key otherwise.
void check_layer_models(const std::vector<LayerMeasurement>& rows, const plans::Catalog& catalog,
                        const std::string& path);

// The sum of the per-op predictions of `cost` over the layer program the measurement ran, and
// every op (kernel) of that program with its own prediction.
struct LayerSum {
    double seconds = 0;
    std::vector<std::pair<models::OpDesc, double>> each;
};
LayerSum layer_op_sum(const models::ModelSpec& model, const LayerMeasurement& m, const models::CostModel& cost);

}  // namespace fathom::scenarios
