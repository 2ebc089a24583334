#include "plans/capacity.h"

#include "sim/error.h"
#include "workloads/serving/iteration_cost.h"

#include <algorithm>
#include <cmath>

namespace fathom::plans {

CapacityResult find_capacity(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                             const workloads::serving::ServingPlan& plan, const EvaluationContext& context,
                             uint64_t seed, const std::function<void(int64_t, int64_t)>& progress,
                             workloads::serving::IterationCostShare* share) {
    using namespace workloads::serving;
    if (!plan.traffic.trace.empty())
        throw sim::InputError("capacity needs generated traffic, not a trace", "", 0, "traffic.trace");
    if (plan.traffic.mode == ArrivalMode::Closed)
        throw sim::InputError("capacity varies the request rate; a closed loop (arrival: concurrency) has none", "", 0,
                              "traffic.arrival");
    if (plan.traffic.synthetic.arrival.kind == ArrivalKind::Offline)
        throw sim::InputError("capacity varies the request rate; offline arrivals have none (use poisson)", "", 0,
                              "traffic.arrival");
    if (plan.slo.ttft_s <= 0 && plan.slo.tpot_s <= 0)
        throw sim::InputError("capacity needs an SLO: set slo.ttft and/or slo.tpot", "", 0, "slo");
    CapacityResult res;
    const auto& cap = plan.capacity;
    const int64_t steps_per_seed =
        static_cast<int64_t>(std::ceil(std::log2(std::max(2.0, 1.0 / cap.tolerance) * 64))) + 2;
    const int64_t expected = 1 + cap.seeds * steps_per_seed;
    int64_t done = 0;
    auto tick = [&] {
        ++done;
        if (progress) progress(std::min(done, expected - 1), expected);
    };
    workloads::serving::IterationCostShare own;
    EvaluateOptions options;
    options.cost_share = share ? share : &own;
    auto run = [&](ServingPlan p, uint64_t s) {
        const Outcome o = evaluate_serving(model, cluster, p, context, s, options);
        if (!o.ok()) throw plan_error(o.violations, "");
        tick();
        return *o.serving();
    };
    double hi = cap.max_rate;
    {
        ServingPlan offline = plan;
        offline.traffic.synthetic.arrival.kind = ArrivalKind::Offline;
        const ServingReport r = run(offline, seed);
        res.offline_requests_per_s = r.requests_per_s;
        if (hi <= 0) hi = 2 * r.requests_per_s;
    }
    const double lo0 = std::min(cap.min_rate, hi);
    for (int k = 0; k < cap.seeds; ++k) {
        const uint64_t s = seed + static_cast<uint64_t>(k);
        auto meets = [&](double rate) {
            ServingPlan p = plan;
            p.traffic.synthetic.arrival.rate = rate;
            const ServingReport r = run(p, s);
            res.probes.push_back({s, rate, r.slo_attainment, r.goodput_requests_per_s});
            return r.slo_attainment >= plan.slo.target_attainment;
        };
        double lo = lo0, high = hi, found;
        if (!meets(lo)) {
            res.below_min = true;
            found = 0;
        } else if (meets(high)) {
            res.above_max = true;
            found = high;
        } else {
            while ((high - lo) > cap.tolerance * lo) {
                const double mid = 0.5 * (lo + high);
                (meets(mid) ? lo : high) = mid;
            }
            found = lo;
        }
        res.per_seed.push_back(found);
    }
    std::vector<double> v = res.per_seed;
    std::sort(v.begin(), v.end());
    res.rate = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    res.rate_min = v.front();
    res.rate_max = v.back();
    if (progress) progress(expected, expected);
    return res;
}

}  // namespace fathom::plans
