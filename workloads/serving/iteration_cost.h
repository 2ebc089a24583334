#pragma once
// The duration of one serving iteration (one forward pass of a batch through a replica), from the
// same layer programs, op costs and network model as a training step:
//  - the batch is a ragged TokenBatch: each prefill chunk is one sequence slice of `tokens` queries
//    attending to its context plus itself (chunked prefill attends to the earlier chunks), each
//    decode one query attending to its own KV length; GEMMs see the iteration's total token count
//    (skinny decode GEMMs come out weight-read bound from the roofline's memory term), and decode
//    attention is the memory-bound read of each sequence's KV cache (GQA heads, KV dtype);
//  - TP all-reduces after the attention output projection and FC2 of every layer (NetworkModel),
//    on the critical path (inference engines do not overlap them); with expert parallelism
//    (PoolLayout::ep) the MoE layers' dispatch and combine all-to-alls over the EP group, in series
//    with the compute, or beside the other half's compute under two-batch overlap
//    (EngineSettings::two_batch_overlap: the layer takes max(sum of compute, sum of communication)
//    over the two halves);
//  - latent attention (MLA) decodes in absorbed form over the compressed cache, prefills expanded
//    (KernelStack::mla_absorb);
//  - the first pipeline stage adds the embedding lookup, the last the final norm, the logits of the
//    sequences that sample a token, their all-gather over TP and the sampling softmax;
//  - the engine's CPU time per iteration and per running sequence (EngineSettings).
//
// Speed: seconds() caches costs by shape bucket. Token counts up to 256 are exact; above, they are
// rounded to 128 steps per octave (a relative step below 0.8%, so an error below 0.4% in a term
// linear in them); decode KV lengths enter through their sum (decode attention is memory bound, so
// its time is linear in the bytes read); shared-prefix groups through their count and the sums of
// their keys (bytes) and of queries x keys (FLOPs). exact() prices the shape as given, each decode at its own
// KV length. A test bounds the difference on a sweep of shapes.
#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/llm/model_spec.h"
#include "workloads/parallelism.h"
#include "workloads/replay/program_cost.h"
#include "workloads/serving/serving_plan.h"
#include "workloads/serving/shape_cache.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace fathom::workloads::serving {

struct PrefillChunk {
    int64_t tokens = 0;   // prompt tokens computed in this iteration
    int64_t context = 0;  // tokens of the same sequence already in the KV cache before them
};

struct IterationShape {
    std::vector<PrefillChunk> prefills;
    int64_t decodes = 0;    // sequences generating one token each
    int64_t decode_kv = 0;  // sum over decodes of the keys each attends to (its KV length + verify)
    // Queries a decode runs: 1, or with speculative decoding k + 1 (its last token and k drafts,
    // verified together over its KV cache; speculative.h).
    int64_t verify = 1;
    int64_t samples = 0;    // sequences sampling a token: decodes + prefills that finish their prompt
    int64_t sequences = 0;  // running sequences the engine's CPU handles this iteration
    // Shared-prefix attention (KvSettings::shared_prefix_attention): decodes grouped by the prefix
    // they share. decode_kv then counts, for a grouped decode, only its keys after the prefix.
    int64_t shared_groups = 0;   // groups of >= 2 decodes sharing a prefix
    int64_t shared_queries = 0;  // decodes in those groups
    int64_t shared_keys = 0;     // sum over groups of the prefix's keys (read once per group)
    int64_t shared_work = 0;     // sum over groups of queries x prefix keys (the prefix attention's FLOPs)
    // Multi-LoRA (lora.h): distinct adapters among the batch's sequences (0: none, the base model's).
    int64_t adapters = 0;

    int64_t tokens() const;
};

// One group of decodes sharing a prefix, for IterationCoster::exact.
struct SharedPrefixGroup {
    int64_t queries = 0;  // decodes in the group
    int64_t keys = 0;     // tokens of the shared prefix
};

// Seconds of one iteration on each pipeline stage (the pipeline replays them), and the transfer of
// the activations between consecutive stages.
struct IterationCost {
    std::vector<double> stage_s;  // pp entries, compute + TP collectives (+ CPU overhead on stage 0)
    double p2p_s = 0;             // one stage boundary
    double total() const;         // sum of stages and boundaries: the latency of the iteration
};

// Iteration costs shared between simulations: a search's candidates whose pools are priced alike
// (same model, cluster and cost context, the same pool shape, kernels and engine: one `signature`,
// plans::pool_cost_signature) price each iteration shape once between them. A shape's cost is a
// function of its key alone, so what a simulation reads from the share is what it would have
// computed, bit for bit, whichever thread put it there first; each entry keeps the op sources its
// pricing saw, merged into the reader's (the report's op_sources come out the same). Thread-safe.
class IterationCostShare {
public:
    struct Entry {
        IterationCost cost;
        const OpSources* sources = nullptr;  // the ops its pricing saw (one of the share's distinct ones)
    };
    // The entry of (signature, key), or null. Entries never change or move once inserted.
    const Entry* find(uint64_t signature, const std::vector<int64_t>& key) const;
    const Entry& insert(uint64_t signature, const std::vector<int64_t>& key, IterationCost cost,
                        const OpSources& sources);
    size_t size() const;

private:
    mutable std::mutex mutex_;
    ShapeCache<Entry> entries_;      // keyed by the signature followed by the shape's key
    std::deque<OpSources> sources_;  // distinct, few
    mutable std::vector<int64_t> scratch_;
};

class IterationCoster {
public:
    // A replica's TP group is tp consecutive devices, priced as the first replica's (replicas are
    // placed so that a TP group never straddles nodes when tp divides the GPUs per node).
    // Expert parallelism (pool.ep > 1): each rank's MoE layers dispatch its tokens over the EP group;
    // `expert_load` is the busiest rank's routed rows over the mean (ServingPlan::expert_load).
    IterationCoster(const models::ModelSpec& model, const PoolLayout& pool, const models::KernelStack& kernels,
                    const EngineSettings& engine, const models::CostModel& cost, const hardware::NetworkModel& network,
                    double expert_load = 1.0);
    IterationCoster(const IterationCoster&) = delete;  // its ProgramCoster refers to layout_
    IterationCoster& operator=(const IterationCoster&) = delete;

    // Priced as given; `decode_kv_lens` (optional) lists each decode's KV length, whose sum must be
    // shape.decode_kv; without it the decodes attend to their mean. `groups` (optional) lists the
    // shared-prefix groups, which must add up to the shape's shared_* totals; without it the groups
    // are priced as shared_groups equal groups (prefix shared_keys / shared_groups, and as many
    // queries each as keep shared_work, the FLOPs, exact up to rounding).
    IterationCost exact(const IterationShape& shape, const std::vector<int64_t>* decode_kv_lens = nullptr,
                        const std::vector<SharedPrefixGroup>* groups = nullptr);
    // Cached by shape bucket.
    const IterationCost& seconds(const IterationShape& shape);
    // Multi-LoRA serving: shapes with adapters > 0 add the batched LoRA kernels of `lora`'s rank and
    // modules to every layer (lora.h). seconds() prices them apart, by the batch's tokens (bucketed)
    // and adapters, and returns a reference valid until its next call for such a shape.
    void set_lora(const LoraSettings& lora);
    // Reads and fills `share` under `signature` when a shape misses this coster's own cache.
    void set_share(IterationCostShare* share, uint64_t signature) {
        share_ = share;
        signature_ = signature;
    }
    size_t cache_size() const { return cache_.size(); }
    // How the ops priced so far were priced, by class.
    const OpSources& op_sources() const { return coster_.sources(); }

private:
    // The batch, the shard and the routing `exact` prices (arguments as exact's).
    models::LayerInputs layer_inputs(const IterationShape& shape, const std::vector<int64_t>* decode_kv_lens,
                                     const std::vector<SharedPrefixGroup>* groups) const;
    // One layer's batched LoRA kernels for the shape's adapters (0 without).
    double lora_seconds(const IterationShape& shape, const models::LayerInputs& in);
    // The shape key_ stands for (seconds' representative of its bucket).
    IterationShape represented() const;
    const models::ModelSpec& model_;
    PoolLayout pool_;
    models::KernelStack kernels_;
    EngineSettings engine_;
    ParallelLayout layout_;
    ProgramCoster coster_;
    std::vector<int> layers_per_stage_;
    std::vector<int> moe_layers_per_stage_;  // of them, mixture-of-experts layers
    double expert_load_ = 1.0;
    LoraSettings lora_;
    ShapeCache<IterationCost> cache_;
    std::vector<int64_t> key_;                                  // reused
    std::map<std::pair<int64_t, int64_t>, double> lora_cache_;  // (tokens, adapters) -> one layer's kernels
    IterationCost with_lora_;                                   // seconds' answer for a shape with adapters
    IterationCostShare* share_ = nullptr;
    uint64_t signature_ = 0;
    std::vector<const OpSources*> merged_;  // the share's op sources merged into this coster's
    // key_'s cost: from the share when it has it, else priced (and given to the share).
    IterationCost priced_or_shared();
};

// Rounds a token count to its bucket (exact up to 256, then 128 steps per octave).
int64_t bucket_tokens(int64_t n);

}  // namespace fathom::workloads::serving
