#pragma once
// Autoscaling (papers.md F11): the number of replicas of an aggregated pool follows the traffic.
// The pool's `replicas` are the most it may hold; a policy (autoscalers/, one per file, registered
// by name) keeps between min_replicas and all of them, as Kubernetes' horizontal pod autoscaler
// scales a Deployment of engines:
//  - Every `interval` (HPA's sync period, 15 s) the policy reads the metric of the replicas that
//    serve and proposes ceil(metric summed over them / target) replicas (the HPA formula,
//    desired = ceil(current x mean metric / target)); a proposal within `tolerance` of the
//    current count (HPA: 0.1) changes nothing.
//  - Scale-up acts at once: the missing replicas start cold. Scale-down follows the highest
//    proposal of the last `scale_down_delay` (HPA's stabilization window, 300 s).
//  - A cold start holds its GPUs for engine_start (process, NCCL, profiling, KV allocation) plus
//    the weights' load (weight bytes of a GPU over the bandwidth of `weights_from`: the node's
//    SSDs, the shared file system, host memory, or a running replica's GPU over the scale-out
//    network; or the engine's loader where it is slower: vLLM's default loader parses the whole
//    checkpoint on every rank at ~1.85 GB/s) plus graph_capture (CUDA graphs, torch.compile), then
//    takes requests.
//  - Scale-down drains: the replica with the fewest outstanding requests (the newest on ties)
//    takes no new ones, finishes those it has, then gives its GPUs back. A restarted replica is a
//    fresh engine (empty caches).
//  - With min_replicas 0 the pool scales to zero; a request that finds no replica waits at the
//    front door (Knative's activator) while one starts, its TTFT counting the cold start.
// GPU-hours count the GPUs a replica holds from its start (cold start included) to the end of its
// drain, or to the end of the run (the last request's completion).
//
// Not modelled: several replicas starting on one node sharing its drives (each start gets the
// bandwidth of its own GPUs' share); loaders other than the engine's default (state load_bandwidth
// for a measured one: Run:ai's streamer, fastsafetensors, ServerlessLLM); scaling a disaggregated
// plan's pools.
#include "hardware/spec.h"
#include "sim/registry.h"
#include "sim/simulator.h"
#include "workloads/serving/router.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace fathom::workloads::serving {

struct SloSettings;
struct PoolLayout;

struct AutoscaleSettings {
    std::string policy = "none";  // registry name (autoscale_policy_registry); "none": a fixed pool
    int64_t min_replicas = 1;
    int64_t initial_replicas = -1;  // serving at time 0, warm (-1: min_replicas)
    double target = 0;              // the policy's target value a replica (see its registry entry)
    double interval_s = 15;
    double scale_down_delay_s = 300;
    double tolerance = 0.1;
    std::string weights_from;   // ssd, storage, host, peer ("": not stated)
    double load_bandwidth = 0;  // bytes/s a GPU loads its weights at (0: from the path of weights_from)
    // The engine's weight loader: bytes/s a rank parses and copies at most (0: no limit), and whether
    // each rank reads the whole checkpoint (every rank's shards) rather than its own shard.
    double loader_bandwidth = 0;
    bool loader_reads_all = false;
    double engine_start_s = -1;   // -1: not stated (the engine preset's)
    double graph_capture_s = -1;  // -1: not stated

    bool enabled() const { return policy != "none"; }
    int64_t initial() const { return initial_replicas >= 0 ? initial_replicas : min_replicas; }
};

// The weight sources a cold start loads from.
const std::vector<std::string>& weight_sources();

// A cold start's parts, in seconds.
struct ColdStart {
    double engine_s = 0, weights_s = 0, graphs_s = 0;
    double total() const { return engine_s + weights_s + graphs_s; }
};

// The cold start of a replica of `layout` holding `weight_bytes` a GPU. The weights take the longer
// of the path (a GPU's shard over its bandwidth) and the loader (the bytes a rank reads over
// loader_bandwidth: its shard, or with loader_reads_all the whole checkpoint, weight_bytes x
// tp x pp); a measured load_bandwidth replaces both. Throws sim::InputError naming the key when the
// cluster lacks the path (no SSD, no shared file system).
ColdStart cold_start(const AutoscaleSettings& a, const hardware::ClusterSpec& cluster, const PoolLayout& layout,
                     double weight_bytes);

// What a policy reads at an evaluation.
struct FleetView {
    const std::vector<ReplicaLoad>& loads;  // every replica of the pool; `available` ones serve
    int64_t serving = 0;                    // replicas taking requests
    int64_t waiting = 0;                    // requests at the front door (no replica to take them)
    // Of the requests finished since the last evaluation: how many, and their TTFT and TPOT at the
    // SLO's target attainment (the quantile), seconds.
    int64_t finished = 0;
    double ttft_s = 0, tpot_s = 0;
    const SloSettings& slo;
    double target = 0;
};

class AutoscalePolicy {
public:
    virtual ~AutoscalePolicy() = default;
    // The replicas the fleet should have, before rounding up (HPA's current x metric / target).
    virtual double desired(const FleetView& v) const = 0;
};

using AutoscalePolicyFactory = std::unique_ptr<AutoscalePolicy> (*)();
using AutoscalePolicyRegistry = sim::Registry<AutoscalePolicyFactory>;
const AutoscalePolicyRegistry& autoscale_policy_registry();
std::vector<std::string> autoscale_policy_choices();  // "none" and the registry's names

std::unique_ptr<AutoscalePolicy> make_queue_autoscaler();
std::unique_ptr<AutoscalePolicy> make_kv_autoscaler();
std::unique_ptr<AutoscalePolicy> make_slo_autoscaler();

// What the autoscaler asks of the pool it scales (the serving system).
class Fleet {
public:
    virtual ~Fleet() = default;
    virtual ReplicaLoad load(int replica) const = 0;
    virtual void ready(int replica) = 0;  // a cold start ended: the replica takes requests
    virtual int64_t waiting() const = 0;  // requests at the front door
};

// The report's autoscaling figures.
struct AutoscaleReport {
    double gpu_hours = 0;
    double replicas_mean = 0;  // replicas held, averaged over the run
    int64_t replicas_peak = 0;
    int64_t scale_ups = 0, scale_downs = 0;  // replicas started, replicas drained
    double cold_start_s = 0;                 // one replica's cold start
    // (time s, replicas held) at every change, from (0, initial)
    std::vector<std::pair<double, int64_t>> timeline;
};

class Autoscaler {
public:
    Autoscaler(sim::Simulator& sim, Fleet& fleet, const AutoscaleSettings& settings, const SloSettings& slo,
               int64_t replicas, int64_t gpus_per_replica, const ColdStart& cold);

    bool available(int replica) const { return state_[static_cast<size_t>(replica)] == State::Serving; }
    bool any_available() const { return serving_ > 0; }
    void start();  // the first evaluation, one interval in
    // A request found no replica: start one now if none is starting (the activator).
    void wake_from_zero();
    // A request of `replica` finished after `ttft_s` and `tpot_s` (-1: one token, none): a draining
    // replica left idle gives its GPUs back.
    void finished(int replica, double ttft_s, double tpot_s);
    AutoscaleReport report(sim::Time end) const;

private:
    enum class State { Off, Starting, Serving, Draining };
    void evaluate();
    void scale_to(int64_t want);
    void start_replica();
    void drain_replica();
    void set(size_t r, State s);

    sim::Simulator& sim_;
    Fleet& fleet_;
    const AutoscaleSettings& a_;
    const SloSettings& slo_;
    std::unique_ptr<AutoscalePolicy> policy_;
    int64_t gpus_per_replica_;
    ColdStart cold_;
    std::vector<State> state_;
    std::vector<ReplicaLoad> loads_;                    // reused by evaluate()
    std::vector<double> ttft_, tpot_;                   // finished since the last evaluation
    std::deque<std::pair<double, int64_t>> proposals_;  // (time, replicas) within the delay
    int64_t held_ = 0, serving_ = 0, starting_ = 0;
    int64_t ups_ = 0, downs_ = 0;
    std::vector<std::pair<double, int64_t>> timeline_;  // (time s, replicas held) at every change
};

}  // namespace fathom::workloads::serving
