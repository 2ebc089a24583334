#pragma once
// The serving system: the simulated pools of a plan (ServingPlan::pools()), each of identical
// replicas behind a router, on one discrete-event engine. A request arrives at the first simulated
// pool (admit); an aggregated pool serves it to its last token; a prefill pool computes its prompt
// and first token, then its KV cache moves over the network to a replica of the decode pool
// (kv_transfer.h), which generates the rest. With one pool isolated away (not simulated, of
// unlimited capacity), a prefill pool's request ends with its first token, and a decode pool's
// arrives with its prompt's KV in place.
//
// Arrival drivers (arrivals.h) call admit(); observers subscribe to signals() before run().
#include "sim/simulator.h"
#include "workloads/serving/autoscale.h"
#include "workloads/serving/kv_transfer.h"
#include "workloads/serving/replica.h"
#include "workloads/serving/router.h"
#include "workloads/serving/serving_events.h"
#include "workloads/serving/serving_memory.h"
#include "workloads/serving/serving_sim.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace fathom::workloads::serving {

class ServingSystem final : public ReplicaHost, private Fleet {
public:
    // Throws sim::InputError when a pool's replica does not fit its devices.
    explicit ServingSystem(const ServingInputs& in);
    ServingSystem(const ServingSystem&) = delete;
    ServingSystem& operator=(const ServingSystem&) = delete;
    ~ServingSystem() override;

    sim::Simulator& simulator() { return sim_; }
    ServingSignals& signals() { return signals_; }

    // A request arrives now. Throws sim::InputError for one longer than max_model_len, and
    // sim::KvCapacityError for one that a replica's whole KV cache cannot hold.
    void admit(const Request& req);
    // Runs until no event is left (with the flows of the KV transfers, on a flow network).
    void run();

    // The KV blocks of each simulated replica, in the events' replica order.
    std::vector<int64_t> kv_capacities() const;
    int64_t cost_cache_entries() const;  // the pools' iteration shapes priced
    int64_t lora_loads() const;          // adapters loaded into GPU slots, all replicas
    // How every pool's ops were priced, by class.
    OpSources op_sources() const;
    // The memory of the pool that decodes (aggregated or decode), or of the prefill pool alone.
    const ReplicaMemory& decoding_memory() const { return pools_.back().memory; }

    void prefilled(Replica& from, Sequence* s) override;
    void finished(Sequence* s) override;

    // Autoscaling (autoscale.h): the run's end (the last request's completion; without autoscaling,
    // the last event), and the autoscaler's figures up to it.
    sim::Time end_time() const;
    std::optional<AutoscaleReport> autoscale_report() const;

private:
    struct PoolState {
        Pool pool;
        ReplicaMemory memory;
        std::unique_ptr<PoolCosts> costs;  // its replicas' (and their restarts')
        std::vector<std::unique_ptr<Replica>> replicas;
        std::unique_ptr<Router> router;
        std::vector<ReplicaLoad> loads;  // reused by route()
    };
    void build(const Pool& pool, const models::CostModel& cost, size_t pool_index, int& index, int& rank);
    void connect_kv_transfers();
    Sequence* new_sequence(const Request& req);
    Replica& route(PoolState& pool, const Request& req);  // the replica the pool's router picks
    void check_capacity(const Replica& r, const Request& req, const char* which) const;
    void arrive_with_kv(Sequence* s);  // the decode pool alone: the prompt's KV is in place
    // Fleet: the autoscaler's view of the aggregated pool.
    ReplicaLoad load(int replica) const override {
        return pools_.front().replicas[static_cast<size_t>(replica)]->load();
    }
    void ready(int replica) override;
    int64_t waiting() const override { return static_cast<int64_t>(front_door_.size()); }

    const ServingInputs& in_;
    sim::Simulator sim_;
    ServingSignals signals_;
    std::optional<KvTier> store_;   // the KV store the replicas share (KvSettings::store_bytes)
    std::vector<PoolState> pools_;  // the simulated pools, in request order
    PoolState* decode_ = nullptr;   // the decode pool behind a simulated prefill pool
    std::unique_ptr<KvTransfers> kv_transfers_;
    int64_t max_len_ = 0;
    std::optional<AdapterPopularity> popularity_;  // multi-LoRA: draws the adapters requests do not name
    std::deque<Sequence> sequences_;               // stable addresses; recycled through free_
    std::vector<Sequence*> free_;
    // Autoscaling: the autoscaler, the requests waiting for a replica to start, the replicas that
    // served before a restart (their figures still count), whether each replica has served.
    std::unique_ptr<Autoscaler> autoscaler_;
    std::deque<Sequence*> front_door_;
    std::vector<std::unique_ptr<Replica>> retired_;
    std::vector<bool> warm_;
    sim::Time last_finish_;
};

}  // namespace fathom::workloads::serving
