#include "models/memory/memory_model.h"

namespace fathom::models {

MemoryBreakdown estimate_memory(const MemoryInputs& in) {
    MemoryBreakdown b;
    const double dp = in.dp > 0 ? in.dp : 1;
    const double edp = in.expert_dp > 0 ? in.expert_dp : 1;
    // Per-parameter bytes of a state sharded from ZeRO stage `z` on.
    const double trained = in.trained_params >= 0 ? in.trained_params : in.params;
    const double trained_experts = in.trained_expert_params >= 0 ? in.trained_expert_params : in.expert_params;
    auto states = [&](double params, double experts, double bytes, int z) {
        return params * bytes / (in.zero_stage >= z ? dp : 1.0) + experts * bytes / (in.zero_stage >= z ? edp : 1.0);
    };
    // Weights: every parameter held (frozen ones too), plus separate adapters when only part is trained.
    b.weights = states(in.params, in.expert_params, in.weight_bytes, 3);
    if (in.trained_params >= 0) b.weights += states(trained, trained_experts, in.weight_bytes, 3);
    if (in.zero_stage >= 3) b.weights += in.gathered_params * in.weight_bytes;
    b.gradients = states(trained, trained_experts, in.grad_bytes, 2);
    b.optimizer = states(trained, trained_experts, in.optimizer_bytes, 1);
    b.activations = in.activation_per_microbatch * in.in_flight - in.activations_offloaded;
    b.transient = in.transient;
    b.reserved = in.runtime_reserved;
    return b;
}

}  // namespace fathom::models
