#pragma once
// Simulates serving: requests from a RequestSource, delivered by an arrival driver (arrivals.h) to
// the serving system (serving_system.h: pools of replicas behind routers, KV transfers between a
// prefill and a decode pool), each replica batching iteration by iteration by a batching policy,
// each iteration priced by IterationCoster, on one discrete-event engine. The clock is sim::Time
// (picoseconds); arrivals are read from the source one at a time, so a trace of any length streams
// through. The statistics of the report come from collectors subscribed to what the engine emits
// (workloads/metrics/serving_*.h), which convert engine times to the report's seconds.
//
// Determinism: events at equal times run in the order they were scheduled; routers, policies and
// the random streams are deterministic, so a scenario and seed give bit-identical results.
#include "hardware/network/network_model.h"
#include "models/cost/cost_model.h"
#include "models/llm/model_spec.h"
#include "workloads/serving/serving_metrics.h"
#include "workloads/serving/serving_plan.h"
#include "workloads/serving/traffic/traffic.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <vector>

namespace fathom::workloads {
class ServingSeries;  // workloads/metrics/serving_series.h
}

namespace fathom::workloads::serving {

class IterationCostShare;  // iteration_cost.h

struct ServingInputs {
    const models::ModelSpec& model;
    const hardware::ClusterSpec& cluster;
    const ServingPlan& plan;
    // Op costs of each pool of plan.pools(), in that order (pools may share one); null where a pool
    // is not simulated.
    std::vector<const models::CostModel*> pool_costs;
    const hardware::NetworkModel& network;
    uint64_t seed = 0;  // the scenario's seed (speculative decoding's acceptance draws)
    // Iteration costs shared with other simulations (a search's candidates), or none; each pool's
    // signature there (plans::pool_cost_signature), in plan.pools() order.
    IterationCostShare* cost_share = nullptr;
    std::vector<uint64_t> pool_signatures;
};

struct ServingOptions {
    bool keep_records = false;        // fill ServingReport::records
    std::ostream* trace = nullptr;    // Chrome/Perfetto JSON: iterations per replica, KV use counters
    ServingSeries* series = nullptr;  // the report's time series (batches, KV use, tokens), when asked for
    // Called now and then with (requests finished, requests expected or 0 when unknown).
    std::function<void(int64_t, int64_t)> progress;
};

// Throws sim::InputError for traffic the replicas cannot serve (a request longer than
// max_model_len or than a replica's whole KV cache), naming the request.
ServingReport simulate_serving(const ServingInputs& in, RequestSource& source, const ServingOptions& options = {});

}  // namespace fathom::workloads::serving
