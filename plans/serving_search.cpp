#include "plans/serving_search.h"

#include "plans/capacity.h"
#include "plans/catalog.h"
#include "plans/search_objective.h"
#include "plans/search_report.h"
#include "plans/search_wire.h"
#include "sim/error.h"
#include "workloads/serving/iteration_cost.h"
#include "workloads/serving/serving_memory.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace fathom::plans {

using workloads::serving::Pool;
using workloads::serving::PoolLayout;
using workloads::serving::PoolRole;
using workloads::serving::ServingPlan;

namespace {

// The serving search's starting plan: the scenario's, aggregated, its decoding pool's settings
// (the aggregated replicas, or the decode pool) as the replicas the axes shape. The
// disaggregation axis splits them into pools (plans/search_keys.cpp).
ServingPlan aggregated_start(const ServingPlan& base) {
    ServingPlan p = base;
    p.replica = *base.pools().back().layout;
    p.prefill.reset();
    p.decode.reset();
    p.isolate = workloads::serving::PoolIsolation::None;
    return p;
}

double price_of(const SearchSpace& s, const std::string& id) {
    for (const auto& [acc, usd] : s.prices)
        if (acc == id) return usd;
    return s.price_per_gpu_hour;
}

// "4 x tp2 h100" (aggregated) or "1P3D tp2 h100" (prefill and decode replicas), the shape and
// accelerator of the first pool (the search gives both pools the same).
std::string layout_of(const ServingPlan& p) {
    const std::vector<Pool> pools = p.pools();
    const PoolLayout& l = *pools.front().layout;
    std::string replicas;
    for (const Pool& pool : pools)
        replicas += pool.role == PoolRole::Aggregated
                        ? std::to_string(pool.layout->replicas) + " x"
                        : std::to_string(pool.layout->replicas) + (pool.role == PoolRole::Prefill ? "P" : "D");
    const std::string shape = "tp" + std::to_string(l.tp) + (l.pp > 1 ? " pp" + std::to_string(l.pp) : "");
    return replicas + " " + shape + " " + l.accelerator.id;
}

void evaluate_one(const models::ModelSpec& model, const hardware::ClusterSpec& cluster, const SearchSpace& space,
                  const EvaluationContext& context, uint64_t seed, workloads::serving::IterationCostShare& share,
                  ServingCandidate& c) {
    const ServingPlan& p = c.plan;
    const std::vector<Pool> pools = p.pools();
    const PoolLayout& first = *pools.front().layout;
    const auto violations = check_serving_plan(model, cluster, p);
    if (!violations.empty()) {
        c.status = CandidateStatus::Pruned;
        c.reason = describe(violations);
        return;
    }
    for (const Pool& pool : pools) {  // every pool, an isolated one too
        const auto mem = workloads::serving::replica_memory(model, *pool.layout, p.kernels, p.kv, p.batching, p.engine,
                                                            p.speculative, p.lora);
        if (!mem.fits()) {
            c.status = CandidateStatus::OutOfMemory;
            c.reason = mem.why_not();
            return;
        }
        c.kv_tokens_per_replica = static_cast<double>(mem.kv_blocks) * static_cast<double>(p.kv.block_size);
    }
    EvaluateOptions options;
    options.cost_share = &share;
    const auto o = guarded_outcome(c, [&] { return evaluate_serving(model, cluster, p, context, seed, options); });
    if (!o) return;
    const auto& r = *o->serving();
    c.status = CandidateStatus::Evaluated;
    c.slo_attainment = r.slo_attainment;
    c.goodput_requests_per_s = r.goodput_requests_per_s;
    c.requests_per_s = r.requests_per_s;
    c.output_tokens_per_s = r.output_tokens_per_s;
    c.ttft_p50_s = r.ttft_s.p50;
    c.ttft_p90_s = r.ttft_s.p90;
    c.tpot_p50_s = r.tpot_s.p50;
    c.tpot_p90_s = r.tpot_s.p90;
    if (r.autoscale) {
        // The GPUs an autoscaled plan holds on average, not the most it may hold, are what it pays for.
        c.gpu_hours = r.autoscale->gpu_hours;
        c.replicas_mean = r.autoscale->replicas_mean;
        c.usd_per_hour *= r.autoscale->replicas_mean / static_cast<double>(p.replica.replicas);
    }
    if (c.usd_per_hour > 0 && c.goodput_requests_per_s > 0)
        c.usd_per_1k_good_requests = c.usd_per_hour / 3600.0 / c.goodput_requests_per_s * 1000.0;
    if (first.accelerator.tdp > 0 && c.output_tokens_per_s > 0)
        c.joules_per_output_token = first.accelerator.tdp * c.gpus / c.output_tokens_per_s;
    const ObjectiveRule& objective = objective_rule(space.objective);
    if (objective.measures_capacity)
        c.capacity_requests_per_s = find_capacity(model, cluster, p, context, seed, {}, &share).rate;
    c.score = objective.serving_score(c);
}

}  // namespace

// Declarative table: the serving search's pruning rules, checked in order.
const std::vector<PruneRule<ServingPlan>>& serving_prune_rules() {
    using P = SearchPoint<ServingPlan>;
    static const std::vector<PruneRule<ServingPlan>> rules = {
        {"default-replicas-fit",
         "default replica counts stop at the cluster's GPUs (counts the section gives are kept, and pruned with the "
         "reason when they do not fit)",
         [](const P& x) {
             return !x.axis("search.replicas").given &&
                    x.integer("search.tp") * x.integer("search.pp") * x.integer("search.replicas") >
                        x.base.cluster.gpus();
         }},
    };
    return rules;
}

Crossed<ServingPlan> cross_serving_plans(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                         const ServingPlan& base, const SearchSpace& space, const Catalog& catalog,
                                         const std::vector<SearchKey>& keys, const CrossLimits& limits) {
    const SearchBase b{model, cluster, space, nullptr, &base, &catalog};
    return cross(
        aggregated_start(base), resolve_axes(keys, b, base), b, [](ServingPlan&, const SearchBase&) {},
        serving_prune_rules(), limits);
}

std::vector<ServingPlan> enumerate_serving_plans(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                                 const ServingPlan& base, const SearchSpace& space,
                                                 const Catalog& catalog) {
    return cross_serving_plans(model, cluster, base, space, catalog).plans;
}

ServingSearchResult search_serving(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                   const ServingPlan& base, const SearchSpace& space, const EvaluationContext& context,
                                   uint64_t seed, const SearchOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    if (!context.catalog) throw sim::InputError("a serving search needs the catalog in its evaluation context");
    ServingSearchResult result;
    const SearchBase b{model, cluster, space, nullptr, &base, context.catalog.get()};
    for (const SearchAxis<ServingPlan>& axis : resolve_axes(search_keys(), b, base))
        if (axis.key->info.path == "search.accelerator")
            result.priced = std::all_of(axis.values.begin(), axis.values.end(), [&](const KeyValue& id) {
                return price_of(space, std::get<std::string>(id)) > 0;
            });
    check_objective(space.objective, WorkloadKind::Serving, result.priced, base.slo.ttft_s > 0 || base.slo.tpot_s > 0);
    Crossed<ServingPlan> crossed = cross_serving_plans(model, cluster, base, space, *context.catalog, search_keys(),
                                                       enumeration_limits(options, start));
    result.truncation = enumeration_cut(crossed.full, crossed.timed_out, options);
    result.truncated = !result.truncation.empty();
    std::vector<ServingPlan>& plans = crossed.plans;
    auto& cs = result.candidates;
    cs.resize(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) {
        ServingCandidate& c = cs[i];
        c.index = static_cast<int64_t>(i);
        c.plan = std::move(plans[i]);
        c.layout = layout_of(c.plan);
        c.gpus = c.plan.gpus();
        c.usd_per_hour = price_of(space, c.plan.pools().front().layout->accelerator.id) * c.gpus;
    }
    // The candidates price iteration shapes once between them (pools of one shape share their costs).
    workloads::serving::IterationCostShare share;
    run_candidates(
        cs.size(), options, [&](size_t i) { evaluate_one(model, cluster, space, context, seed, share, cs[i]); }, start);
    finalize_serving_search(result, space);
    return result;
}

void finalize_serving_search(ServingSearchResult& result, const SearchSpace& space) {
    auto& cs = result.candidates;
    for (ServingCandidate& c : cs) c.pareto_cost = c.pareto_latency = false;
    tally_candidates(result);
    // Plans meeting the SLO target first where the objective says so; then by score; then by attainment.
    const ObjectiveRule& objective = objective_rule(space.objective);
    const bool slo_first = objective.slo_first;
    std::stable_sort(result.ranking.begin(), result.ranking.end(), [&](int64_t x, int64_t y) {
        const ServingCandidate& a = cs[static_cast<size_t>(x)];
        const ServingCandidate& b = cs[static_cast<size_t>(y)];
        if (slo_first && a.meets_slo() != b.meets_slo()) return a.meets_slo();
        if (slo_first && !a.meets_slo()) return a.slo_attainment > b.slo_attainment;
        return a.score > b.score;
    });
    const bool capacity = objective.measures_capacity;
    mark_pareto(
        cs, [&](const ServingCandidate& c) { return capacity ? c.capacity_requests_per_s : c.goodput_requests_per_s; },
        [&](const ServingCandidate& c) { return result.priced ? c.usd_per_hour : static_cast<double>(c.gpus); },
        &ServingCandidate::pareto_cost);
    mark_pareto(
        cs, [](const ServingCandidate& c) { return c.output_tokens_per_s; },
        [](const ServingCandidate& c) { return c.ttft_p90_s; }, &ServingCandidate::pareto_latency);
}

std::string encode_serving_search_share(const ServingSearchResult& result, const Partition& partition) {
    return encode_share(result.candidates, partition, serving_candidate_fields());
}

void merge_serving_search_share(ServingSearchResult& result, const std::string& share) {
    merge_share(result.candidates, share, serving_candidate_fields());
}

}  // namespace fathom::plans
