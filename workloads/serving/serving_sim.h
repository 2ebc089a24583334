#pragma once
// Simulates serving: requests from a RequestSource, routed to replicas (or to a prefill pool and,
// with their KV cache sent over the network, to a decode pool), batched iteration by iteration by
// a batching policy, each iteration priced by IterationCoster, on one discrete-event engine. The
// clock is sim::Time (picoseconds); arrivals are read from the source one at a time, so a trace of
// any length streams through.
//
// Replica pipeline: with pp > 1 a replica keeps up to pp batches in flight (vLLM's virtual
// engines: disjoint sequences); stage s of a batch starts when its stage s-1 is done (plus the
// activation transfer) and stage s is free.
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

namespace fathom::workloads::serving {

struct ServingInputs {
    const models::ModelSpec& model;
    const hardware::ClusterSpec& cluster;
    const ServingPlan& plan;
    // Op costs of the aggregated pool, or of the prefill and decode pools (may be the same model).
    const models::CostModel& cost;
    const models::CostModel* decode_cost = nullptr;  // disaggregated: the decode pool's (null: `cost`)
    const hardware::NetworkModel& network;
};

struct ServingOptions {
    bool keep_records = false;      // fill ServingReport::records
    std::ostream* trace = nullptr;  // Chrome/Perfetto JSON: iterations per replica, KV use counters
    // Called now and then with (requests finished, requests expected or 0 when unknown).
    std::function<void(int64_t, int64_t)> progress;
};

// Throws sim::InputError for traffic the replicas cannot serve (a request longer than
// max_model_len or than a replica's whole KV cache), naming the request.
ServingReport simulate_serving(const ServingInputs& in, RequestSource& source, const ServingOptions& options = {});

}  // namespace fathom::workloads::serving
