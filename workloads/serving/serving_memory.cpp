#include "workloads/serving/serving_memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fathom::workloads::serving {

std::string ReplicaMemory::why_not() const {
    char buf[400];
    std::snprintf(
        buf, sizeof buf,
        "the model does not fit the replica's devices: weights %.1f GB + activations %.1f GB + runtime %.1f GB "
        "leave %.1f GB of the %.1f GB usable per device (capacity x gpu_memory_utilization, or the whole "
        "capacity when the fraction applies to the free memory) for the KV cache",
        weight_bytes / 1e9, activation_bytes / 1e9, reserved_bytes / 1e9, kv_bytes / 1e9, usable_bytes / 1e9);
    return buf;
}

namespace {

// The drafter's weights a GPU holds beside the target's (speculative.h): a draft model at the
// pool's TP, or an EAGLE head's or MTP module's one decoder layer (`layer_params` a layer of the
// target; its output head shared with the target's, as EAGLE and DeepSeek's MTP share it).
double drafter_weight_bytes(const SpeculativeSettings& spec, double layer_params, double tp) {
    if (!spec.enabled()) return 0;
    if (spec.method == SpecMethod::Draft && spec.draft) return spec.draft->total_params(0) * 2.0 / tp;
    if (spec.method == SpecMethod::Eagle || spec.method == SpecMethod::Mtp) return layer_params * 2.0 / tp;
    return 0;
}

// The KV cache of one token and layer of `m` on one of `tp` ranks. Latent attention caches one
// compressed latent per token and layer (kv_lora_rank + rope dimensions), the same on every TP rank
// (it has no heads to split).
double kv_bytes_per_token_layer(const models::ModelSpec& m, double tp, const KvSettings& kv) {
    if (m.mla.enabled())
        return static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * hardware::dtype_bytes(kv.dtype);
    const double kv_heads_per_rank = std::max(1.0, static_cast<double>(m.kv_heads) / tp);
    return 2.0 * kv_heads_per_rank * static_cast<double>(m.dim_head()) * hardware::dtype_bytes(kv.dtype);
}

}  // namespace

double store_block_bytes(const models::ModelSpec& m, const KvSettings& kv) {
    return static_cast<double>(kv.block_size) * static_cast<double>(m.layers) * kv_bytes_per_token_layer(m, 1.0, kv);
}

namespace {

// The drafter's own cache of a token a GPU holds, in the target's blocks: a draft model's layers,
// an EAGLE head's or MTP module's one layer (`per_token_per_layer`, the target's).
double drafter_token_bytes(const SpeculativeSettings& spec, double per_token_per_layer, double tp,
                           const KvSettings& kv) {
    if (!spec.enabled()) return 0;
    if (spec.method == SpecMethod::Draft && spec.draft)
        return static_cast<double>(spec.draft->layers) * kv_bytes_per_token_layer(*spec.draft, tp, kv);
    if (spec.method == SpecMethod::Eagle || spec.method == SpecMethod::Mtp) return per_token_per_layer;
    return 0;
}

}  // namespace

ReplicaMemory replica_memory(const models::ModelSpec& m, const PoolLayout& pool, const models::KernelStack& kernels,
                             const KvSettings& kv, const BatchingSettings& batching, const EngineSettings& engine,
                             const SpeculativeSettings& spec, const LoraSettings& lora) {
    ReplicaMemory r;
    const double tp = pool.tp;
    const int pp = pool.pp;
    // Quantized weights (fp8, fp4 with its block scales) at their width, 16-bit ones at two bytes.
    const hardware::Dtype wd = kernels.weight_only ? *kernels.weight_only : kernels.gemm_dtype;
    const double wbytes =
        hardware::dtype_bytes(wd == hardware::Dtype::fp16 || wd == hardware::Dtype::bf16 ? hardware::Dtype::bf16 : wd);
    // The fullest stage: the first stage gets the remainder layers and the embedding; the last the
    // output layer (kept in bf16). With one stage, both.
    const int64_t layers0 = (m.layers + pp - 1) / pp;
    const double emb = m.embedding_params(0) * 2.0 / tp, out = m.output_params() * 2.0 / tp;
    // Mean weights per layer (dense and MoE layers alike: vLLM shards experts over TP). Under expert
    // parallelism a GPU holds (experts + redundant) / ep whole experts of each MoE layer instead of
    // all of them.
    double layer_params = m.total_params(0) - m.embedding_params(0) - m.output_params() -
                          static_cast<double>(m.hidden) * (m.norm == models::Norm::LayerNorm ? 2 : 1);
    if (pool.ep > 1) {
        const double local = static_cast<double>(m.moe.num_experts + pool.redundant_experts) / pool.ep;
        layer_params -=
            static_cast<double>(m.moe_layers()) * m.expert_params() * (static_cast<double>(m.moe.num_experts) - local);
    }
    const double layer_w = layer_params / static_cast<double>(m.layers) * wbytes / tp;
    const double first = static_cast<double>(layers0) * layer_w + emb + (pp == 1 ? out : 0);
    const double last = static_cast<double>(m.layers / pp) * layer_w + out;
    r.weight_bytes = std::max(first, last);
    r.weight_bytes += drafter_weight_bytes(spec, layer_params / static_cast<double>(m.layers), tp);
    if (lora.enabled())
        r.weight_bytes +=
            static_cast<double>(lora.max_loras) * lora_adapter_bytes(m, pool.tp, pool.pp, lora, lora.slot_rank());
    // Activations of one layer's forward at max_num_batched_tokens (bf16): the residual stream and
    // norm output, QKV, attention output and the (gated) MLP intermediate, which vLLM's profiling
    // pass holds at once at most, plus fp32 logits of max_num_seqs rows (1/tp of the vocabulary,
    // then gathered).
    const double t = static_cast<double>(batching.max_num_batched_tokens);
    const double dh = static_cast<double>(m.dim_head());
    const double qkv = m.mla.enabled()
                           ? static_cast<double>(m.q_width() + m.k_width() + m.v_width()) / tp
                           : (static_cast<double>(m.heads) + 2.0 * static_cast<double>(m.kv_heads)) * dh / tp;
    // The widest MLP intermediate per token: the dense MLP, or a MoE layer's top-k routed experts
    // plus its shared ones.
    const double width = std::max(static_cast<double>(m.ffn),
                                  static_cast<double>((m.moe.top_k + m.moe.shared_experts) * m.moe.expert_ffn));
    const double ffn = width * (models::is_gated(m.activation) ? 3.0 : 2.0) / tp;
    r.activation_bytes = t * (4.0 * static_cast<double>(m.hidden) + qkv + ffn) * 2.0 +
                         static_cast<double>(std::min(batching.max_num_seqs, batching.max_num_batched_tokens)) *
                             static_cast<double>(m.vocab) * 4.0 * (1.0 + 1.0 / tp);
    r.reserved_bytes = engine.runtime_reserved_bytes;
    r.capacity_bytes = pool.accelerator.memory_capacity;
    if (kv.fraction_of_free) {
        // TensorRT-LLM: the KV cache takes the fraction of what is free once the engine is loaded.
        r.usable_bytes = r.capacity_bytes;
        const double free = r.usable_bytes - r.weight_bytes - r.activation_bytes - r.reserved_bytes;
        r.kv_bytes = free > 0 ? free * kv.gpu_memory_utilization : free;
    } else {
        r.usable_bytes = r.capacity_bytes * kv.gpu_memory_utilization;
        r.kv_bytes = r.usable_bytes - r.weight_bytes - r.activation_bytes - r.reserved_bytes;
    }
    const double per_token_per_layer = kv_bytes_per_token_layer(m, tp, kv);
    r.block_bytes = static_cast<double>(kv.block_size) * static_cast<double>(layers0) * per_token_per_layer;
    r.block_bytes += static_cast<double>(kv.block_size) * drafter_token_bytes(spec, per_token_per_layer, tp, kv);
    r.kv_bytes_per_token = per_token_per_layer * (m.mla.enabled() ? 1.0 : tp) * static_cast<double>(m.layers);
    r.kv_blocks = r.kv_bytes > 0 ? static_cast<int64_t>(std::floor(r.kv_bytes / r.block_bytes)) : 0;
    return r;
}

}  // namespace fathom::workloads::serving
