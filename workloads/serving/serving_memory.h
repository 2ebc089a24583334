#pragma once
// Device memory of one serving replica and the KV cache it leaves (as vLLM sizes it in
// determine_num_available_blocks): usable = capacity x gpu_memory_utilization; minus the weights of
// the device's share of the model (its pipeline stage, 1/tp of each matrix, in the weight dtype;
// the embedding on the first stage, the output layer on the last); minus the peak activations of a
// forward pass over max_num_batched_tokens tokens (vLLM profiles one such pass) and the fp32 logits
// of max_num_seqs rows; minus the engine's runtime reserve. The rest holds KV blocks of
// block_size tokens x the stage's layers x 2 (K and V) x kv_heads / tp x head_dim x the KV dtype
// (latent attention: kv_lora_rank + qk_rope_head_dim per token and layer, on every TP rank). Under
// expert parallelism a device holds (experts + redundant) / ep experts of each MoE layer. A
// speculative drafter's weights and cache, and multi-LoRA's GPU slots (max_loras adapters of
// max_rank, allocated with the weights), count with the weights.
#include "models/llm/model_spec.h"
#include "workloads/serving/serving_plan.h"

#include <cstdint>
#include <string>

namespace fathom::workloads::serving {

struct ReplicaMemory {
    double capacity_bytes = 0;  // per device
    double usable_bytes = 0;    // capacity x gpu_memory_utilization (fraction_of_free: capacity)
    double weight_bytes = 0;    // the fullest device's weights
    double activation_bytes = 0;
    double reserved_bytes = 0;
    double kv_bytes = 0;            // left for the KV cache on the fullest device (may be < 0)
    double block_bytes = 0;         // one KV block on one device
    double kv_bytes_per_token = 0;  // one token's KV over the whole model (all layers, all TP ranks)
    int64_t kv_blocks = 0;          // blocks per replica (0 when nothing is left)

    bool fits() const { return kv_blocks > 0; }
    std::string why_not() const;  // "weights 70.6 GB + activations ... exceed ..." when !fits()
};

ReplicaMemory replica_memory(const models::ModelSpec& model, const PoolLayout& pool, const models::KernelStack& kernels,
                             const KvSettings& kv, const BatchingSettings& batching, const EngineSettings& engine,
                             const SpeculativeSettings& spec = {}, const LoraSettings& lora = {});

// One whole KV block (every layer, every head: what a shared store keeps of it, KvSettings::store_bytes).
double store_block_bytes(const models::ModelSpec& model, const KvSettings& kv);

}  // namespace fathom::workloads::serving
