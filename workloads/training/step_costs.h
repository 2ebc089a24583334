#pragma once
// What one rank's passes of a training step cost: the layer programs of the model priced once per
// pass kind and layer kind (dense; mixture-of-experts), the embedding and head segments of the
// first and last virtual stages, the pipeline send, and the per-layer parameter traffic of data
// parallelism (expert parameters over the expert data-parallel group).
#include "models/llm/model_spec.h"
#include "workloads/replay/program_cost.h"
#include "workloads/training/schedules/pipeline_schedule.h"
#include "workloads/training/training_plan.h"

#include <array>
#include <optional>

namespace fathom::workloads {

inline constexpr int kPassKinds = 4;
inline size_t pass_index(PassKind k) { return static_cast<size_t>(k); }

// One layer of one kind.
struct LayerCost {
    // Per pass kind. Backward and BackwardInput include recomputation: the selective ops, or under
    // full recomputation the whole forward (its collectives too).
    std::array<PassCost, kPassKinds> pass;
    std::array<PlacedComms, kPassKinds> placed;  // pass[k].placed(), listed once
    double params = 0;                           // parameters one rank holds outside experts (divided by tp)
    double expert_params = 0;                    // routed-expert parameters one rank holds (E / ep experts / etp)
    double zero3_gather = 0;  // ZeRO-3: all-gather of the layer's bf16 parameters (dp; experts over edp)
    double zero3_reduce = 0;  // ZeRO-3: reduce-scatter of its gradients
    CommMoves zero3_gather_moves, zero3_reduce_moves;  // what those move (dp, then edp)
};

struct StepCosts {
    LayerCost dense;
    LayerCost moe;  // the mixture-of-experts layers (model.moe); unused for a dense model
    // Under full recomputation of only some layers (training.recompute_num_layers), the layers that
    // keep their activations: priced without recomputation. Unset otherwise.
    std::optional<LayerCost> dense_kept, moe_kept;
    // A layer of the kind, `recomputed` or not (the layers the plan does not recompute).
    const LayerCost& layer(bool moe_layer, bool recomputed = true) const {
        const auto& kept = moe_layer ? moe_kept : dense_kept;
        return !recomputed && kept ? *kept : moe_layer ? moe : dense;
    }
    // The embedding segment of the first virtual stage (forward: before its layers; backward:
    // after) and the head segment of the last (forward: after its layers; backward: before), per
    // pass kind; none where the pass has no such work.
    std::array<std::optional<PassCost>, kPassKinds> embedding, head;
    double p2p = 0;        // one send of a pass's boundary activation to the next stage, s
    double p2p_bytes = 0;  // its bytes
    CommMoves p2p_moves;   // what it moves
};

// The token batch, sharding, kernels and routing load one rank sees in one micro-batch pass.
models::LayerInputs microbatch_inputs(const models::ModelSpec& model, const TrainingPlan& plan);

// Parameters one rank holds of one layer, outside its routed experts (split over tp but for the
// replicated norms, latent down projections and router) and of them.
double layer_rank_params(const models::ModelSpec& model, const ParallelLayout& layout, bool moe_layer);
double layer_rank_expert_params(const models::ModelSpec& model, const ParallelLayout& layout, bool moe_layer);
// LoRA adapter parameters one rank holds per (dense) layer; 0 without LoRA.
double layer_rank_lora_params(const models::ModelSpec& model, const TrainingPlan& plan);
// Parameters the whole model trains: every one, or (LoRA) the adapters of every layer.
double trained_params(const models::ModelSpec& model, const TrainingPlan& plan);
// Model FLOPs per token of one training step: 3 x the forward (forward, input and weight
// gradients); under LoRA 2 x the forward (no weight gradients for the frozen base) plus 6 FLOPs per
// adapter parameter (the adapters' forward and both gradients).
double training_model_flops_per_token(const models::ModelSpec& model, const TrainingPlan& plan,
                                      bool causal_attention = true);

StepCosts cost_training_step(const models::ModelSpec& model, const TrainingPlan& plan, ProgramCoster& coster);

}  // namespace fathom::workloads
