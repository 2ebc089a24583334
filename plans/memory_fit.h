#pragma once
// The least memory saving that fits: a run that is known to have fitted (a published measurement)
// but whose plan, as far as its source states it, does not fit the memory estimate
// (workloads/training/training_memory.h) must have had some saving in effect. Given which settings
// the source left open, this takes the least of each in turn until the plan fits: optimizer
// sharding (ZeRO stages up to the framework's limit), then bf16 main gradients, then activation
// recomputation (selective, selective with the MoE blocks, full); a stated selective plan that
// still does not fit is extended by Megatron-Core's recompute modules (latent attention's
// up-projections, then the MoE blocks). Each change comes back as a note saying what and why.
// No simulation: only the memory estimate, so a plan search can use it as cheaply as its pruning.
#include "hardware/spec.h"
#include "models/llm/model_spec.h"
#include "workloads/training/training_plan.h"

#include <string>
#include <vector>

namespace fathom::plans {

// Which settings the source leaves open (a stated setting is never changed, except by the
// recompute modules of a stated selective plan), and how far optimizer sharding may go.
struct MemoryFitOpen {
    bool zero_stage = false;
    int max_zero_stage = 2;  // the framework's sharded optimizer: 1 where it keeps a full gradient buffer
    bool grad_dtype = false;
    bool recompute = false;
};

// Changes `plan` (which must pass plans::check_training_plan) by the least savings that make it fit
// and returns a note for each; `plan` is unchanged and no note is returned when it fits already.
// Where nothing open makes it fit, the plan keeps the largest savings tried.
std::vector<std::string> fit_memory(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                    workloads::TrainingPlan& plan, const MemoryFitOpen& open);

}  // namespace fathom::plans
