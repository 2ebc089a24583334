#include "plans/serving_search.h"

#include "plans/capacity.h"
#include "plans/catalog.h"
#include "plans/search_wire.h"
#include "sim/error.h"
#include "workloads/serving/serving_memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace fathom::plans {

using workloads::serving::Pool;
using workloads::serving::PoolLayout;
using workloads::serving::PoolRole;
using workloads::serving::ServingPlan;

namespace {

// The axes with their defaults filled in. Replicas: powers of two, then the most that fit, for the
// largest tp x pp tried (smaller replicas fill the cluster with more; enumerate() drops the counts
// a candidate's GPUs cannot hold).
SearchSpace with_defaults(const models::ModelSpec& m, const hardware::ClusterSpec& c, const ServingPlan& base,
                          SearchSpace s) {
    if (s.accelerator.empty()) s.accelerator = {c.accelerator.id};
    if (s.tp.empty())  // within a node, dividing the query heads (the plan checks ask the same of KV heads)
        for (int64_t d : divisors(c.gpus_per_node))
            if (m.heads % d == 0) s.tp.push_back(d);
    if (s.pp.empty()) s.pp = {1};
    if (s.replicas.empty()) {
        for (int64_t r = 1; r <= c.gpus(); r *= 2) s.replicas.push_back(r);
        if (s.replicas.back() != c.gpus()) s.replicas.push_back(c.gpus());
    }
    if (s.disaggregation.empty()) s.disaggregation = {"off"};
    if (s.policy.empty()) s.policy = {base.batching.policy};
    if (s.max_num_seqs.empty()) s.max_num_seqs = {base.batching.max_num_seqs};
    if (s.max_num_batched_tokens.empty()) s.max_num_batched_tokens = {base.batching.max_num_batched_tokens};
    return s;
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
                  const EvaluationContext& context, uint64_t seed, ServingCandidate& c) {
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
        const auto mem = workloads::serving::replica_memory(model, *pool.layout, p.kernels, p.kv, p.batching, p.engine);
        if (!mem.fits()) {
            c.status = CandidateStatus::OutOfMemory;
            c.reason = mem.why_not();
            return;
        }
        c.kv_tokens_per_replica = static_cast<double>(mem.kv_blocks) * static_cast<double>(p.kv.block_size);
    }
    Outcome o;
    try {
        o = evaluate_serving(model, cluster, p, context, seed);
    } catch (const sim::KvCapacityError& e) {
        c.status = CandidateStatus::OutOfMemory;
        c.reason = e.bare_message();
        return;
    } catch (const sim::InputError& e) {  // a layout the simulator cannot represent: pruned, the others go on
        c.status = CandidateStatus::Pruned;
        c.reason = e.bare_message();
        return;
    }
    if (!o.ok()) {
        c.status = CandidateStatus::Pruned;
        c.reason = describe(o.violations);
        return;
    }
    const auto& r = *o.serving();
    c.status = CandidateStatus::Evaluated;
    c.slo_attainment = r.slo_attainment;
    c.goodput_requests_per_s = r.goodput_requests_per_s;
    c.requests_per_s = r.requests_per_s;
    c.output_tokens_per_s = r.output_tokens_per_s;
    c.ttft_p50_s = r.ttft_s.p50;
    c.ttft_p90_s = r.ttft_s.p90;
    c.tpot_p50_s = r.tpot_s.p50;
    c.tpot_p90_s = r.tpot_s.p90;
    if (c.usd_per_hour > 0 && c.goodput_requests_per_s > 0)
        c.usd_per_1k_good_requests = c.usd_per_hour / 3600.0 / c.goodput_requests_per_s * 1000.0;
    if (first.accelerator.tdp > 0 && c.output_tokens_per_s > 0)
        c.joules_per_output_token = first.accelerator.tdp * c.gpus / c.output_tokens_per_s;
    const double g = static_cast<double>(c.gpus);
    if (space.objective == "capacity") {
        const CapacityResult cap = find_capacity(model, cluster, p, context, seed);
        c.capacity_requests_per_s = cap.rate;
        c.score = c.usd_per_hour > 0 ? cap.rate / c.usd_per_hour : cap.rate / g;
    } else if (space.objective == "throughput") {
        c.score = c.output_tokens_per_s / g;
    } else if (space.objective == "cost") {
        c.score =
            c.usd_per_1k_good_requests > 0 ? -c.usd_per_1k_good_requests : -std::numeric_limits<double>::infinity();
    } else {
        c.score = c.goodput_requests_per_s / g;
    }
}

}  // namespace

std::vector<ServingPlan> enumerate_serving_plans(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                                 const ServingPlan& base, const SearchSpace& space,
                                                 const Catalog& catalog) {
    const SearchSpace s = with_defaults(model, cluster, base, space);
    std::vector<ServingPlan> out;
    for (const std::string& id : s.accelerator) {
        const hardware::AcceleratorSpec& acc = catalog.accelerator(id);
        for (int64_t tp : s.tp)
            for (int64_t pp : s.pp)
                for (int64_t replicas : s.replicas) {
                    // Default replica counts stop at the cluster's GPUs; explicit ones are kept and
                    // pruned with the reason (check_serving_plan).
                    if (space.replicas.empty() && tp * pp * replicas > cluster.gpus()) continue;
                    PoolLayout pool = *base.pools().back().layout;  // the decoding pool's settings
                    pool.tp = static_cast<int>(tp);
                    pool.pp = static_cast<int>(pp);
                    pool.accelerator_id = id == cluster.accelerator.id ? std::string() : id;
                    pool.accelerator = acc;
                    std::vector<int64_t> splits;  // prefill replicas; 0 = aggregated
                    for (const std::string& d : s.disaggregation) {
                        if (d == "off") splits.push_back(0);
                        else
                            for (int64_t x = 1; x < replicas; ++x) splits.push_back(x);
                    }
                    for (int64_t x : splits)
                        for (const std::string& policy : s.policy)
                            for (int64_t seqs : s.max_num_seqs)
                                for (int64_t tokens : s.max_num_batched_tokens) {
                                    ServingPlan p = base;
                                    if (x == 0) {
                                        p.prefill.reset();
                                        p.decode.reset();
                                        p.isolate = workloads::serving::PoolIsolation::None;
                                        p.replica = pool;
                                        p.replica.replicas = static_cast<int>(replicas);
                                    } else {
                                        p.prefill = pool;
                                        p.prefill->replicas = static_cast<int>(x);
                                        p.decode = pool;
                                        p.decode->replicas = static_cast<int>(replicas - x);
                                    }
                                    p.batching.policy = policy;
                                    p.batching.max_num_seqs = seqs;
                                    p.batching.max_num_batched_tokens = tokens;
                                    out.push_back(std::move(p));
                                }
                }
    }
    return out;
}

ServingSearchResult search_serving(const models::ModelSpec& model, const hardware::ClusterSpec& cluster,
                                   const ServingPlan& base, const SearchSpace& space, const EvaluationContext& context,
                                   uint64_t seed, const SearchOptions& options) {
    if (!context.catalog) throw sim::InputError("a serving search needs the catalog in its evaluation context");
    ServingSearchResult result;
    const SearchSpace filled = with_defaults(model, cluster, base, space);
    result.priced = std::all_of(filled.accelerator.begin(), filled.accelerator.end(),
                                [&](const std::string& id) { return price_of(space, id) > 0; });
    if (space.objective == "cost" && !result.priced)
        throw sim::InputError(
            "ranking by cost needs a price for every device type (search.price_per_gpu_hour or search.prices)", "", 0,
            "search.objective");
    if (base.slo.ttft_s <= 0 && base.slo.tpot_s <= 0 && space.objective != "throughput")
        throw sim::InputError(
            "ranking serving plans by " + space.objective + " needs an SLO: set slo.ttft and/or slo.tpot", "", 0,
            "slo");
    std::vector<ServingPlan> plans = enumerate_serving_plans(model, cluster, base, space, *context.catalog);
    if (options.max_candidates > 0 && static_cast<int64_t>(plans.size()) > options.max_candidates) {
        plans.resize(static_cast<size_t>(options.max_candidates));
        result.truncated = true;
    }
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
    run_candidates(cs.size(), options, [&](size_t i) { evaluate_one(model, cluster, space, context, seed, cs[i]); });
    finalize_serving_search(result, space);
    return result;
}

void finalize_serving_search(ServingSearchResult& result, const SearchSpace& space) {
    auto& cs = result.candidates;
    for (ServingCandidate& c : cs) c.pareto_cost = c.pareto_latency = false;
    tally_candidates(result);
    // Plans meeting the SLO target first under goodput and cost; then by score; then by attainment.
    const bool slo_first = space.objective == "goodput" || space.objective == "cost";
    std::stable_sort(result.ranking.begin(), result.ranking.end(), [&](int64_t x, int64_t y) {
        const ServingCandidate& a = cs[static_cast<size_t>(x)];
        const ServingCandidate& b = cs[static_cast<size_t>(y)];
        if (slo_first && a.meets_slo() != b.meets_slo()) return a.meets_slo();
        if (slo_first && !a.meets_slo()) return a.slo_attainment > b.slo_attainment;
        return a.score > b.score;
    });
    const bool capacity = space.objective == "capacity";
    mark_pareto(
        cs, [&](const ServingCandidate& c) { return capacity ? c.capacity_requests_per_s : c.goodput_requests_per_s; },
        [&](const ServingCandidate& c) { return result.priced ? c.usd_per_hour : static_cast<double>(c.gpus); },
        &ServingCandidate::pareto_cost);
    mark_pareto(
        cs, [](const ServingCandidate& c) { return c.output_tokens_per_s; },
        [](const ServingCandidate& c) { return c.ttft_p90_s; }, &ServingCandidate::pareto_latency);
}

namespace {
std::vector<double*> share_numbers(ServingCandidate& c) {
    return {&c.kv_tokens_per_replica,
            &c.slo_attainment,
            &c.goodput_requests_per_s,
            &c.requests_per_s,
            &c.output_tokens_per_s,
            &c.ttft_p50_s,
            &c.ttft_p90_s,
            &c.tpot_p50_s,
            &c.tpot_p90_s,
            &c.usd_per_1k_good_requests,
            &c.joules_per_output_token,
            &c.capacity_requests_per_s,
            &c.score};
}
}  // namespace

std::string encode_serving_search_share(const ServingSearchResult& result, const Partition& partition) {
    return encode_share(result.candidates, partition, share_numbers);
}

void merge_serving_search_share(ServingSearchResult& result, const std::string& share) {
    merge_share(result.candidates, share, share_numbers);
}

}  // namespace fathom::plans
