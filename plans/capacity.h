#pragma once
// Serving capacity: the highest request rate at which a serving plan still meets its SLOs, i.e.
// the share of requests meeting both slo.ttft and slo.tpot is at least slo.target. For each of
// capacity.seeds seeds the rate is bisected between capacity.min_rate and capacity.max_rate (by
// default twice the plan's offline throughput, measured first) until the bracket is narrower than
// capacity.tolerance (relative); the capacities of the seeds give the reported value (their
// median) and spread (min, max). The scenario's arrival process keeps its shape (Poisson, Gamma,
// bursty, constant); only its rate changes.
#include "plans/evaluate.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fathom::plans {

struct CapacityProbe {
    uint64_t seed = 0;
    double rate = 0;
    double attainment = 0;
    double goodput = 0;
};

struct CapacityResult {
    double rate = 0;  // median over seeds of the highest rate meeting the target
    double rate_min = 0, rate_max = 0;
    std::vector<double> per_seed;
    bool below_min = false;  // even min_rate misses the target
    bool above_max = false;  // max_rate still meets it (the capacity is at least `rate`)
    double offline_requests_per_s = 0;
    std::vector<CapacityProbe> probes;  // every simulation, in order
};

// The probes share their iteration costs (through `share`, or one of their own): they differ in
// their traffic alone.
// Throws sim::InputError when the traffic cannot be rescaled (a trace, a closed loop, offline
// arrivals) or the plan sets no SLO; an impossible plan throws with its violations.
CapacityResult find_capacity(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                             const workloads::serving::ServingPlan& plan, const EvaluationContext& context,
                             uint64_t seed, const std::function<void(int64_t, int64_t)>& progress = {},
                             workloads::serving::IterationCostShare* share = nullptr);

}  // namespace fathom::plans
