#pragma once
// What one rank's passes of a training step cost: the layer programs of the model priced once per
// pass kind (all layers alike), the embedding and head segments of the first and last virtual
// stages, the pipeline send, and the per-layer parameter traffic of data parallelism.
#include <array>
#include <optional>

#include "models/llm/model_spec.h"
#include "workloads/replay/program_cost.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/training_plan.h"

namespace fathom::workloads {

inline constexpr int kPassKinds = 4;
inline size_t pass_index(PassKind k) { return static_cast<size_t>(k); }

struct StepCosts {
    // One layer, per pass kind. Backward and BackwardInput include recomputation: the selective
    // ops, or under full recomputation the whole forward (its collectives too).
    std::array<PassCost, kPassKinds> layer;
    // The embedding segment of the first virtual stage (forward: before its layers; backward:
    // after) and the head segment of the last (forward: after its layers; backward: before), per
    // pass kind; none where the pass has no such work.
    std::array<std::optional<PassCost>, kPassKinds> embedding, head;
    double p2p = 0;           // one send of a pass's boundary activation to the next stage
    double layer_params = 0;  // parameters of one layer on one rank (divided by tp)
    double zero3_gather = 0;  // ZeRO-3: all-gather of one layer's bf16 parameters
    double zero3_reduce = 0;  // ZeRO-3: reduce-scatter of one layer's gradients
};

// The token batch, sharding and kernels one rank sees in one micro-batch pass.
models::LayerInputs microbatch_inputs(const TrainingPlan& plan);

StepCosts cost_training_step(const models::ModelSpec& model, const TrainingPlan& plan, ProgramCoster& coster);

}  // namespace fathom::workloads
