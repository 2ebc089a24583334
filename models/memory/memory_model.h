#pragma once
// Peak device memory of one training rank (one pipeline stage), by component.
//
// Model states per parameter held by the rank (mixed precision with Adam):
//   weights  : 2 bytes (bf16) + 1 byte fp8 copy when GEMMs run in fp8
//   gradients: grad_bytes (4 = fp32 main grads, 2 = bf16), divided by dp at ZeRO >= 2
//   optimizer: 12 bytes (fp32 master weights + Adam m and v), divided by dp at ZeRO >= 1
// At ZeRO-3 the weights are sharded too, plus a working set of gathered layers. Routed-expert
// states are sharded over the expert data-parallel group (the ranks holding the same experts).
// Activations: bytes one micro-batch leaves for the backward pass on this stage times the peak
// number of micro-batches in flight, which comes from the pipeline schedule's order.
#include <string>

namespace fathom::models {

struct MemoryInputs {
    double params = 0;         // parameters held by this rank before ZeRO sharding
    int dp = 1;                // data-parallel degree the states are sharded over
    double expert_params = 0;  // routed-expert parameters held by this rank (mixture of experts)
    // Of these, the trained ones, which have gradients and optimizer states (LoRA: the adapters;
    // frozen weights are held in bf16 only); negative: all of them.
    double trained_params = -1, trained_expert_params = -1;
    int expert_dp = 1;  // the expert data-parallel degree their states are sharded over
    int zero_stage = 0;
    double weight_bytes = 2;  // per parameter
    double grad_bytes = 4;
    double optimizer_bytes = 12;
    double gathered_params = 0;            // ZeRO-3 working set (parameters gathered at once)
    double activation_per_microbatch = 0;  // bytes for one micro-batch through this stage
    double in_flight = 1;                  // peak micro-batches whose activations are alive
    double activations_offloaded = 0;      // of those, bytes held off the device at the peak (offload)
    double transient = 0;                  // largest short-lived buffer (e.g. logits + loss, a recomputed layer)
    double runtime_reserved = 0;           // CUDA context, communication buffers, allocator slack
};

struct MemoryBreakdown {
    double weights = 0, gradients = 0, optimizer = 0, activations = 0, transient = 0, reserved = 0;
    double total() const { return weights + gradients + optimizer + activations + transient + reserved; }
};

MemoryBreakdown estimate_memory(const MemoryInputs& in);

}  // namespace fathom::models
