#include "models/memory/memory_model.h"

namespace fathom::models {

MemoryBreakdown estimate_memory(const MemoryInputs& in) {
    MemoryBreakdown b;
    const double dp = in.dp > 0 ? in.dp : 1;
    const double edp = in.expert_dp > 0 ? in.expert_dp : 1;
    // Per-parameter bytes of a state sharded from ZeRO stage `z` on.
    auto states = [&](double bytes, int z) {
        return in.params * bytes / (in.zero_stage >= z ? dp : 1.0) + in.expert_params * bytes / (in.zero_stage >= z ? edp : 1.0);
    };
    b.weights = states(in.weight_bytes, 3);
    if (in.zero_stage >= 3) b.weights += in.gathered_params * in.weight_bytes;
    b.gradients = states(in.grad_bytes, 2);
    b.optimizer = states(in.optimizer_bytes, 1);
    b.activations = in.activation_per_microbatch * in.in_flight;
    b.transient = in.transient;
    b.reserved = in.runtime_reserved;
    return b;
}

}  // namespace fathom::models
