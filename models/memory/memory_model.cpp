#include "models/memory/memory_model.h"

namespace fathom::models {

MemoryBreakdown estimate_memory(const MemoryInputs& in) {
    MemoryBreakdown b;
    const double dp = in.dp > 0 ? in.dp : 1;
    b.weights = in.params * in.weight_bytes / (in.zero_stage >= 3 ? dp : 1.0);
    if (in.zero_stage >= 3) b.weights += in.gathered_params * in.weight_bytes;
    b.gradients = in.params * in.grad_bytes / (in.zero_stage >= 2 ? dp : 1.0);
    b.optimizer = in.params * in.optimizer_bytes / (in.zero_stage >= 1 ? dp : 1.0);
    b.activations = in.activation_per_microbatch * in.in_flight;
    b.transient = in.transient;
    b.reserved = in.runtime_reserved;
    return b;
}

}  // namespace fathom::models
