#pragma once
// One engine instance of a pool: its scheduling state (queues, KV cache), batching policy,
// iteration costs and pipeline. It launches a batch whenever its first pipeline stage is free and
// the policy forms one, completes it at the end of the priced iteration, and hands finished
// requests (and, in a prefill pool, prefilled ones) to its host, the serving system.
//
// Pipeline: with pp > 1 a replica keeps up to pp batches in flight (vLLM's virtual engines:
// disjoint sequences); stage s of a batch starts when its stage s-1 is done (plus the activation
// transfer) and stage s is free. The stages' availability is kept in exact seconds, the sums of the
// priced stage times; each batch's completion event is at the picosecond nearest its end
// (engine_time), as the engine's clock.
//
// It emits what it does (serving_events.h) and keeps no statistics.
#include "sim/simulator.h"
#include "workloads/serving/batching/policy.h"
#include "workloads/serving/draft_cost.h"
#include "workloads/serving/iteration_cost.h"
#include "workloads/serving/replica_state.h"
#include "workloads/serving/router.h"
#include "workloads/serving/serving_events.h"
#include "workloads/serving/serving_memory.h"
#include "workloads/serving/serving_sim.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace fathom::workloads::serving {

class Replica;

// What the replicas of a pool share: identical engines on identical GPUs price an iteration shape
// alike, so one cost cache serves them all (a search's profile showed each replica re-pricing the
// shapes its siblings had priced: 1.8M of 15M iterations missed their replica's cache).
// `index`: the pool's in plan.pools() (its signature in a cost share).
struct PoolCosts {
    PoolCosts(const ServingInputs& in, const PoolLayout& pool, const models::CostModel& cost, size_t index);
    IterationCoster iteration;
    DraftCoster draft;
};

// What a replica hands on (the serving system).
class ReplicaHost {
public:
    virtual ~ReplicaHost() = default;
    virtual void prefilled(Replica& from, Sequence* s) = 0;  // prefill pool: first token out, its KV to send
    virtual void finished(Sequence* s) = 0;                  // its last token is out
};

// Where a replica sits: its pool's role, its index in the pool and over all simulated replicas
// (the events' `replica`), and its first global rank.
struct ReplicaPlace {
    PoolRole role = PoolRole::Aggregated;
    int id = 0;
    int index = 0;
    int first_rank = 0;
};

class Replica {
public:
    Replica(sim::Simulator& sim, ServingSignals& signals, ReplicaHost& host, const ReplicaPlace& place,
            const PoolLayout& pool, const ReplicaMemory& mem, const ServingInputs& in, PoolCosts& costs);

    void enqueue(Sequence* s);       // a request routed here waits for admission
    void receive(Sequence* s);       // decode pool: a sequence whose KV arrived
    void release_sent(Sequence* s);  // prefill pool: its KV has been sent
    void routed() { ++outstanding_; }
    void share_store(KvTier* store) { state_.share_store(store); }  // KvSettings::store_bytes
    ReplicaLoad load() const;

    int id() const { return place_.id; }
    int index() const { return place_.index; }
    int first_rank() const { return place_.first_rank; }
    const KvCache& kv() const { return state_.kv(); }
    int64_t lora_loads() const { return state_.lora_enabled() ? state_.lora_loads() : 0; }

private:
    void wake();  // try_launch at the end of the current instant
    void try_launch();
    // Fills the iteration's shape from the batch and marks its sequences in flight.
    IterationShape shape_of(Batch& b, sim::Time now) const;
    void complete(size_t slot);
    void settle(Sequence* s);
    void note_kv(sim::Time now);
    // Asynchronous offload loads the policy parked: each copies after the previous one on the
    // replica's copy stream, then requeues its request at the front of the queue.
    void start_parked(sim::Time now);
    // Seconds an offload tier's load takes: its copies' fixed cost, host bytes, NVMe bytes, and the
    // shared store's bytes over the GPU's NIC share after one network latency.
    double tier_load_seconds(const TierLoad& load) const;

    sim::Simulator& sim_;
    ServingSignals& signals_;
    ReplicaHost& host_;
    ReplicaPlace place_;
    ReplicaState state_;
    IterationCoster& coster_;  // the pool's (PoolCosts)
    std::unique_ptr<BatchingPolicy> policy_;
    std::deque<Sequence*> received_;
    std::vector<double> stage_free_s_;  // per stage, exact seconds (see the header comment)
    std::vector<Batch> slots_;
    std::vector<size_t> free_slots_;
    std::vector<NextToken> next_tokens_;  // of the batch completing now (reused)
    int64_t outstanding_ = 0;             // requests routed here and not finished (prefill pool: not prefilled)
    bool wake_pending_ = false;
    double pcie_bandwidth_;
    double kv_copy_s_;        // seconds a host-tier block's copies add (kv_block_copy_seconds)
    double ssd_bandwidth_;    // one GPU's share of its node's drives' read bandwidth (KV offloading's NVMe tier)
    double store_bandwidth_;  // one GPU's share of its node's scale-out NICs (the shared KV store's loads)
    double store_latency_;
    bool layerwise_load_;  // offload loads beside the iteration, layer by layer (KvSettings::offload_load)
    // Blocking stores (KvSettings::offload_store): bytes a computed token adds to the next
    // iteration's copy to host memory (0: none), and whether generated tokens are stored too.
    double saved_per_token_;
    bool save_decodes_;
    double stage_layers_;     // layers a pipeline stage holds (its last one's compute follows the last load)
    double copy_free_s_ = 0;  // when the copy stream of asynchronous offload loads is free
    // Speculative decoding (speculative.h): k drafts a decode, accepted at rate_ each, drawn from
    // seed_; the drafter's time on the last stage.
    SpeculativeSettings spec_;
    double spec_rate_ = 0;
    uint64_t seed_ = 0;
    DraftCoster& draft_;  // the pool's (PoolCosts)
    // Multi-LoRA: the distinct adapters of a batch (0, the base model, not counted); per adapter the
    // last batch that counted it, for up to kStampedAdapters adapters (4 bytes each), or a scratch
    // list to sort beyond.
    int64_t distinct_adapters(const Batch& b) const;
    static constexpr int64_t kStampedAdapters = 1 << 16;
    mutable std::vector<uint32_t> adapter_seen_;
    mutable uint32_t batch_stamp_ = 0;
    mutable std::vector<int32_t> adapters_;
};

}  // namespace fathom::workloads::serving
