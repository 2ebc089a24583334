#pragma once
// A replica's scheduling state as batching policies see it: the waiting queue, the running and
// swapped sequences, and the KV cache, with the operations every policy needs (admit, grow,
// preempt).
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/kv_cache.h"
#include "workloads/serving/kv_tier.h"
#include "workloads/serving/lora.h"
#include "workloads/serving/sequence.h"
#include "workloads/serving/serving_plan.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

namespace fathom::workloads::serving {

class ReplicaState {
public:
    ReplicaState(int id, const BatchingSettings& batching, const KvSettings& kv, int64_t kv_blocks, double block_bytes);
    ReplicaState(const ReplicaState&) = delete;  // its host tier points at its NVMe tier
    ReplicaState& operator=(const ReplicaState&) = delete;

    int id() const { return id_; }
    const BatchingSettings& batching() const { return batching_; }
    // Speculative decoding: the draft tokens a decode verifies beside its own (k), whose KV slots it
    // holds and whose queries count toward the token budget (speculative.h).
    int64_t lookahead() const { return lookahead_; }
    void set_lookahead(int64_t k) { lookahead_ = k; }
    // KV offloading (kv_tier.h): what the requests admitted since the last call load back from the
    // tiers below (one device), and resets it.
    TierLoad take_tier_load() { return std::exchange(tier_load_, TierLoad{}); }
    // Bytes a blocking store (KvSettings::offload_store) copies before the next iteration.
    void add_saved_bytes(double bytes) { tier_load_.saved_bytes += bytes; }
    // The KV store the replicas share (KvSettings::store_bytes; null: none): probed after this
    // replica's own tiers, and every block computed here is stored in it.
    void share_store(KvTier* store) { store_ = store; }
    // Multi-LoRA serving (lora.h): the GPU slots the running sequences' adapters take, and whether
    // admission skips requests whose adapter finds no slot (or stops at them).
    void set_lora(const LoraPool& pool, LoraAdmission admission) {
        lora_.emplace(pool);
        lora_admission_ = admission;
    }
    LoraPool* lora() { return lora_ ? &*lora_ : nullptr; }
    bool lora_enabled() const { return lora_.has_value(); }
    int64_t lora_loads() const { return lora_ ? lora_->loads() : 0; }
    // Whether a waiting request can be admitted as far as its adapter goes; with `skip` admission the
    // first such request is moved to the front of `waiting` (the ones it passes keep their order).
    // Policies admit while this holds (without LoRA: while requests wait).
    bool next_admissible();
    const KvSettings& kv_settings() const { return kv_; }
    KvCache& kv() { return kv_cache_; }
    const KvCache& kv() const { return kv_cache_; }
    double block_bytes() const { return block_bytes_; }  // one block on one device

    std::deque<Sequence*> waiting;   // arrival order; preempted sequences return to the front
    std::vector<Sequence*> running;  // admission order
    std::deque<Sequence*> swapped;   // preempted by swapping, resumed before new admissions

    // Admits the front of `waiting`: prefix-cache lookup, then blocks for the prompt tokens it
    // prefills first (at most `max_chunk`), which it returns. Refused (returns 0, nothing changes)
    // when the blocks would leave fewer than the watermark free; with `reserve_tokens` > 0 the
    // blocks of that many tokens are allocated up front (orca, static: KV for the whole sequence;
    // KvSettings::reserve_output: prompt + output for every policy).
    // With asynchronous offload loads (KvSettings::offload_load "async") a request whose prompt
    // continues with tier blocks gets blocks for its cached and loaded tokens only, leaves `waiting`
    // as Loading, and kParked is returned: the policy goes on to the next request, its budget
    // untouched. The replica takes the loads (take_parked) and requeues each request at the front
    // of `waiting` once its blocks are in.
    int64_t admit_front(int64_t max_chunk, int64_t reserve_tokens = 0);
    static constexpr int64_t kParked = -1;
    // An asynchronous load: the request and what it copies.
    struct ParkedLoad {
        Sequence* seq = nullptr;
        TierLoad load;
    };
    bool has_parked() const { return !parked_.empty(); }
    std::vector<ParkedLoad> take_parked() { return std::exchange(parked_, {}); }
    // Running sequences (not swapped, not finished).
    int64_t running_count() const;
    // Ensures the KV blocks for `tokens` tokens of `s`.
    bool grow(Sequence& s, int64_t tokens);
    // Preempts `s` (running, not in flight): recompute drops its KV and requeues it at the front of
    // `waiting`; swap moves its blocks to host memory (bytes counted in `out`).
    void preempt(Sequence& s, Batch& out);
    // Resumes swapped sequences (oldest first) while their blocks fit; bytes counted in `out`.
    void resume_swapped(Batch& out);
    // The newest running sequence not in flight (the preemption victim), or null.
    Sequence* newest_running();
    // Blocks `s` would need for `tokens` tokens beyond what it holds.
    int64_t blocks_needed(const Sequence& s, int64_t tokens) const;
    // Prefix caching: the full shareable blocks `s` has computed become cached (still referenced by
    // it), so requests admitted from now on hit them (vLLM hashes a block as soon as it is full).
    void publish(Sequence& s);
    // Releases everything `s` holds (finished or dropped); full shareable blocks stay cached.
    void release(Sequence& s);
    // Removes finished and preempted sequences from `running` (keeps admission order).
    void compact_running();
    int64_t in_flight_sequences() const;

private:
    void hold_adapter(Sequence& s);  // s starts running: a user of its adapter's slot
    void drop_adapter(Sequence& s);  // s stops running
    int id_;
    BatchingSettings batching_;
    KvSettings kv_;
    KvCache kv_cache_;
    double block_bytes_;
    int64_t lookahead_ = 0;
    bool async_load_;     // KvSettings::offload_load "async"
    TierLoad tier_load_;  // of the requests admitted since take_tier_load
    std::vector<ParkedLoad> parked_;
    std::optional<KvTier> tier_;      // KV offloading's host tier (KvSettings::offload_bytes)
    std::optional<KvTier> ssd_tier_;  // and the NVMe tier below it (KvSettings::offload_ssd_bytes)
    KvTier* store_ = nullptr;
    std::optional<LoraPool> lora_;
    LoraAdmission lora_admission_ = LoraAdmission::Skip;
    uint64_t admissions_ = 0;
    uint64_t clock_ = 0;  // LRU clock of the prefix cache
};

}  // namespace fathom::workloads::serving
