#include "plans/memory_fit.h"

#include "sim/enum_names.h"
#include "workloads/training/training_memory.h"

#include <algorithm>

namespace fathom::plans {
namespace {

using workloads::Recompute;
using workloads::TrainingPlan;

struct Fit {
    const models::ModelSpec& model;
    const hardware::ClusterSpec& cluster;
    bool oom(const TrainingPlan& q) const {
        return workloads::estimate_training_memory(model, cluster, q).out_of_memory;
    }
};

// Optimizer sharding first: ZeRO-1 where the framework's distributed optimizer keeps a full
// gradient buffer (the Megatron family), up to ZeRO-2 elsewhere (DeepSpeed).
void fit_zero_stage(const Fit& f, TrainingPlan& q, int max_stage, std::vector<std::string>& notes) {
    if (q.layout.dp * q.layout.cp <= 1 || !f.oom(q)) return;
    const int stated = q.training.zero_stage;
    for (int z = std::max(1, stated + 1); z <= max_stage && f.oom(q); ++z) q.training.zero_stage = z;
    if (q.training.zero_stage != stated)
        notes.push_back("zero_stage " + std::to_string(q.training.zero_stage) +
                        ": the least optimizer sharding that fits (the framework default does not)");
}

// Then bf16 main gradients (fp32 ones are Megatron's choice, not everyone's).
void fit_grad_dtype(const Fit& f, TrainingPlan& q, std::vector<std::string>& notes) {
    if (q.stack.main_grad_bytes() <= 2 || !f.oom(q)) return;
    const workloads::GradDtype stated = q.stack.grad_dtype;
    q.stack.grad_dtype = workloads::GradDtype::Bf16;
    if (!f.oom(q)) notes.push_back("bf16 main gradients: fp32 ones do not fit");
    else q.stack.grad_dtype = stated;
}

// Recompute not stated: selective, with a MoE model selective plus the MoE blocks, then full.
void fit_open_recompute(const Fit& f, TrainingPlan& q, std::vector<std::string>& notes) {
    for (Recompute r : {Recompute::Selective, Recompute::Selective, Recompute::Full}) {
        if (q.training.recompute == Recompute::Selective && r == Recompute::Selective) {
            if (f.model.moe_layers() == 0) continue;
            q.training.recompute_moe = true;
        }
        q.training.recompute = r;
        if (!f.oom(q)) break;
    }
    q.training.recompute_moe = q.training.recompute_moe && q.training.recompute == Recompute::Selective;
    notes.push_back(std::string("recompute not stated; ") + sim::name(q.training.recompute) +
                    (q.training.recompute_moe ? " with the MoE blocks" : "") + " is the least that fits");
}

// A stated selective plan that only fits with more of Megatron-Core's recompute modules
// (--recompute-modules) ran that way: latent attention's up-projections first (cheap GEMMs from the
// kept latents; DeepSeek-V3 recomputes them), then the MoE blocks.
void fit_recompute_modules(const Fit& f, TrainingPlan& q, std::vector<std::string>& notes) {
    if (f.model.mla.enabled()) {
        q.training.recompute_mla_up_proj = true;
        notes.push_back(
            "selective recompute extended to the MLA up-projections (Megatron-Core "
            "--recompute-modules mla_up_proj): the stated plan does not fit otherwise");
    }
    if (f.model.moe_layers() > 0 && f.oom(q)) {
        q.training.recompute_moe = true;
        notes.push_back(
            "selective recompute extended to the MoE blocks (Megatron-Core --recompute-modules moe): "
            "the stated plan does not fit otherwise");
    }
}

}  // namespace

std::vector<std::string> fit_memory(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                    TrainingPlan& plan, const MemoryFitOpen& open) {
    const Fit f{model, cluster};
    std::vector<std::string> notes;
    if (open.zero_stage) fit_zero_stage(f, plan, open.max_zero_stage, notes);
    if (open.grad_dtype) fit_grad_dtype(f, plan, notes);
    if (open.recompute && f.oom(plan)) fit_open_recompute(f, plan, notes);
    else if (plan.training.recompute == Recompute::Selective && f.oom(plan)) fit_recompute_modules(f, plan, notes);
    return notes;
}

}  // namespace fathom::plans
